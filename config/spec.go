package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"gopkg.in/ini.v1"
)

// SpecSectionPrefix starts the name of every INI section that defines an
// llm_query specialization; the rest of the name is the tool's name.
const SpecSectionPrefix = "llm_tool_"

// maxSpecFileSize bounds a specializations file.
const maxSpecFileSize = 1 << 20

// Specialization is one [llm_tool_<name>] section: a tool that behaves
// like llm_query with a fixed session, skill and system prompt patch.
type Specialization struct {
	ToolName          string // <name> of [llm_tool_<name>]
	SystemPromptPatch string
	SessionID         string
	// SkillName is the skill as written; Skill is what it resolved to.
	SkillName string
	Skill     *Skill
	// ContextWindow is how many earlier exchanges of the session are
	// replayed; 0 (also when absent) means all of them.
	ContextWindow int
	Section       string // the section name, "llm_tool_<name>"
	Line          int    // line of the section header
}

// SpecOptions tune the specialization loader.
type SpecOptions struct {
	// Reserved reports whether a tool name belongs to a built-in tool
	// (file and shell tools, ...). The delegation tools llm_query,
	// ask_user, subagent and call_agent are always reserved.
	Reserved func(name string) bool
	// SkillDirs are searched for skills by name (see ResolveSkill); a
	// skill path is first taken relative to the INI file.
	SkillDirs []string
}

// alwaysReserved are the tools deputy itself defines around delegation.
var alwaysReserved = map[string]bool{"llm_query": true, "ask_user": true, "subagent": true, "call_agent": true}

var specKeys = map[string]bool{"system_prompt_patch": true, "session_id": true, "skill": true, "context_window": true}

// The required keys, in the order they are reported when missing.
var specRequired = []string{"system_prompt_patch", "session_id", "skill"}

// iniLoadOptions keep values whole: a '#' or ';' inside a value is text, a
// trailing '\' is text, '=' is the only delimiter, and repeated sections
// stay apart (ini.v1 would merge them) so that duplicates can be reported.
var iniLoadOptions = ini.LoadOptions{
	IgnoreInlineComment:    true,
	IgnoreContinuation:     true,
	AllowShadows:           false,
	AllowNonUniqueSections: true,
	KeyValueDelimiters:     "=",
}

// LoadSpecializations reads the [llm_tool_*] sections of the INI file at
// path. See ParseSpecializations.
func LoadSpecializations(path string, opts SpecOptions) ([]Specialization, error) {
	data, err := readLimited(path, maxSpecFileSize)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return ParseSpecializations(data, path, opts)
}

// ParseSpecializations reads the [llm_tool_*] sections of an INI document;
// other sections are ignored, since other configuration may share the
// file. file names the document in messages and is the base of relative
// skill paths. Every problem is collected: the error is then a
// *ValidationError listing each on its own line as
// "FILE:LINE: [section]: problem", and no specializations are returned.
// The same input always gives the same result.
func ParseSpecializations(data []byte, file string, opts SpecOptions) ([]Specialization, error) {
	sink := &diagSink{file: file}
	scanned, errLine := iniScan(string(data))
	f, err := ini.LoadSources(iniLoadOptions, data)
	if err != nil {
		sink.errorf(errLine, "", "invalid INI: %s", strings.TrimSpace(err.Error()))
		return nil, sink.diags.Err()
	}
	// ini.v1 lists its implicit DEFAULT section first, then every header
	// in file order, as iniScan does.
	sections := f.Sections()[1:]
	if len(sections) != len(scanned) {
		scanned = nil // cannot happen by construction; lines are then unknown
	}

	baseDir := ""
	if file != "" {
		baseDir = filepath.Dir(file)
	}
	var out []Specialization
	firstLine := map[string]int{}
	for i, sec := range sections {
		var sc iniSection
		if scanned != nil {
			sc = scanned[i]
		}
		name := sec.Name()
		if !strings.HasPrefix(name, SpecSectionPrefix) {
			continue
		}
		label := "[" + name + "]: "
		if first, dup := firstLine[name]; dup {
			if first > 0 {
				sink.errorf(sc.line, "", "%sduplicate section (first defined at line %d)", label, first)
			} else {
				sink.errorf(sc.line, "", "%sduplicate section", label)
			}
			continue
		}
		firstLine[name] = sc.line
		sp, ok := parseSpecSection(sink, sec, sc, label, baseDir, opts)
		if ok {
			out = append(out, sp)
		}
	}
	if err := sink.diags.Sorted().Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func parseSpecSection(sink *diagSink, sec *ini.Section, sc iniSection, label, baseDir string, opts SpecOptions) (Specialization, bool) {
	before := len(sink.diags)
	name := sec.Name()
	tool := strings.TrimPrefix(name, SpecSectionPrefix)
	switch {
	case tool == "":
		sink.errorf(sc.line, "", "%sempty tool name", label)
	case !validToolName(tool):
		sink.errorf(sc.line, "", "%s%q is not a valid tool name (letters, digits, '_' and '-', at most 64 characters)", label, tool)
	case alwaysReserved[tool] || (opts.Reserved != nil && opts.Reserved(tool)):
		sink.errorf(sc.line, "", "%stool name %q collides with a built-in tool", label, tool)
	}

	keyLine := func(k string) int {
		for _, key := range sc.keys {
			if key.name == k {
				return key.line
			}
		}
		return 0
	}
	seen := map[string]int{}
	for _, key := range sc.keys {
		if first, dup := seen[key.name]; dup && specKeys[key.name] {
			sink.errorf(key.line, "", "%sduplicate key %q (first defined at line %d)", label, key.name, first)
		} else if !dup {
			seen[key.name] = key.line
		}
	}
	for _, k := range sec.Keys() {
		if !specKeys[k.Name()] {
			sink.errorf(keyLine(k.Name()), "", "%sunknown key %q", label, k.Name())
		}
	}

	sp := Specialization{ToolName: tool, Section: name, Line: sc.line}
	values := map[string]string{}
	for _, k := range specRequired {
		if !ownKey(sec, k) {
			sink.errorf(sc.line, "", "%smissing required key %q", label, k)
			continue
		}
		v := strings.TrimSpace(sec.Key(k).Value())
		if v == "" {
			sink.errorf(keyLine(k), "", "%skey %q must not be empty", label, k)
			continue
		}
		values[k] = v
	}
	sp.SystemPromptPatch = values["system_prompt_patch"]
	sp.SessionID = values["session_id"]
	sp.SkillName = values["skill"]

	if ownKey(sec, "context_window") {
		raw := sec.Key("context_window").Value()
		n, err := strconv.Atoi(strings.TrimSpace(raw))
		if err != nil || n < 0 {
			sink.errorf(keyLine("context_window"), "", "%scontext_window must be a non-negative integer, got %q", label, raw)
		} else {
			sp.ContextWindow = n
		}
	}

	if sp.SkillName != "" {
		s, err := ResolveSkill(sp.SkillName, baseDir, opts.SkillDirs)
		var nf *SkillNotFoundError
		switch {
		case errors.As(err, &nf):
			sink.errorf(keyLine("skill"), "", "%s%s", label, nf.Error())
		case err != nil:
			sink.errorf(keyLine("skill"), "", "%sskill %q: %s", label, sp.SkillName, err.Error())
		default:
			sp.Skill = s
		}
	}
	return sp, len(sink.diags) == before
}

// ownKey reports whether key is written in sec itself; ini.v1's HasKey
// also looks in parent sections ([a] for [a.b]).
func ownKey(sec *ini.Section, key string) bool {
	for _, k := range sec.KeyStrings() {
		if k == key {
			return true
		}
	}
	return false
}

// validToolName: what every provider accepts as a function name.
func validToolName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

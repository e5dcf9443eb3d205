// Package slop reads std::slop's INI files: the [llm_tool_<name>]
// sections that define llm_query specializations
// (config.Specialization), read the way std::slop's own ParseIni reads
// them (see ini.go).
package slop

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/internal/osfile"
	"github.com/deputyhq/deputy/config/internal/text"
)

// SectionPrefix starts the name of every INI section that defines an
// llm_query specialization; the rest of the name is the tool's name.
const SectionPrefix = "llm_tool_"

// maxSpecFileSize bounds a specializations file.
const maxSpecFileSize = 1 << 20

// Options tune the specialization loader.
type Options struct {
	// Reserved reports whether a tool name belongs to a built-in tool
	// (file and shell tools, ...). The delegation tools llm_query,
	// ask_user, subagent and call_agent are always reserved.
	Reserved func(name string) bool
	// SkillDirs are searched for skills by name (see ResolveSkill); a
	// skill path is first taken relative to the INI file.
	SkillDirs []string
	// LookupEnv expands ${VAR} and $VAR in values; nil means os.LookupEnv.
	LookupEnv func(name string) (string, bool)
	// Warn receives each warning (a near-miss section name, an unknown
	// key, an unset variable); nil drops them.
	Warn func(config.Diagnostic)
}

// alwaysReserved are the tools deputy itself defines around delegation.
var alwaysReserved = map[string]bool{"llm_query": true, "ask_user": true, "subagent": true, "call_agent": true}

var specKeys = map[string]bool{"system_prompt_patch": true, "session_id": true, "skill": true, "context_window": true}

// specKeyHint names the key an unknown one was likely meant to be: the
// same but for case or '-' for '_'; "" when none.
func specKeyHint(name string) string {
	n := strings.ReplaceAll(strings.ToLower(name), "-", "_")
	if specKeys[n] {
		return fmt.Sprintf(" (keys are exact: did you mean %q?)", n)
	}
	return ""
}

// The required keys, in the order they are reported when missing.
var specRequired = []string{"system_prompt_patch", "session_id", "skill"}

// Load reads the [llm_tool_*] sections of the INI file at path. See
// Parse.
func Load(path string, opts Options) ([]config.Specialization, error) {
	data, err := osfile.Read(path, maxSpecFileSize)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return Parse(data, path, opts)
}

// specToolName returns the tool a section registers: "<name>" for
// [llm_tool_<name>] and for std::slop's earlier spelling [llm_tool.<name>],
// trimmed as std::slop trims it ([llm_tool_ x] is tool x).
func specToolName(section string) (string, bool) {
	t, ok := strings.CutPrefix(section, SectionPrefix)
	if !ok {
		t, ok = strings.CutPrefix(section, sectionPrefixDot)
	}
	return strings.TrimSpace(t), ok
}

// warnStrays warns about the lines std::slop skips where they matter: in
// a specialization section, and a '[' never closed that looks like one's
// header (its lines then stay in the section before it, as in std::slop).
func warnStrays(sink *config.Sink, sections []iniSection, strays []iniStray) {
	for _, st := range strays {
		label, inSpec := "", false
		if st.section >= 0 {
			sc := sections[st.section]
			label = "[" + sc.name + "]: "
			_, inSpec = specToolName(sc.name)
			if st.line == sc.line {
				if inSpec {
					sink.Warnf(st.line, "", "%stext after the section header is ignored", label)
				}
				continue
			}
		}
		if head, ok := strings.CutPrefix(st.text, "["); ok && (inSpec || nearMissSpec(head)) {
			sink.Warnf(st.line, "", "%s%s is not a section header (no closing ']'); skipped", label, text.Clip(st.text, 60))
		} else if inSpec {
			sink.Warnf(st.line, "", "%sline is not \"key = value\"; skipped: %s", label, text.Clip(st.text, 60))
		}
	}
}

// sectionPrefixDot is std::slop's earlier spelling of SectionPrefix.
const sectionPrefixDot = "llm_tool."

// nearMissSpec reports whether a section that registers nothing looks
// meant to: another case, blanks around the name, or '-' for '_'.
func nearMissSpec(section string) bool {
	n := strings.ToLower(strings.TrimSpace(section))
	n = strings.ReplaceAll(n, "-", "_")
	return strings.HasPrefix(n, SectionPrefix) || strings.HasPrefix(n, sectionPrefixDot)
}

// Parse reads the [llm_tool_*] sections (and std::slop's
// earlier [llm_tool.*]) of an INI document, read by std::slop's rules (see
// ini.go); other sections are ignored, since other configuration may share
// the file. file names the document in messages and is the base of
// relative skill paths. Every problem is collected: the error is then a
// *ValidationError listing each on its own line as
// "FILE:LINE: [section]: problem", and no specializations are returned.
// What std::slop accepts is accepted, with a warning where it is likely a
// slip: a near-miss section name, an unknown key (std::slop ignores it
// too), a key set twice (the last value wins, as in std::slop), a line
// that is not key = value (skipped, as in std::slop), an unset variable.
// Warnings go to opts.Warn. The same input always
// gives the same result.
func Parse(data []byte, file string, opts Options) ([]config.Specialization, error) {
	sink := &config.Sink{File: file}
	sections, strays := parseINI(string(data))
	warnStrays(sink, sections, strays)
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}

	baseDir := ""
	if file != "" {
		baseDir = filepath.Dir(file)
	}
	var out []config.Specialization
	firstLine := map[string]int{} // tool name -> line of its first section
	for _, sc := range sections {
		label := "[" + sc.name + "]: "
		tool, ok := specToolName(sc.name)
		if !ok {
			if nearMissSpec(sc.name) {
				sink.Warnf(sc.line, "", "%slooks like a specialization but is not one (section names are exact: write [%s%s]); ignored",
					label, SectionPrefix, strings.TrimSpace(sc.name)[len(SectionPrefix):])
			}
			continue
		}
		if first, dup := firstLine[tool]; dup {
			sink.Errorf(sc.line, "", "%sduplicate section (first defined at line %d)", label, first)
			continue
		}
		firstLine[tool] = sc.line
		sp, ok := parseSpecSection(sink, sc, tool, label, baseDir, opts, lookup)
		if ok {
			out = append(out, sp)
		}
	}
	diags := sink.Diags.Sorted()
	if opts.Warn != nil {
		for _, d := range diags.Warnings() {
			opts.Warn(d)
		}
	}
	if err := diags.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

func parseSpecSection(sink *config.Sink, sc iniSection, tool, label, baseDir string, opts Options, lookup func(string) (string, bool)) (config.Specialization, bool) {
	before := len(sink.Diags.Errors())
	switch {
	case tool == "":
		sink.Errorf(sc.line, "", "%sempty tool name", label)
	case !validToolName(tool):
		sink.Errorf(sc.line, "", "%s%q is not a valid tool name (letters, digits, '_' and '-', at most 64 characters)", label, tool)
	case alwaysReserved[tool] || (opts.Reserved != nil && opts.Reserved(tool)):
		sink.Errorf(sc.line, "", "%stool name %q collides with a built-in tool", label, tool)
	}

	keys := map[string]iniKey{}
	unknown := map[string]bool{}
	for _, key := range sc.keys {
		if !specKeys[key.name] {
			// std::slop's loader reads only the keys it knows and
			// ignores the rest, so a file it loads must load here: one
			// warning for each unknown key, never an error.
			if !unknown[key.name] {
				unknown[key.name] = true
				sink.Warnf(key.line, "", "%sunknown key %q; ignored%s", label, key.name, specKeyHint(key.name))
			}
			continue
		}
		// std::slop keeps a repeated key's last value; so does deputy,
		// but a repeat is likely a slip, so it is named.
		if prev, dup := keys[key.name]; dup {
			sink.Warnf(key.line, "", "%skey %q is also set at line %d; the last value wins, line %d ignored", label, key.name, prev.line, prev.line)
		}
		keys[key.name] = key
	}
	value := func(k string) string {
		key := keys[k]
		v := key.value
		if !key.literal {
			var unset []string
			v, unset = expandINIValue(v, lookup)
			for _, name := range unset {
				sink.Warnf(key.line, "", "%s%s: $%s is not set; it expands to nothing", label, k, name)
			}
		}
		// A file in another encoding (Latin-1 "Caf\xe9") would reach
		// the model with each bad byte silently replaced when the request
		// is encoded (std::slop's JSON encoder does the same): replace
		// them here, once, so the ledger and the model see one text, and
		// say so.
		if !utf8.ValidString(v) {
			sink.Warnf(key.line, "", "%s%s is not valid UTF-8; each invalid byte sequence is read as U+FFFD (save the file as UTF-8)", label, k)
			v = strings.ToValidUTF8(v, "\uFFFD")
		}
		return v
	}

	sp := config.Specialization{ToolName: tool, Section: sc.name, Line: sc.line}
	values := map[string]string{}
	for _, k := range specRequired {
		if _, ok := keys[k]; !ok {
			sink.Errorf(sc.line, "", "%smissing required key %q", label, k)
			continue
		}
		v := strings.TrimSpace(value(k))
		if v == "" {
			sink.Errorf(keys[k].line, "", "%skey %q must not be empty", label, k)
			continue
		}
		values[k] = v
	}
	sp.SystemPromptPatch = values["system_prompt_patch"]
	sp.SessionID = values["session_id"]
	sp.SkillName = values["skill"]

	if key, ok := keys["context_window"]; ok {
		raw := value("context_window")
		n, err := strconv.Atoi(strings.TrimSpace(raw))
		if err != nil || n < 0 {
			sink.Errorf(key.line, "", "%scontext_window must be a non-negative integer, got %q", label, raw)
		} else {
			sp.ContextWindow = n
		}
	}

	if sp.SkillName != "" {
		s, err := config.ResolveSkill(sp.SkillName, baseDir, opts.SkillDirs)
		switch {
		case errors.Is(err, config.ErrSkillNotFound):
			sink.Errorf(keys["skill"].line, "", "%s%s", label, err.Error())
		case err != nil:
			sink.Errorf(keys["skill"].line, "", "%sskill %q: %s", label, sp.SkillName, err.Error())
		default:
			sp.Skill = s
		}
	}
	return sp, len(sink.Diags.Errors()) == before
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

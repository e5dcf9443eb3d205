package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/deputyhq/deputy/config/internal/osfile"
	"github.com/deputyhq/deputy/config/internal/text"
)

// maxAgentFileSize bounds an agent definition file.
const maxAgentFileSize = 1 << 20

// LoadOptions tune LoadAgents and LoadAgentFile.
type LoadOptions struct {
	// SkillDirs are searched for skills named by a bare name or by a path
	// relative to a config directory (see ResolveSkill).
	SkillDirs []string
	// SkillBase is where a relative skill path starts first; "" is the
	// agent file's directory. (axe starts at its configuration directory.)
	SkillBase string
	// TOML and Markdown are the dialects agent files of each format are
	// read in; nil reads deputy's keys only.
	TOML, Markdown *Dialect
	// Name is the agent's name when its file names none (a role Codex's
	// config.toml declares under a name); "" makes the name required.
	Name string
	// InDirectory says the file was found in an agent directory rather
	// than named: a Markdown file without front matter there is a README,
	// skipped with a warning, not an error. LoadAgents sets it.
	InDirectory bool
}

// Dir is one directory agent definitions are loaded from.
type Dir struct {
	Path string
	// Source says where the directory is (SourceUser, SourceProject,
	// SourceFlag, or an origin tool's: "axe", "claude", ...); it becomes
	// Agent.Source of its agents.
	Source string
	// Origin reads the directory's files the way their tool does; nil
	// reads deputy's own: the *.toml and *.md files directly inside Path,
	// with LoadAgentFile.
	Origin Origin
}

// An Origin is how one tool keeps agent files in a directory. Load reads
// one of them (usually through LoadAgentFile, in the tool's dialect) and
// returns the agents it defines: one for an agent file, several for a
// settings file with an agents section (opencode.json), none for a file
// that defines no agent (then an error diagnostic says why, or a warning
// says why it is left out).
//
// An Origin may also have the method
//
//	Files(dir string) ([]string, Diagnostics, error)
//
// listing the agent files of dir in load order (a missing directory is an
// error matching fs.ErrNotExist), when they are not only the files directly
// inside; and the method
//
//	Duplicate(d Dir, a *Agent, path, first string) Diagnostic
//
// saying what a second file of the directory defining the name of the
// agent in first is, when that is not deputy's error.
type Origin interface {
	Load(path, source string, opts LoadOptions) ([]*Agent, Diagnostics)
}

// The optional methods of an Origin.
type (
	fileLister interface {
		Files(dir string) ([]string, Diagnostics, error)
	}
	duplicateJudge interface {
		Duplicate(d Dir, a *Agent, path, first string) Diagnostic
	}
)

// LoadAgents loads the agent files of dirs: by default the *.toml and *.md
// files directly inside each, or those its Origin lists. dirs are in
// precedence order, lowest first: a later definition of a name shadows an
// earlier one, and the set remembers what was shadowed. A missing
// directory is skipped silently.
//
// A file that does not parse, or names no agent, produces an error
// diagnostic and is skipped; every other problem is reported but the agent
// is still loaded, so `agents list` can show it next to its diagnostics.
// Callers that run an agent must refuse one with errors
// (Diagnostics.ForFile(agent.Path).HasErrors()).
func LoadAgents(dirs []Dir, opts LoadOptions) (*AgentSet, Diagnostics) {
	set := NewAgentSet()
	var diags Diagnostics
	opts.InDirectory = true
	for _, d := range dirs {
		paths, ds, err := d.files()
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				diags = append(diags, Diagnostic{File: d.Path, Severity: Error, Message: "cannot read agent directory: " + osfile.ErrText(err)})
			}
			continue
		}
		diags = append(diags, ds...)
		inDir := map[string]string{} // agent name -> file, within this directory
		for _, path := range paths {
			agents, ds := d.load(path, opts)
			if len(agents) == 0 {
				diags = append(diags, ds...)
				if ds.HasErrors() {
					set.addBroken(BrokenFile{Path: path, Source: d.Source, Diagnostics: ds})
				}
				continue
			}
			kept := false
			for _, a := range agents {
				if a.Disabled != "" {
					diags = append(diags, Diagnostic{File: a.Path, Severity: Warning,
						Message: fmt.Sprintf("agent %q is left out: %s", a.Name, a.Disabled)})
					continue
				}
				if first, dup := inDir[a.Name]; dup {
					// The agent is ignored: what else its file says of it
					// does not matter.
					diags = append(diags, d.duplicate(a, path, first))
					continue
				}
				kept = true
				inDir[a.Name] = path
				set.Add(a)
			}
			if kept {
				diags = append(diags, ds...)
			}
		}
	}
	return set, append(diags, resolveOptional(set)...)
}

func (d Dir) files() ([]string, Diagnostics, error) {
	if l, ok := d.Origin.(fileLister); ok {
		return l.Files(d.Path)
	}
	paths, err := agentFiles(d.Path)
	return paths, nil, err
}

func (d Dir) load(path string, opts LoadOptions) ([]*Agent, Diagnostics) {
	if d.Origin != nil {
		return d.Origin.Load(path, d.Source, opts)
	}
	a, diags := LoadAgentFile(path, d.Source, opts)
	if a == nil {
		return nil, diags
	}
	return []*Agent{a}, diags
}

// duplicate is the diagnostic of an agent file whose name another file of
// the same directory defines: an error, unless the origin says otherwise.
func (d Dir) duplicate(a *Agent, path, first string) Diagnostic {
	if j, ok := d.Origin.(duplicateJudge); ok {
		return j.Duplicate(d, a, path, first)
	}
	rel, err := filepath.Rel(d.Path, first)
	if err != nil {
		rel = first
	}
	return Diagnostic{File: path, Line: a.KeyLine("name"), Key: "name", Severity: Error,
		Message: fmt.Sprintf("agent %q is already defined in %s in the same directory; this file is ignored", a.Name, rel)}
}

// resolveOptional leaves out of each agent's Subagents the optional ones
// (Agent.Optional) that no file defines, with a warning for each file:
// the origin tool cannot spawn them either, and it runs the agent all the
// same (sub_agents naming an unknown agent stays an error). It adds the
// agents Optional.Patterns match.
func resolveOptional(set *AgentSet) Diagnostics {
	var diags Diagnostics
	all := set.List()
	for _, a := range all {
		for _, b := range all {
			if b != a && b.Source == a.Source && !slices.Contains(a.Subagents, b.Name) &&
				slices.ContainsFunc(a.Optional.Patterns, func(p string) bool { ok, _ := path.Match(p, b.Name); return ok }) {
				a.Subagents = append(a.Subagents, b.Name)
			}
		}
	}
	for _, a := range all {
		var unknown []string
		for _, n := range a.Optional.Names {
			if _, ok := set.Get(n); !ok {
				unknown = append(unknown, n)
			}
		}
		if len(unknown) == 0 {
			continue
		}
		a.Subagents = slices.DeleteFunc(a.Subagents, func(n string) bool { return slices.Contains(unknown, n) })
		sink := &Sink{File: a.Path}
		sink.Warnf(a.KeyLine(a.Optional.Key), a.Optional.Key, "%s names %s, which no agent file defines; left out", a.Optional.Form, text.QuoteList(unknown))
		diags = append(diags, sink.Diags...)
	}
	return diags
}

// LoadAgentFile loads one agent file (.toml or .md), read in the dialect
// opts gives its format, and resolves its skills. source is recorded as
// Agent.Source. The agent is nil when the file could not be read or
// parsed, or names no agent.
func LoadAgentFile(path, source string, opts LoadOptions) (*Agent, Diagnostics) {
	data, err := osfile.Read(path, maxAgentFileSize)
	if err != nil {
		return nil, Diagnostics{{File: path, Severity: Error, Message: "cannot read agent file: " + osfile.ErrText(err)}}
	}
	var (
		a     *Agent
		diags Diagnostics
	)
	switch strings.ToLower(filepath.Ext(path)) {
	case ".toml":
		a, diags = opts.TOML.parseTOML(data, path, opts.Name)
	case ".md":
		// A directory of agents may hold a README; only files that start
		// with front matter are agents.
		if _, _, _, has, _ := splitFrontMatter(string(data)); !has && opts.InDirectory {
			return nil, Diagnostics{{File: path, Severity: Warning, Message: "no front matter, so not an agent; skipped"}}
		}
		a, diags = opts.Markdown.parseMarkdown(data, path, opts.Name)
	default:
		return nil, Diagnostics{{File: path, Severity: Error, Message: "agent files end in .toml or .md"}}
	}
	if a == nil {
		return nil, diags
	}
	a.Source = source
	skillBase := opts.SkillBase
	if skillBase == "" {
		skillBase = filepath.Dir(path)
	}
	if a.Skill != "" {
		s, err := ResolveSkill(a.Skill, skillBase, opts.SkillDirs)
		if err != nil {
			diags = append(diags, Diagnostic{File: path, Line: a.KeyLine("skill"), Key: "skill", Severity: Error, Message: err.Error()})
		} else {
			a.SkillDoc = s
		}
	}
	diags = append(diags, preloadSkills(a, skillBase, opts.SkillDirs)...)
	return a, diags
}

// preloadSkills adds the text of a Claude Code agent's skills to its
// SkillDoc, after its skill's, as Claude Code puts each skill's whole text
// into the agent's context. A skill that cannot be found is left out with
// a warning: the agent still runs, without it.
func preloadSkills(a *Agent, base string, dirs []string) Diagnostics {
	var diags Diagnostics
	for _, name := range a.Skills {
		s, err := ResolveSkill(name, base, dirs)
		if err != nil {
			diags = append(diags, Diagnostic{File: a.Path, Line: a.KeyLine("skills"), Key: "skills", Severity: Warning,
				Message: err.Error() + "; the agent runs without it"})
			continue
		}
		if a.SkillDoc == nil {
			a.SkillDoc = s
			continue
		}
		doc := *a.SkillDoc
		doc.Name += ", " + s.Name
		doc.Body = strings.TrimSpace(doc.Body) + "\n\n" + strings.TrimSpace(s.Body)
		a.SkillDoc = &doc
	}
	return diags
}

// agentFiles lists the *.toml and *.md files directly inside dir, in name
// order: the agent files of one of deputy's directories (and axe's).
func agentFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir) // sorted by file name
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		if osfile.IsDir(path, e) {
			continue
		}
		if ext := strings.ToLower(filepath.Ext(e.Name())); ext == ".md" || ext == ".toml" {
			paths = append(paths, path)
		}
	}
	return paths, nil
}

package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// maxAgentFileSize bounds an agent definition file.
const maxAgentFileSize = 1 << 20

// LoadOptions tune LoadAgents and LoadAgentFile.
type LoadOptions struct {
	// SkillDirs are searched for skills named by a bare name or by a path
	// relative to a config directory (see ResolveSkill); usually
	// SkillDirs(cwd).
	SkillDirs []string
}

// LoadAgents loads every *.toml and *.md file directly inside dirs, and the
// *.md files of the subdirectories of Claude Code's (see agentFiles). dirs are
// in precedence order, lowest first (as Dirs returns them): a later
// definition of a name shadows an earlier one, and the set remembers what
// was shadowed. A missing directory is skipped silently.
//
// A file that does not parse, or names no agent, produces an error
// diagnostic and is skipped; every other problem is reported but the agent
// is still loaded, so `agents list` can show it next to its diagnostics.
// Callers that run an agent must refuse one with errors
// (Diagnostics.ForFile(agent.Path).HasErrors()).
func LoadAgents(dirs []Dir, opts LoadOptions) (*AgentSet, Diagnostics) {
	set := NewAgentSet()
	var diags Diagnostics
	for _, d := range dirs {
		paths, ds, err := agentFiles(d)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				diags = append(diags, Diagnostic{File: d.Path, Severity: Error, Message: "cannot read agent directory: " + pathErrText(err)})
			}
			continue
		}
		diags = append(diags, ds...)
		inDir := map[string]string{} // agent name -> file, within this directory
		for _, path := range paths {
			a, ds := loadAgentFile(path, d.Source, opts, true)
			if a == nil {
				diags = append(diags, ds...)
				if ds.HasErrors() {
					set.addBroken(BrokenFile{Path: path, Source: d.Source, Diagnostics: ds})
				}
				continue
			}
			if first, dup := inDir[a.Name]; dup {
				// The file is ignored: what else it holds does not matter.
				diags = append(diags, duplicateName(d, a, path, first))
				continue
			}
			diags = append(diags, ds...)
			inDir[a.Name] = path
			set.Add(a)
		}
	}
	return set, append(diags, dropUnknownSpawns(set)...)
}

// dropUnknownSpawns leaves out of each Claude Code agent's SubAgents the
// agents its tools name in Agent(...) that no file defines, with a warning
// for each file: Claude Code cannot spawn them either, and it runs the
// agent all the same (sub_agents naming an unknown agent stays an error).
func dropUnknownSpawns(set *AgentSet) Diagnostics {
	var diags Diagnostics
	for _, a := range set.List() {
		var unknown []string
		for _, n := range a.spawnTools {
			if _, ok := set.Get(n); !ok {
				unknown = append(unknown, n)
			}
		}
		if len(unknown) == 0 {
			continue
		}
		a.SubAgents = slices.DeleteFunc(a.SubAgents, func(n string) bool { return slices.Contains(unknown, n) })
		sink := &diagSink{file: a.Path}
		sink.warnf(a.KeyLine("tools"), "tools", "Agent(...) names %s, which no agent file defines; left out", quoteList(unknown))
		diags = append(diags, sink.diags...)
	}
	return diags
}

// maxClaudeDepth bounds how deep LoadAgents looks below a Claude Code
// agents directory; it also ends a loop of symbolic links.
const maxClaudeDepth = 8

// agentFiles lists the *.toml and *.md files of d in name order. Claude
// Code also finds agents in the subdirectories of its agents directories
// (collections are installed by cloning them into ~/.claude/agents/NAME),
// so a Claude directory is read whole, each directory's files before its
// subdirectories, hidden ones (.git) left out, symbolic links followed. A
// subdirectory that cannot be read is a warning.
func agentFiles(d Dir) ([]string, Diagnostics, error) {
	var (
		paths []string
		diags Diagnostics
	)
	var walk func(dir string, depth int) error
	walk = func(dir string, depth int) error {
		entries, err := os.ReadDir(dir) // sorted by file name
		if err != nil {
			return err
		}
		var subdirs []string
		for _, e := range entries {
			path := filepath.Join(dir, e.Name())
			isDir := e.IsDir()
			if e.Type()&fs.ModeSymlink != 0 {
				if fi, err := os.Stat(path); err == nil {
					isDir = fi.IsDir()
				}
			}
			if isDir {
				if d.Source == SourceClaude && !strings.HasPrefix(e.Name(), ".") && depth < maxClaudeDepth {
					subdirs = append(subdirs, path)
				}
				continue
			}
			// Below the top, only Markdown: Claude Code's own format (a
			// cloned collection's other files are not agents).
			if ext := strings.ToLower(filepath.Ext(e.Name())); ext == ".md" || ext == ".toml" && depth == 0 {
				paths = append(paths, path)
			}
		}
		for _, sub := range subdirs {
			if err := walk(sub, depth+1); err != nil {
				diags = append(diags, Diagnostic{File: sub, Severity: Warning, Message: "cannot read agent directory: " + pathErrText(err) + "; its agents are left out"})
			}
		}
		return nil
	}
	err := walk(d.Path, 0)
	if d.PluginRoot == "" || err != nil && !errors.Is(err, fs.ErrNotExist) {
		return paths, diags, err
	}
	// A Claude Code plugin's manifest may name more agent files and
	// directories, which Claude Code reads after agents/ (which the
	// plugin need not have). One named that does not exist is skipped, as
	// a missing agents/ is; one already read (agents/ itself, say) is not
	// read twice.
	extra, ds := claudePluginManifestAgents(d.PluginRoot)
	diags = append(diags, ds...)
	for _, p := range extra {
		fi, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			diags = append(diags, Diagnostic{File: p, Severity: Warning, Message: "cannot read agent file: " + pathErrText(err) + "; it is left out"})
		case fi.IsDir():
			if err := walk(p, 0); err != nil {
				diags = append(diags, Diagnostic{File: p, Severity: Warning, Message: "cannot read agent directory: " + pathErrText(err) + "; its agents are left out"})
			}
		case strings.EqualFold(filepath.Ext(p), ".md"): // Claude Code's agents are Markdown
			paths = append(paths, p)
		}
	}
	seen := map[string]bool{}
	paths = slices.DeleteFunc(paths, func(p string) bool {
		dup := seen[p]
		seen[p] = true
		return dup
	})
	return paths, diags, nil
}

// duplicateName is the diagnostic of an agent file whose name another file
// of the same directory defines. deputy's own directories refuse it; in a
// Claude Code directory (its subdirectories included) Claude Code loads
// one of the two, so deputy does too, and says which.
func duplicateName(d Dir, a *Agent, path, first string) Diagnostic {
	base := d.Path
	if d.PluginRoot != "" {
		// A plugin's manifest may name files outside agents/.
		base = d.PluginRoot
	}
	rel, err := filepath.Rel(base, first)
	if err != nil {
		rel = first
	}
	diag := Diagnostic{File: path, Line: a.KeyLine("name"), Key: "name", Severity: Error,
		Message: fmt.Sprintf("agent %q is already defined in %s in the same directory; this file is ignored", a.Name, rel)}
	if d.Source == SourceClaude {
		diag.Severity = Warning
		diag.Message = fmt.Sprintf("agent %q is also defined in %s, which is used (Claude Code, too, loads only one of them); this file is ignored", a.Name, rel)
	}
	return diag
}

// LoadAgentFile loads one agent file (.toml or .md) and resolves its skill.
// source is recorded as Agent.Source. The agent is nil when the file could
// not be read or parsed, or names no agent.
func LoadAgentFile(path, source string, opts LoadOptions) (*Agent, Diagnostics) {
	return loadAgentFile(path, source, opts, false)
}

func loadAgentFile(path, source string, opts LoadOptions, inDir bool) (*Agent, Diagnostics) {
	data, err := readLimited(path, maxAgentFileSize)
	if err != nil {
		return nil, Diagnostics{{File: path, Severity: Error, Message: "cannot read agent file: " + pathErrText(err)}}
	}
	var (
		a     *Agent
		diags Diagnostics
	)
	switch strings.ToLower(filepath.Ext(path)) {
	case ".toml":
		a, diags = ParseAgentTOML(data, path)
	case ".md":
		// A directory of agents may hold a README; only files that start
		// with front matter are agents.
		if _, _, _, has, _ := splitFrontMatter(string(data)); !has && inDir {
			return nil, Diagnostics{{File: path, Severity: Warning, Message: "no front matter, so not an agent; skipped"}}
		}
		a, diags = ParseAgentMarkdown(data, path)
	default:
		return nil, Diagnostics{{File: path, Severity: Error, Message: "agent files end in .toml or .md"}}
	}
	if a == nil {
		return nil, diags
	}
	a.Source = source
	skillBase := filepath.Dir(path)
	if source == SourceAxe {
		// As in axe: no tools key means no tools, a run without a task
		// sends axe's default one, and a relative skill path starts at
		// axe's configuration directory (the parent of agents/).
		if a.Tools == nil {
			a.Tools = []string{}
		}
		a.DefaultTask = AxeDefaultTask
		skillBase = filepath.Dir(skillBase)
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

// pathErrText is the error text without the repeated path of a
// *fs.PathError, since diagnostics already name the file.
func pathErrText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

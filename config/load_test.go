package config

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/config/internal/testfile"
)

func TestLoadAgentsPrecedence(t *testing.T) {
	base := filepath.Join("testdata", "precedence")
	dirs := []Dir{
		{Path: filepath.Join(base, "user"), Source: SourceUser},
		{Path: filepath.Join(base, "project"), Source: SourceProject},
		{Path: filepath.Join(base, "flag"), Source: SourceFlag},
		{Path: filepath.Join(base, "missing"), Source: SourceFlag}, // skipped silently
	}
	set, diags := LoadAgents(dirs, LoadOptions{})
	if diags.HasErrors() {
		t.Fatalf("errors:\n%s", diags)
	}
	// The README of the project directory is not an agent.
	wantDiags := []string{"warning: " + filepath.Join(base, "project", "README.md") + ": no front matter, so not an agent; skipped"}
	if d := cmp.Diff(wantDiags, diagStrings(diags)); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}

	var names []string
	for _, a := range set.List() {
		names = append(names, a.Name+"@"+a.Source)
	}
	if d := cmp.Diff([]string{"helper@user", "reviewer@flag"}, names); d != "" {
		t.Errorf("List (-want +got):\n%s", d)
	}
	r, ok := set.Get("reviewer")
	if !ok || r.Description != "flag reviewer" {
		t.Fatalf("Get(reviewer) = %+v, %v; want the flag's", r, ok)
	}
	var shadowed []string
	for _, a := range set.Shadowed("reviewer") {
		shadowed = append(shadowed, a.Source+":"+filepath.Base(a.Path))
	}
	if d := cmp.Diff([]string{"user:reviewer.toml", "project:reviewer.md"}, shadowed); d != "" {
		t.Errorf("Shadowed (-want +got):\n%s", d)
	}
	if _, ok := set.Get("nobody"); ok {
		t.Error("Get(nobody) found something")
	}
}

func TestLoadAgentsProjectOverUser(t *testing.T) {
	base := filepath.Join("testdata", "precedence")
	set, _ := LoadAgents([]Dir{
		{Path: filepath.Join(base, "user"), Source: SourceUser},
		{Path: filepath.Join(base, "project"), Source: SourceProject},
	}, LoadOptions{})
	r, _ := set.Get("reviewer")
	if r == nil || r.Source != SourceProject || !r.InheritsModel() {
		t.Fatalf("reviewer = %+v, want the project's (model inherit)", r)
	}
}

func TestLoadAgentsBadFileSkippedOthersLoad(t *testing.T) {
	dir := t.TempDir()
	testfile.WriteFiles(t, dir, map[string]string{
		"broken.toml": "name = \n",
		"noname.md":   "---\ndescription: x\n---\n",
		"good.toml":   "name = \"good\"\nmodel = \"inherit\"\n",
		"bad.toml":    "name = \"bad\"\nmodel = \"inherit\"\nmax_turns = -1\n",
		"notes.txt":   "ignored",
		"sub/x.toml":  "name = \"x\"\nmodel = \"inherit\"\n", // directories are not searched
	})
	set, diags := LoadAgents([]Dir{{Path: dir, Source: SourceProject}}, LoadOptions{})
	want := []string{
		"error: " + filepath.Join(dir, "bad.toml") + ":3: max_turns: must not be negative, got -1",
		"error: " + filepath.Join(dir, "broken.toml") + ":1: invalid TOML: expected value but found '\\n' instead",
		"error: " + filepath.Join(dir, "noname.md") + ": name: missing required key",
	}
	if d := cmp.Diff(want, diagStrings(diags)); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
	var names []string
	for _, a := range set.List() {
		names = append(names, a.Name)
	}
	// bad loads (with its error on record), broken and noname do not.
	if d := cmp.Diff([]string{"bad", "good"}, names); d != "" {
		t.Errorf("agents (-want +got):\n%s", d)
	}
	bad, _ := set.Get("bad")
	if !diags.ForFile(bad.Path).HasErrors() {
		t.Error("ForFile(bad) has no errors")
	}
}

func TestLoadAgentsSameNameTwiceInOneDir(t *testing.T) {
	dir := t.TempDir()
	testfile.WriteFiles(t, dir, map[string]string{
		"a.md":   "---\nname: a\n---\n",
		"a.toml": "name = \"a\"\nmodel = \"inherit\"\n",
	})
	set, diags := LoadAgents([]Dir{{Path: dir, Source: SourceUser}}, LoadOptions{})
	want := []string{`error: ` + filepath.Join(dir, "a.toml") + `:1: name: agent "a" is already defined in a.md in the same directory; this file is ignored`}
	if d := cmp.Diff(want, diagStrings(diags)); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
	if a, _ := set.Get("a"); a == nil || filepath.Ext(a.Path) != ".md" {
		t.Errorf("Get(a) = %+v, want a.md's", a)
	}
}

// A collection cloned into ~/.claude/agents/NAME is found as Claude Code
// finds it: the Markdown agents of every subdirectory, by their front
// matter's name; not the clone's .git, its other files, nor a TOML file
// below the top; one agent of a name defined twice, with one warning for
// the file left out (not its other problems). In
// deputy's own directories subdirectories are not read.
func TestLoadAgentsUnreadableDir(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	testfile.WriteFiles(t, filepath.Dir(f), map[string]string{"file": "x"})
	_, diags := LoadAgents([]Dir{{Path: f, Source: SourceFlag}}, LoadOptions{})
	if !diags.HasErrors() || !strings.Contains(diags.String(), "cannot read agent directory") {
		t.Errorf("diagnostics = %v, want a read error", diags)
	}
}

func TestLoadAgentFileSkills(t *testing.T) {
	root := t.TempDir()
	project := filepath.Join(root, "proj", ".deputy")
	user := filepath.Join(root, "user")
	testfile.WriteFiles(t, root, map[string]string{
		"proj/.deputy/skills/review/SKILL.md":   "---\nname: review\ndescription: project review\n---\nReview well.\n",
		"user/skills/review/SKILL.md":           "---\nname: review\n---\nuser's\n",
		"user/skills/only-user/SKILL.md":        "Only in user.\n",
		"proj/.deputy/agents/local/SKILL.md":    "---\nname: local\n---\nNext to the agent.\n",
		"proj/.deputy/agents/notes.md":          "# notes\n\nFile skill.\n",
		"proj/.deputy/agents/by-name.toml":      "name = \"by-name\"\nmodel = \"inherit\"\nskill = \"review\"\n",
		"proj/.deputy/agents/by-user-name.toml": "name = \"by-user-name\"\nmodel = \"inherit\"\nskill = \"only-user\"\n",
		"proj/.deputy/agents/by-dir.toml":       "name = \"by-dir\"\nmodel = \"inherit\"\nskill = \"local\"\n",
		"proj/.deputy/agents/by-file.toml":      "name = \"by-file\"\nmodel = \"inherit\"\nskill = \"./notes.md\"\n",
		"proj/.deputy/agents/by-axe-path.toml":  "name = \"by-axe-path\"\nmodel = \"inherit\"\nskill = \"skills/review/SKILL.md\"\n",
		"proj/.deputy/agents/missing.toml":      "name = \"missing\"\nmodel = \"inherit\"\n\nskill = \"nope\"\n",
	})
	opts := LoadOptions{SkillDirs: []string{project, user}}
	agents := filepath.Join(project, "agents")
	tests := []struct {
		file       string
		name, body string
		path       string
	}{
		{"by-name.toml", "review", "Review well.", filepath.Join(project, "skills", "review", "SKILL.md")},
		{"by-user-name.toml", "only-user", "Only in user.", filepath.Join(user, "skills", "only-user", "SKILL.md")},
		{"by-dir.toml", "local", "Next to the agent.", filepath.Join(agents, "local", "SKILL.md")},
		{"by-file.toml", "notes", "# notes\n\nFile skill.", filepath.Join(agents, "notes.md")},
		{"by-axe-path.toml", "review", "Review well.", filepath.Join(project, "skills", "review", "SKILL.md")},
	}
	for _, tt := range tests {
		a, diags := LoadAgentFile(filepath.Join(agents, tt.file), SourceProject, opts)
		if a == nil || diags.HasErrors() {
			t.Errorf("%s: agent %v, diagnostics %v", tt.file, a, diags)
			continue
		}
		s := a.SkillDoc
		if s == nil || s.Name != tt.name || s.Body != tt.body || s.Path != tt.path {
			t.Errorf("%s: skill = %+v, want name %q body %q path %q", tt.file, s, tt.name, tt.body, tt.path)
		}
	}

	a, diags := LoadAgentFile(filepath.Join(agents, "missing.toml"), SourceProject, opts)
	if a == nil || a.SkillDoc != nil {
		t.Fatalf("missing skill: agent %+v", a)
	}
	want := []string{"error: " + filepath.Join(agents, "missing.toml") + `:4: skill: skill "nope" not found (looked in ` +
		filepath.Join(agents, "nope") + ", " + filepath.Join(project, "skills", "nope", "SKILL.md") + ", " + filepath.Join(user, "skills", "nope", "SKILL.md") + ")"}
	if d := cmp.Diff(want, diagStrings(diags)); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
}

func TestLoadAgentFileErrors(t *testing.T) {
	dir := t.TempDir()
	_, diags := LoadAgentFile(filepath.Join(dir, "none.toml"), SourceFlag, LoadOptions{})
	if want := "error: " + filepath.Join(dir, "none.toml") + ": cannot read agent file: no such file or directory"; diags.String() == "" || diagStrings(diags)[0] != want {
		t.Errorf("diagnostics = %v, want %q", diagStrings(diags), want)
	}
	testfile.WriteFiles(t, dir, map[string]string{"a.yaml": "name: a\n", "readme.md": "hi\n"})
	if _, diags := LoadAgentFile(filepath.Join(dir, "a.yaml"), SourceFlag, LoadOptions{}); !diags.HasErrors() {
		t.Error("a .yaml agent file loaded without error")
	}
	// Named directly, a Markdown file without front matter is an error,
	// not a skipped README.
	if _, diags := LoadAgentFile(filepath.Join(dir, "readme.md"), SourceFlag, LoadOptions{}); !diags.HasErrors() {
		t.Error("readme.md named directly loaded without error")
	}
}

func TestResolveWorkdir(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	t.Setenv("PROJ", "/srv/p")
	tests := []struct{ workdir, want string }{
		{"", "/cwd"},
		{"sub", "/cwd/sub"},
		{"../up", "/up"},
		{"/abs", "/abs"},
		{"~/x", "/home/u/x"},
		{"$PROJ/src", "/srv/p/src"},
	}
	for _, tt := range tests {
		a := &Agent{Workdir: tt.workdir}
		if got := a.ResolveWorkdir("/cwd"); got != tt.want {
			t.Errorf("ResolveWorkdir(%q) = %q, want %q", tt.workdir, got, tt.want)
		}
	}
}

func TestSkillNotFoundIs(t *testing.T) {
	_, err := ResolveSkill("nope", t.TempDir(), nil)
	if !errors.Is(err, ErrSkillNotFound) {
		t.Errorf("err = %v, want ErrSkillNotFound", err)
	}
}

// .claude directories are found from the repository root down to cwd.
// The agents of installed Claude Code plugins (installed_plugins.json) are
// found as Claude Code finds them: a user install everywhere, a project
// install inside its project, not one its settings disable; the first
// format of the file too. They rank below Claude Code's agents directories.
// A Claude Code plugin's manifest (.claude-plugin/plugin.json) may name
// more agent files and directories in agents, a path or an array of paths
// from the plugin's directory: they are read besides its agents/ directory,
// at its rank, as Claude Code reads them. A path out of the plugin is
// refused with a warning and never read; a plugin.json deputy cannot read
// names nothing, and its agents/ is read all the same.
// A Claude Code agent's skills are preloaded as Claude Code preloads them:
// each skill's text, after the agent's own skill's, from the skill
// directories (.claude/skills/NAME/SKILL.md among them); one that is not
// found is left out with a warning and the agent still loads.

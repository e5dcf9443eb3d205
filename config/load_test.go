package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writeFiles creates files (path -> content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

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
	writeFiles(t, dir, map[string]string{
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
	writeFiles(t, dir, map[string]string{
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
func TestLoadAgentsClaudeSubdirectories(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"top.md":                          "---\nname: top\ndescription: d\n---\nTop.\n",
		"coll/agents/dev/go-pro.md":       "---\nname: golang-pro\ndescription: d\n---\nGo.\n",
		"coll/agents/dev/reviewer.md":     "---\nname: reviewer\ndescription: d\n---\nFirst.\n",
		"coll/agents/quality/reviewer.md": "---\nname: reviewer\ndescription: d\nversion: 2\n---\nSecond.\n",
		"coll/pyproject.toml":             "[project]\nname = \"x\"\n",
		"coll/.git/hooks/x.md":            "---\nname: hidden\n---\n",
	})
	set, diags := LoadAgents([]Dir{{Path: dir, Source: SourceClaude}}, LoadOptions{})
	var names []string
	for _, a := range set.List() {
		names = append(names, a.Name)
	}
	if d := cmp.Diff([]string{"golang-pro", "reviewer", "top"}, names); d != "" {
		t.Errorf("agents (-want +got):\n%s", d)
	}
	if a, _ := set.Get("reviewer"); a == nil || a.SystemPrompt != "First." {
		t.Errorf("reviewer = %+v, want the first by path", a)
	}
	want := []string{`warning: ` + filepath.Join(dir, "coll/agents/quality/reviewer.md") +
		`:2: name: agent "reviewer" is also defined in ` + filepath.Join("coll", "agents", "dev", "reviewer.md") +
		`, which is used (Claude Code, too, loads only one of them); this file is ignored`}
	if d := cmp.Diff(want, diagStrings(diags)); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}

	user := t.TempDir()
	writeFiles(t, user, map[string]string{"sub/a.md": "---\nname: a\n---\n"})
	if set, _ := LoadAgents([]Dir{{Path: user, Source: SourceUser}}, LoadOptions{}); set.Len() != 0 {
		t.Errorf("a deputy directory's subdirectory was read: %v", set.List())
	}
}

func TestLoadAgentsUnreadableDir(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	writeFiles(t, filepath.Dir(f), map[string]string{"file": "x"})
	_, diags := LoadAgents([]Dir{{Path: f, Source: SourceFlag}}, LoadOptions{})
	if !diags.HasErrors() || !strings.Contains(diags.String(), "cannot read agent directory") {
		t.Errorf("diagnostics = %v, want a read error", diags)
	}
}

func TestLoadAgentFileSkills(t *testing.T) {
	root := t.TempDir()
	project := filepath.Join(root, "proj", ".deputy")
	user := filepath.Join(root, "user")
	writeFiles(t, root, map[string]string{
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
	writeFiles(t, dir, map[string]string{"a.yaml": "name: a\n", "readme.md": "hi\n"})
	if _, diags := LoadAgentFile(filepath.Join(dir, "a.yaml"), SourceFlag, LoadOptions{}); !diags.HasErrors() {
		t.Error("a .yaml agent file loaded without error")
	}
	// Named directly, a Markdown file without front matter is an error,
	// not a skipped README.
	if _, diags := LoadAgentFile(filepath.Join(dir, "readme.md"), SourceFlag, LoadOptions{}); !diags.HasErrors() {
		t.Error("readme.md named directly loaded without error")
	}
}

func TestDirs(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/xdg")
	t.Setenv("HOME", "/home/u")
	got := Dirs("/work/p", []string{"extra", "/abs/agents", "", "/xdg/deputy/agents"})
	want := []Dir{
		{Path: "/home/u/.config/axe/agents", Source: SourceAxe},
		{Path: "/xdg/axe/agents", Source: SourceAxe},
		{Path: "/home/u/.claude/agents", Source: SourceClaude},
		{Path: "/work/p/.claude/agents", Source: SourceClaude},
		{Path: "/work/p/.deputy/agents", Source: SourceProject},
		{Path: "/work/p/extra", Source: SourceFlag},
		{Path: "/abs/agents", Source: SourceFlag},
		{Path: "/xdg/deputy/agents", Source: SourceFlag}, // listed twice: kept at its later place
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Dirs (-want +got):\n%s", d)
	}

	t.Setenv("XDG_CONFIG_HOME", "relative/ignored")
	t.Setenv("HOME", "/home/u")
	if got := ConfigDir(); got != "/home/u/.config/deputy" {
		t.Errorf("ConfigDir with relative XDG_CONFIG_HOME = %q", got)
	}
	if got := SkillDirs("/w"); !cmp.Equal(got, []string{"/w/.deputy", "/home/u/.config/deputy", "/w/.claude", "/home/u/.claude"}) {
		t.Errorf("SkillDirs = %q", got)
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
func TestClaudeDirs(t *testing.T) {
	root := t.TempDir()
	t.Setenv("HOME", filepath.Join(root, "home"))
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	repo := filepath.Join(root, "src", "repo")
	writeFiles(t, repo, map[string]string{".git/HEAD": "ref\n", "a/b/x": ""})
	want := []string{filepath.Join(root, "home", ".claude"), filepath.Join(repo, ".claude"), filepath.Join(repo, "a", ".claude"), filepath.Join(repo, "a", "b", ".claude")}
	if d := cmp.Diff(want, ClaudeDirs(filepath.Join(repo, "a", "b"))); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	// Outside a repository only cwd's own .claude counts.
	if d := cmp.Diff(want[:1], ClaudeDirs(filepath.Join(root, "src"))[:1]); d != "" || len(ClaudeDirs(filepath.Join(root, "src"))) != 2 {
		t.Errorf("outside a repository: %v", ClaudeDirs(filepath.Join(root, "src")))
	}
	// CLAUDE_CONFIG_DIR replaces ~/.claude, as in Claude Code.
	t.Setenv("CLAUDE_CONFIG_DIR", "~/claude-work")
	if got := ClaudeDirs(filepath.Join(repo, "a", "b"))[0]; got != filepath.Join(root, "home", "claude-work") {
		t.Errorf("with CLAUDE_CONFIG_DIR: %s", got)
	}
}

// The agents of installed Claude Code plugins (installed_plugins.json) are
// found as Claude Code finds them: a user install everywhere, a project
// install inside its project, not one its settings disable; the first
// format of the file too. They rank below Claude Code's agents directories.
func TestClaudePluginAgents(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	proj := filepath.Join(root, "proj")
	cache := filepath.Join(home, ".claude", "plugins", "cache", "mp")
	agent := func(name string) string {
		return "---\nname: " + name + "\ndescription: d\n---\nBody of " + name + ".\n"
	}
	writeFiles(t, root, map[string]string{
		"home/.claude/plugins/installed_plugins.json": `{"version": 2, "plugins": {
  "user@mp": [{"scope": "user", "installPath": "` + filepath.Join(cache, "user", "1.0") + `", "version": "1.0"}],
  "here@mp": [{"scope": "project", "projectPath": "` + proj + `", "installPath": "` + filepath.Join(cache, "here", "abc") + `"}],
  "elsewhere@mp": [{"scope": "local", "projectPath": "` + filepath.Join(root, "other") + `", "installPath": "` + filepath.Join(cache, "elsewhere", "1") + `"}],
  "off@mp": [{"scope": "user", "installPath": "` + filepath.Join(cache, "off", "1") + `"}],
  "old": {"installPath": "` + filepath.Join(cache, "old", "0.9") + `", "version": "0.9"}}}`,
		"home/.claude/settings.json":                                 `{"enabledPlugins": {"off@mp": false, "user@mp": true}}`,
		"home/.claude/plugins/cache/mp/user/1.0/agents/reviewer.md":  agent("reviewer"),
		"home/.claude/plugins/cache/mp/user/1.0/agents/shadowed.md":  agent("shadowed"),
		"home/.claude/plugins/cache/mp/here/abc/agents/sub/local.md": agent("local"),
		"home/.claude/plugins/cache/mp/elsewhere/1/agents/away.md":   agent("away"),
		"home/.claude/plugins/cache/mp/off/1/agents/disabled.md":     agent("disabled"),
		"home/.claude/plugins/cache/mp/old/0.9/agents/legacy.md":     agent("legacy"),
		"home/.claude/agents/shadowed.md":                            agent("shadowed"),
		"proj/.git/HEAD":                                             "ref\n",
		"proj/src/x":                                                 "",
	})
	set, diags := LoadAgents(Dirs(filepath.Join(proj, "src"), nil), LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var names []string
	for _, a := range set.List() {
		names = append(names, a.Name+":"+a.Source)
	}
	if d := cmp.Diff([]string{"legacy:claude", "local:claude", "reviewer:claude", "shadowed:claude"}, names); d != "" {
		t.Errorf("agents (-want +got):\n%s", d)
	}
	if a, _ := set.Get("shadowed"); a == nil || a.Path != filepath.Join(home, ".claude", "agents", "shadowed.md") || len(set.Shadowed("shadowed")) != 1 {
		t.Errorf("shadowed = %+v, want ~/.claude/agents' over the plugin's", a)
	}
	// With CLAUDE_CONFIG_DIR the plugins are under it, not ~/.claude.
	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(root, "elsewhere"))
	if dirs := ClaudePluginAgentDirs(proj); len(dirs) != 0 {
		t.Errorf("with CLAUDE_CONFIG_DIR: dirs %v", dirs)
	}
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	// No file, or one deputy cannot read, is no plugins.
	writeFiles(t, root, map[string]string{"home/.claude/plugins/installed_plugins.json": "{not json"})
	if dirs := ClaudePluginAgentDirs(proj); len(dirs) != 0 {
		t.Errorf("dirs %v", dirs)
	}
}

// A Claude Code plugin's manifest (.claude-plugin/plugin.json) may name
// more agent files and directories in agents, a path or an array of paths
// from the plugin's directory: they are read besides its agents/ directory,
// at its rank, as Claude Code reads them. A path out of the plugin is
// refused with a warning and never read; a plugin.json deputy cannot read
// names nothing, and its agents/ is read all the same.
func TestClaudePluginManifestAgents(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	cache := filepath.Join(home, ".claude", "plugins", "cache", "mp")
	agent := func(name string) string {
		return "---\nname: " + name + "\ndescription: d\n---\nBody of " + name + ".\n"
	}
	install := func(id string) string {
		return `"` + id + `@mp": [{"scope": "user", "installPath": "` + filepath.Join(cache, id, "1.0") + `"}]`
	}
	outside := filepath.Join(root, "elsewhere")
	writeFiles(t, root, map[string]string{
		"home/.claude/plugins/installed_plugins.json": `{"version": 2, "plugins": {` +
			install("str") + `, ` + install("arr") + `, ` + install("bad") + `, ` + install("nodefault") + `}}`,
		// The string form: a directory, read whole as agents/ is.
		"home/.claude/plugins/cache/mp/str/1.0/.claude-plugin/plugin.json": `{"name": "str", "agents": "./custom/"}`,
		"home/.claude/plugins/cache/mp/str/1.0/agents/default.md":          agent("str-default"),
		"home/.claude/plugins/cache/mp/str/1.0/custom/one.md":              agent("str-one"),
		"home/.claude/plugins/cache/mp/str/1.0/custom/deep/two.md":         agent("str-two"),
		// The array form: files and directories, ${CLAUDE_PLUGIN_ROOT}, the
		// default directory again, paths that do not exist, paths out of the
		// plugin; a name both agents/ and a listed file define.
		"home/.claude/plugins/cache/mp/arr/1.0/.claude-plugin/plugin.json": `{"name": "arr", "agents": [
  "./extra/picked.md", "${CLAUDE_PLUGIN_ROOT}/team", "./agents", "./agents/default.md", "./missing.md", "./extra/notes.txt",
  "../../../../elsewhere/escaped.md", "` + outside + `", 7, "./extra/dup.md"]}`,
		"home/.claude/plugins/cache/mp/arr/1.0/agents/default.md":          agent("arr-default"),
		"home/.claude/plugins/cache/mp/arr/1.0/agents/dup.md":              agent("arr-dup"),
		"home/.claude/plugins/cache/mp/arr/1.0/extra/picked.md":            agent("arr-picked"),
		"home/.claude/plugins/cache/mp/arr/1.0/extra/unlisted.md":          agent("arr-unlisted"),
		"home/.claude/plugins/cache/mp/arr/1.0/extra/notes.txt":            "not an agent",
		"home/.claude/plugins/cache/mp/arr/1.0/extra/dup.md":               agent("arr-dup"),
		"home/.claude/plugins/cache/mp/arr/1.0/team/lead.md":               agent("arr-lead"),
		"elsewhere/escaped.md":                                             agent("escaped"),
		"elsewhere/abs.md":                                                 agent("absolute"),
		"home/.claude/plugins/cache/mp/bad/1.0/.claude-plugin/plugin.json": `{"name": "bad", "agents": `,
		"home/.claude/plugins/cache/mp/bad/1.0/agents/kept.md":             agent("bad-kept"),
		// No agents/ directory: the manifest's paths are read all the same.
		"home/.claude/plugins/cache/mp/nodefault/1.0/.claude-plugin/plugin.json": `{"name": "nodefault", "agents": ["./a.md"]}`,
		"home/.claude/plugins/cache/mp/nodefault/1.0/a.md":                       agent("nodefault-a"),
	})
	set, diags := LoadAgents(Dirs(root, nil), LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var names []string
	for _, a := range set.List() {
		names = append(names, a.Name+":"+a.Source)
	}
	want := []string{"arr-default:claude", "arr-dup:claude", "arr-lead:claude", "arr-picked:claude", "bad-kept:claude",
		"nodefault-a:claude", "str-default:claude", "str-one:claude", "str-two:claude"}
	if d := cmp.Diff(want, names); d != "" {
		t.Errorf("agents (-want +got):\n%s", d)
	}
	arr := filepath.Join(cache, "arr", "1.0")
	if a, _ := set.Get("arr-dup"); a == nil || a.Path != filepath.Join(arr, "agents", "dup.md") || len(set.Shadowed("arr-dup")) != 0 {
		t.Errorf("arr-dup = %+v, want agents/'s, the first the plugin defines", a)
	}
	manifest := filepath.Join(arr, ".claude-plugin", "plugin.json")
	wantDiags := []string{
		manifest + `: agents: "../../../../elsewhere/escaped.md" is outside the plugin's directory; its agents are not read`,
		manifest + `: agents: "` + outside + `" is outside the plugin's directory; its agents are not read`,
		filepath.Join(arr, "extra", "dup.md") + `:2: name: agent "arr-dup" is also defined in ` + filepath.Join("agents", "dup.md") +
			`, which is used (Claude Code, too, loads only one of them); this file is ignored`,
	}
	var got []string
	for _, d := range diags {
		got = append(got, d.String())
	}
	if d := cmp.Diff(wantDiags, got); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
}

// A Claude Code agent's skills are preloaded as Claude Code preloads them:
// each skill's text, after the agent's own skill's, from the skill
// directories (.claude/skills/NAME/SKILL.md among them); one that is not
// found is left out with a warning and the agent still loads.
func TestLoadAgentFileClaudeSkills(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"skills/review/SKILL.md": "---\nname: review\ndescription: d\n---\nReview well.\n",
		"skills/go/SKILL.md":     "---\nname: go\ndescription: d\n---\nWrite Go.\n",
		"agents/r.md":            "---\nname: r\ndescription: d\nskills:\n  - review\n  - nowhere\n  - go\n---\nBody.\n",
		"agents/s.md":            "---\nname: s\ndescription: d\nskills: go\n---\nBody.\n",
	})
	a, diags := LoadAgentFile(filepath.Join(dir, "agents", "r.md"), SourceClaude, LoadOptions{SkillDirs: []string{dir}})
	if a == nil || a.SkillDoc == nil || a.SkillDoc.Body != "Review well.\n\nWrite Go." || a.SkillDoc.Name != "review, go" {
		t.Fatalf("agent %+v, skill %+v", a, a.SkillDoc)
	}
	if len(diags) != 1 || diags[0].Severity != Warning || diags[0].Line != 4 || diags[0].Key != "skills" ||
		!strings.Contains(diags[0].Message, `skill "nowhere" not found`) || !strings.HasSuffix(diags[0].Message, "; the agent runs without it") {
		t.Errorf("diagnostics %v", diags)
	}
	a, diags = LoadAgentFile(filepath.Join(dir, "agents", "s.md"), SourceClaude, LoadOptions{SkillDirs: []string{dir}})
	if len(diags) != 0 || a.SkillDoc == nil || a.SkillDoc.Body != "Write Go." {
		t.Errorf("comma form: skill %+v, diagnostics %v", a.SkillDoc, diags)
	}
}

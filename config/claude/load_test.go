package claude

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/internal/configtest"
	"github.com/deputyhq/deputy/config/internal/testfile"
)

// agentFile is the text of a Claude Code agent file defining name.
func agentFile(name string) string {
	return "---\nname: " + name + "\ndescription: d\n---\nBody of " + name + ".\n"
}

func TestLoadAgentsClaudeSubdirectories(t *testing.T) {
	dir := t.TempDir()
	testfile.WriteFiles(t, dir, map[string]string{
		"top.md":                          "---\nname: top\ndescription: d\n---\nTop.\n",
		"coll/agents/dev/go-pro.md":       "---\nname: golang-pro\ndescription: d\n---\nGo.\n",
		"coll/agents/dev/reviewer.md":     "---\nname: reviewer\ndescription: d\n---\nFirst.\n",
		"coll/agents/quality/reviewer.md": "---\nname: reviewer\ndescription: d\nversion: 2\n---\nSecond.\n",
		"coll/pyproject.toml":             "[project]\nname = \"x\"\n",
		"coll/.git/hooks/x.md":            "---\nname: hidden\n---\n",
	})
	set, diags := config.LoadAgents([]config.Dir{{Path: dir, Source: Source, Origin: Origin{}}}, config.LoadOptions{})
	if d := cmp.Diff([]string{"golang-pro", "reviewer", "top"}, configtest.Names(set)); d != "" {
		t.Errorf("agents (-want +got):\n%s", d)
	}
	if a, _ := set.Get("reviewer"); a == nil || a.SystemPrompt != "First." {
		t.Errorf("reviewer = %+v, want the first by path", a)
	}
	want := []string{`warning: ` + filepath.Join(dir, "coll/agents/quality/reviewer.md") +
		`:2: name: agent "reviewer" is also defined in ` + filepath.Join("coll", "agents", "dev", "reviewer.md") +
		`, which is used (Claude Code, too, loads only one of them); this file is ignored`}
	if d := cmp.Diff(want, configtest.DiagStrings(diags)); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}

	user := t.TempDir()
	testfile.WriteFiles(t, user, map[string]string{"sub/a.md": "---\nname: a\n---\n"})
	if set, _ := config.LoadAgents([]config.Dir{{Path: user, Source: config.SourceUser}}, config.LoadOptions{}); set.Len() != 0 {
		t.Errorf("a deputy directory's subdirectory was read: %v", set.List())
	}
}

func TestClaudeDirs(t *testing.T) {
	root := t.TempDir()
	t.Setenv("HOME", filepath.Join(root, "home"))
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	repo := filepath.Join(root, "src", "repo")
	testfile.WriteFiles(t, repo, map[string]string{".git/HEAD": "ref\n", "a/b/x": ""})
	want := []string{filepath.Join(root, "home", ".claude"), filepath.Join(repo, ".claude"), filepath.Join(repo, "a", ".claude"), filepath.Join(repo, "a", "b", ".claude")}
	if d := cmp.Diff(want, Dirs(filepath.Join(repo, "a", "b"))); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	// Outside a repository only cwd's own .claude counts.
	if d := cmp.Diff(want[:1], Dirs(filepath.Join(root, "src"))[:1]); d != "" || len(Dirs(filepath.Join(root, "src"))) != 2 {
		t.Errorf("outside a repository: %v", Dirs(filepath.Join(root, "src")))
	}
	// CLAUDE_CONFIG_DIR replaces ~/.claude, as in Claude Code.
	t.Setenv("CLAUDE_CONFIG_DIR", "~/claude-work")
	if got := Dirs(filepath.Join(repo, "a", "b"))[0]; got != filepath.Join(root, "home", "claude-work") {
		t.Errorf("with CLAUDE_CONFIG_DIR: %s", got)
	}
}

func TestClaudePluginAgents(t *testing.T) {
	root, home := configtest.Home(t, "CLAUDE_CONFIG_DIR")
	proj := filepath.Join(root, "proj")
	cache := filepath.Join(home, ".claude", "plugins", "cache", "mp")
	testfile.WriteFiles(t, root, map[string]string{
		"home/.claude/plugins/installed_plugins.json": `{"version": 2, "plugins": {
  "user@mp": [{"scope": "user", "installPath": "` + filepath.Join(cache, "user", "1.0") + `", "version": "1.0"}],
  "here@mp": [{"scope": "project", "projectPath": "` + proj + `", "installPath": "` + filepath.Join(cache, "here", "abc") + `"}],
  "elsewhere@mp": [{"scope": "local", "projectPath": "` + filepath.Join(root, "other") + `", "installPath": "` + filepath.Join(cache, "elsewhere", "1") + `"}],
  "off@mp": [{"scope": "user", "installPath": "` + filepath.Join(cache, "off", "1") + `"}],
  "old": {"installPath": "` + filepath.Join(cache, "old", "0.9") + `", "version": "0.9"}}}`,
		"home/.claude/settings.json":                                 `{"enabledPlugins": {"off@mp": false, "user@mp": true}}`,
		"home/.claude/plugins/cache/mp/user/1.0/agents/reviewer.md":  agentFile("reviewer"),
		"home/.claude/plugins/cache/mp/user/1.0/agents/shadowed.md":  agentFile("shadowed"),
		"home/.claude/plugins/cache/mp/here/abc/agents/sub/local.md": agentFile("local"),
		"home/.claude/plugins/cache/mp/elsewhere/1/agents/away.md":   agentFile("away"),
		"home/.claude/plugins/cache/mp/off/1/agents/disabled.md":     agentFile("disabled"),
		"home/.claude/plugins/cache/mp/old/0.9/agents/legacy.md":     agentFile("legacy"),
		"home/.claude/agents/shadowed.md":                            agentFile("shadowed"),
		"proj/.git/HEAD":                                             "ref\n",
		"proj/src/x":                                                 "",
	})
	set, _ := configtest.LoadAgents(t, AgentDirs(filepath.Join(proj, "src")), config.LoadOptions{})
	if d := cmp.Diff([]string{"legacy:claude", "local:claude", "reviewer:claude", "shadowed:claude"}, configtest.NameSources(set)); d != "" {
		t.Errorf("agents (-want +got):\n%s", d)
	}
	if a, _ := set.Get("shadowed"); a == nil || a.Path != filepath.Join(home, ".claude", "agents", "shadowed.md") || len(set.Shadowed("shadowed")) != 1 {
		t.Errorf("shadowed = %+v, want ~/.claude/agents' over the plugin's", a)
	}
	// With CLAUDE_CONFIG_DIR the plugins are under it, not ~/.claude.
	t.Setenv("CLAUDE_CONFIG_DIR", filepath.Join(root, "elsewhere"))
	if dirs := PluginAgentDirs(proj); len(dirs) != 0 {
		t.Errorf("with CLAUDE_CONFIG_DIR: dirs %v", dirs)
	}
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	// No file, or one deputy cannot read, is no plugins.
	testfile.WriteFiles(t, root, map[string]string{"home/.claude/plugins/installed_plugins.json": "{not json"})
	if dirs := PluginAgentDirs(proj); len(dirs) != 0 {
		t.Errorf("dirs %v", dirs)
	}
}

func TestClaudePluginManifestAgents(t *testing.T) {
	root, home := configtest.Home(t, "CLAUDE_CONFIG_DIR")
	cache := filepath.Join(home, ".claude", "plugins", "cache", "mp")
	install := func(id string) string {
		return `"` + id + `@mp": [{"scope": "user", "installPath": "` + filepath.Join(cache, id, "1.0") + `"}]`
	}
	outside := filepath.Join(root, "elsewhere")
	testfile.WriteFiles(t, root, map[string]string{
		"home/.claude/plugins/installed_plugins.json": `{"version": 2, "plugins": {` +
			install("str") + `, ` + install("arr") + `, ` + install("bad") + `, ` + install("nodefault") + `}}`,
		// The string form: a directory, read whole as agents/ is.
		"home/.claude/plugins/cache/mp/str/1.0/.claude-plugin/plugin.json": `{"name": "str", "agents": "./custom/"}`,
		"home/.claude/plugins/cache/mp/str/1.0/agents/default.md":          agentFile("str-default"),
		"home/.claude/plugins/cache/mp/str/1.0/custom/one.md":              agentFile("str-one"),
		"home/.claude/plugins/cache/mp/str/1.0/custom/deep/two.md":         agentFile("str-two"),
		// The array form: files and directories, ${CLAUDE_PLUGIN_ROOT}, the
		// default directory again, paths that do not exist, paths out of the
		// plugin; a name both agents/ and a listed file define.
		"home/.claude/plugins/cache/mp/arr/1.0/.claude-plugin/plugin.json": `{"name": "arr", "agents": [
  "./extra/picked.md", "${CLAUDE_PLUGIN_ROOT}/team", "./agents", "./agents/default.md", "./missing.md", "./extra/notes.txt",
  "../../../../elsewhere/escaped.md", "` + outside + `", 7, "./extra/dup.md"]}`,
		"home/.claude/plugins/cache/mp/arr/1.0/agents/default.md":          agentFile("arr-default"),
		"home/.claude/plugins/cache/mp/arr/1.0/agents/dup.md":              agentFile("arr-dup"),
		"home/.claude/plugins/cache/mp/arr/1.0/extra/picked.md":            agentFile("arr-picked"),
		"home/.claude/plugins/cache/mp/arr/1.0/extra/unlisted.md":          agentFile("arr-unlisted"),
		"home/.claude/plugins/cache/mp/arr/1.0/extra/notes.txt":            "not an agent",
		"home/.claude/plugins/cache/mp/arr/1.0/extra/dup.md":               agentFile("arr-dup"),
		"home/.claude/plugins/cache/mp/arr/1.0/team/lead.md":               agentFile("arr-lead"),
		"elsewhere/escaped.md":                                             agentFile("escaped"),
		"elsewhere/abs.md":                                                 agentFile("absolute"),
		"home/.claude/plugins/cache/mp/bad/1.0/.claude-plugin/plugin.json": `{"name": "bad", "agents": `,
		"home/.claude/plugins/cache/mp/bad/1.0/agents/kept.md":             agentFile("bad-kept"),
		// No agents/ directory: the manifest's paths are read all the same.
		"home/.claude/plugins/cache/mp/nodefault/1.0/.claude-plugin/plugin.json": `{"name": "nodefault", "agents": ["./a.md"]}`,
		"home/.claude/plugins/cache/mp/nodefault/1.0/a.md":                       agentFile("nodefault-a"),
	})
	set, diags := configtest.LoadAgents(t, AgentDirs(root), config.LoadOptions{})
	want := []string{"arr-default:claude", "arr-dup:claude", "arr-lead:claude", "arr-picked:claude", "bad-kept:claude",
		"nodefault-a:claude", "str-default:claude", "str-one:claude", "str-two:claude"}
	if d := cmp.Diff(want, configtest.NameSources(set)); d != "" {
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

func TestLoadAgentFileClaudeSkills(t *testing.T) {
	dir := t.TempDir()
	testfile.WriteFiles(t, dir, map[string]string{
		"skills/review/SKILL.md": "---\nname: review\ndescription: d\n---\nReview well.\n",
		"skills/go/SKILL.md":     "---\nname: go\ndescription: d\n---\nWrite Go.\n",
		"agents/r.md":            "---\nname: r\ndescription: d\nskills:\n  - review\n  - nowhere\n  - go\n---\nBody.\n",
		"agents/s.md":            "---\nname: s\ndescription: d\nskills: go\n---\nBody.\n",
	})
	agents, diags := Origin{}.Load(filepath.Join(dir, "agents", "r.md"), Source, config.LoadOptions{SkillDirs: []string{dir}})
	if len(agents) != 1 {
		t.Fatalf("agents %v, diagnostics %v", agents, diags)
	}
	a := agents[0]
	if a.SkillDoc == nil || a.SkillDoc.Body != "Review well.\n\nWrite Go." || a.SkillDoc.Name != "review, go" {
		t.Fatalf("agent %+v, skill %+v", a, a.SkillDoc)
	}
	if len(diags) != 1 || diags[0].Severity != config.Warning || diags[0].Line != 4 || diags[0].Key != "skills" ||
		!strings.Contains(diags[0].Message, `skill "nowhere" not found`) || !strings.HasSuffix(diags[0].Message, "; the agent runs without it") {
		t.Errorf("diagnostics %v", diags)
	}
	agents, diags = Origin{}.Load(filepath.Join(dir, "agents", "s.md"), Source, config.LoadOptions{SkillDirs: []string{dir}})
	if len(diags) != 0 || len(agents) != 1 || agents[0].SkillDoc == nil || agents[0].SkillDoc.Body != "Write Go." {
		t.Errorf("comma form: agents %v, diagnostics %v", agents, diags)
	}
}

// An agent of Claude Code's directories that names no model, or inherit,
// runs as a root on Claude Code's own default when deputy's configuration
// names none; lint does not report it as unable to run.
func TestLoadRootModel(t *testing.T) {
	dir := t.TempDir()
	testfile.WriteFiles(t, dir, map[string]string{
		"none.md":    "---\nname: none\ndescription: d\n---\nBody.\n",
		"inherit.md": "---\nname: inherit\ndescription: d\nmodel: inherit\n---\nBody.\n",
		"opus.md":    "---\nname: opus\ndescription: d\nmodel: opus\n---\nBody.\n",
	})
	set, diags := config.LoadAgents([]config.Dir{{Path: dir, Source: Source, Origin: Origin{}}}, config.LoadOptions{})
	if len(diags) != 0 {
		t.Fatal(diags)
	}
	for name, want := range map[string]string{"none": "anthropic/claude-sonnet-5-5", "inherit": "anthropic/claude-sonnet-5-5", "opus": ""} {
		if a, _ := set.Get(name); a == nil || a.RootModel != want {
			t.Errorf("%s: RootModel %+v, want %q", name, a, want)
		}
	}
	if d := config.LintRootModels(set, ""); len(d) != 0 {
		t.Errorf("lint: %v", d)
	}
	// The same file in deputy's own directory has no origin's default.
	set, _ = config.LoadAgents([]config.Dir{{Path: dir, Source: config.SourceUser}}, config.LoadOptions{Markdown: Dialect})
	if a, _ := set.Get("none"); a == nil || a.RootModel != "" {
		t.Errorf("deputy's directory: %+v", a)
	}
	if d := config.LintRootModels(set, ""); len(d) != 2 {
		t.Errorf("lint: %v", d)
	}
}

// A plugin whose marketplace entry is its manifest ("strict": false, as
// wshobson/agents' entries were written) has the agent files that entry
// names read too, from the installed plugin's directory; a path out of it
// is refused with a warning. The marketplace is found where
// known_marketplaces.json says it was installed.
func TestClaudePluginMarketplaceEntry(t *testing.T) {
	root, home := configtest.Home(t, "CLAUDE_CONFIG_DIR")
	install := filepath.Join(home, ".claude", "plugins", "cache", "mp", "tools", "1.0")
	market := filepath.Join(root, "markets", "mp")
	testfile.WriteFiles(t, root, map[string]string{
		"home/.claude/plugins/installed_plugins.json":  `{"version": 2, "plugins": {"tools@mp": [{"scope": "user", "installPath": "` + install + `"}]}}`,
		"home/.claude/plugins/known_marketplaces.json": `{"mp": {"source": {"source": "github", "repo": "x/mp"}, "installLocation": "` + market + `"}}`,
		"markets/mp/.claude-plugin/marketplace.json": `{"name": "mp", "plugins": [
  {"name": "other", "source": "./plugins/other", "agents": ["./x.md"]},
  {"name": "tools", "source": "./plugins/tools", "strict": false, "agents": ["./custom/linter.md", "../../escape.md"]}]}`,
		"home/.claude/plugins/cache/mp/tools/1.0/custom/linter.md":   agentFile("linter"),
		"home/.claude/plugins/cache/mp/tools/1.0/custom/unlisted.md": agentFile("unlisted"),
	})
	set, diags := configtest.LoadAgents(t, AgentDirs(root), config.LoadOptions{})
	if d := cmp.Diff([]string{"linter"}, configtest.Names(set)); d != "" {
		t.Errorf("agents (-want +got):\n%s", d)
	}
	want := []string{filepath.Join(market, ".claude-plugin", "marketplace.json") + `: plugins.tools@mp.agents: "../../escape.md" is outside the plugin's directory; its agents are not read`}
	var got []string
	for _, d := range diags {
		got = append(got, d.String())
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
}

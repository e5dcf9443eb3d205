package claude

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/internal/configtest"
	"github.com/deputyhq/deputy/config/internal/testfile"
	"github.com/deputyhq/deputy/permission"
)

func FuzzClaudeSettings(f *testing.F) {
	for _, s := range [][2]string{
		{`{"model": "opus", "enabledPlugins": {"a@m": true, "b@m": false}}`, `{"model": " sonnet[1m] "}`},
		{`{"model": "claude-sonnet-5-20261001", "permissions": {"allow": ["Bash"]}}`, `{"enabledPlugins": {"a@m": false}}`},
		{`{"model": "us.anthropic.claude-sonnet-5-v1:0"}`, `{"model": ""}`},
		{`{"model": 3, "enabledPlugins": {"x": "yes", "y": null}}`, `{"model": "   "}`},
		{`{"model": "inherit", "enabledPlugins": []}`, `[]`},
		{`{"model": "haiku"`, ``},
		{"{\"model\": \"\\u0000\"}", "\xff\xfe"},
		{`{"model": "default", "model": "opus"}`, `null`},
		{`{"permissions": {"deny": ["Bash(rm:*)", "Read(//etc/**)"], "defaultMode": "plan"}}`, `{"permissions": {"ask": ["Edit(/src/**)", 3], "allow": ["WebFetch(domain:go.dev)", "Bash("]}}`},
		{`{"permissions": {"defaultMode": "auto", "deny": "Bash"}}`, `{"permissions": []}`},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, user, project string) {
		base := t.TempDir()
		dirs := []string{filepath.Join(base, "user"), filepath.Join(base, "project")}
		for i, data := range []string{user, project} {
			if err := os.MkdirAll(dirs[i], 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dirs[i], "settings.json"), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		model, file := settingsModel(dirs)
		if (model == "") != (file == "") {
			t.Fatalf("model %q from file %q", model, file)
		}
		if model != strings.TrimSpace(model) {
			t.Errorf("model %q not trimmed", model)
		}
		if model != "" && !strings.HasPrefix(file, base) {
			t.Errorf("model from %q, outside the directories read", file)
		}
		// The project's file wins over the user's: reading the project's
		// alone gives the same model whenever it sets one.
		if pm, _ := settingsModel(dirs[1:]); pm != "" && pm != model {
			t.Errorf("project sets %q but %q won", pm, model)
		}
		if model != "" {
			if m, _, ok := ResolveModel(model); ok && m != "" && !strings.HasPrefix(m, "anthropic/") {
				t.Errorf("ResolveModel(%q) = %q", model, m)
			}
		}
		// Permissions add up: the project's file cannot take back a deny
		// of the user's, and every rule read reads back.
		rs, _ := Permissions(dirs)
		userRules, _ := Permissions(dirs[:1])
		if len(rs.Deny) < len(userRules.Deny) {
			t.Errorf("the user's %d deny rules became %d", len(userRules.Deny), len(rs.Deny))
		}
		for _, r := range append(append(rs.Allow, rs.Ask...), rs.Deny...) {
			if back, err := permission.Parse(r.String()); err != nil || back.String() != r.String() {
				t.Errorf("rule %q reads back as %q, %v", r.String(), back.String(), err)
			}
		}
		enabled := enabledPlugins(dirs)
		for id, on := range enabledPlugins(dirs[1:]) {
			if enabled[id] != on {
				t.Errorf("plugin %q: project says %v, merged %v", id, on, enabled[id])
			}
		}
	})
}

func FuzzParseMCPJSON(f *testing.F) {
	for _, seed := range []string{
		`{"mcpServers": {"fs": {"command": "mcp-fs", "args": ["/srv"], "env": {"A": "1"}}}}`,
		`{"mcpServers": {"web": {"type": "http", "url": "https://h/mcp", "headers": {"X": "${K}"}}}}`,
		`{"mcpServers": {"old": {"type": "sse", "url": "http://127.0.0.1:1/sse"}, "x": {}}}`,
		`{"mcpServers": [{"name": "a", "command": "c"}, "ref"]}`,
		`{"mcpServers": 1, "other": true}`, `[]`, `{`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		servers, diags := ParseMCPJSON(data, ".mcp.json")
		_, again := ParseMCPJSON(data, ".mcp.json")
		if d := cmp.Diff(configtest.DiagStrings(diags), configtest.DiagStrings(again)); d != "" {
			t.Errorf("not deterministic (-first +second):\n%s", d)
		}
		for _, s := range servers {
			if s.Ref {
				continue
			}
			if s.Name == "" || (s.Transport == config.MCPStdio) != (s.Command != "") || (s.Transport != config.MCPStdio && s.URL == "") {
				t.Errorf("accepted an unusable server: %+v", s)
			}
		}
	})
}

func FuzzClaudePluginDirs(f *testing.F) {
	for _, seed := range []string{
		`{"version": 2, "plugins": {"a@m": [{"scope": "user", "installPath": "/p/a/1.0"}], "b@m": [{"scope": "project", "projectPath": "/proj", "installPath": "/p/b/2"}]}}`,
		`{"version": 1, "plugins": {"old": {"installPath": "/p/old", "version": "0.9"}}}`,
		`{"plugins": {"rel": [{"installPath": "cache/rel"}], "off@m": [{"installPath": "/p/off"}], "dup": [{"installPath": "/p/a/1.0"}]}}`,
		`{"plugins": []}`, `{"plugins": {"x": 1}}`, `[]`, `{`, ``,
	} {
		f.Add([]byte(seed), "/proj/src")
	}
	f.Fuzz(func(t *testing.T, data []byte, cwd string) {
		dirs := pluginDirs(data, map[string]bool{"off@m": false}, cwd)
		if d := cmp.Diff(dirs, pluginDirs(data, map[string]bool{"off@m": false}, cwd), cmp.AllowUnexported(plugin{})); d != "" {
			t.Errorf("not deterministic (-first +second):\n%s", d)
		}
		seen := map[string]bool{}
		for _, p := range dirs {
			if d := p.dir; !filepath.IsAbs(d) || filepath.Base(d) != "agents" || seen[d] || p.id == "off@m" {
				t.Errorf("plugin %+v of %v", p, dirs)
			}
			seen[p.dir] = true
		}
	})
}

func FuzzClaudeManifestAgents(f *testing.F) {
	for _, seed := range []string{
		`{"name": "p", "agents": "./custom/agents/"}`,
		`{"name": "p", "version": "1.0.0", "agents": ["./agents"], "skills": ["./skills/a"]}`,
		`{"name": "p", "agents": ["./agents/a.md", "${CLAUDE_PLUGIN_ROOT}/more", "../x.md", "/etc", "./", ".", "", 3, null]}`,
		`{"name": "p", "Agents": "./upper", "agents": "./a", "agents": "./b"}`,
		`{"agents": {"a": "./x"}}`, `{"agents": null}`, `{"agents": "${CLAUDE_PLUGIN_ROOT}/../up"}`,
		`{"agents": ["a/../../b", "./a/./b/../c.md", "\\x"]}`, `[]`, `{`, ``,
	} {
		f.Add([]byte(seed), "/p/cache/mp/plugin/1.0")
	}
	f.Fuzz(func(t *testing.T, data []byte, root string) {
		if !filepath.IsAbs(root) {
			return
		}
		paths, outside := manifestAgents(root, data)
		p2, o2 := manifestAgents(root, data)
		if d := cmp.Diff([][]string{paths, outside}, [][]string{p2, o2}); d != "" {
			t.Errorf("not deterministic (-first +second):\n%s", d)
		}
		seen := map[string]bool{}
		for _, p := range paths {
			rel, err := filepath.Rel(filepath.Clean(root), p)
			if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || !filepath.IsAbs(p) || seen[p] {
				t.Errorf("path %q of %v is not inside %q once", p, paths, root)
			}
			seen[p] = true
		}
	})
}

// agentSeeds are FuzzParseAgent's seeds beyond the files of testdata.
var agentSeeds = []string{
	"---\nname: a\ntools: Read, Agent(x, y), Task(z), Bash(git:*)\nmaxTurns: 3\nmax_turns: 4\n---\nbody",
	"---\nname: Python Expert\nmodel: opusplan\ndisallowedTools: [Write, mcp__gh]\npermissionMode: plan\n---\n",
	"---\nname: a\npermissionMode: dontAsk\ndisallowedTools: Bash(rm:*), Edit(//x), Agent(y), WebSearch(q), Bash(\npermissions: {ask: [fetch], mode: auto}\n---\n",
	"---\nname: a\nmodel: sonnet[1m]\nskills: review, go\ncolor: red\nhooks: {PreToolUse: []}\n---\n",
	"---\nname: a\ndescription: Use when: x\ntools: \"\"\npermissionMode: 3\n--------\n",
}

// FuzzParseAgent: any file read in Claude Code's dialect is an agent whose
// values are in range, or an error, never a panic; twice the same.
func FuzzParseAgent(f *testing.F) {
	testfile.AddFileSeeds(f, filepath.Join("testdata", "*.md"))
	testfile.AddSeeds(f, agentSeeds)
	configtest.FuzzAgent(f, Dialect.ParseMarkdown, "a.md", checkTools)
}

// checkTools: a Claude Code agent has every tool or a list, never nil.
func checkTools(t *testing.T, a *config.Agent) {
	if len(a.Tools) == 0 && a.Tools == nil {
		t.Errorf("nil tools: a Claude Code agent has every tool or a list")
	}
}

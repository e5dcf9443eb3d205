package config

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// addFileSeeds adds the files matching pattern as seeds.
func addFileSeeds(f *testing.F, pattern string) {
	f.Helper()
	paths, err := filepath.Glob(pattern)
	if err != nil || len(paths) == 0 {
		f.Fatalf("no seed files for %s (%v)", pattern, err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// checkAgent holds for every agent a parser returns, whatever the input.
func checkAgent(t *testing.T, a *Agent, diags Diagnostics) {
	t.Helper()
	if a == nil {
		if !diags.HasErrors() {
			t.Fatalf("no agent and no error: %v", diags)
		}
		return
	}
	if err := ValidAgentName(a.Name); err != nil {
		t.Errorf("agent with invalid name: %v", err)
	}
	c := a.SubAgentsConfig
	if c.MaxDepth < 1 || c.MaxDepth > MaxSubAgentMaxDepth || c.Timeout <= 0 || c.Timeout > maxSubAgentTimeout {
		t.Errorf("sub_agents_config out of range: %+v", c)
	}
	if a.MaxTurns < 0 {
		t.Errorf("MaxTurns = %d", a.MaxTurns)
	}
	if p := a.Params.Temperature; p != nil && (*p < 0 || *p > 2) {
		t.Errorf("temperature = %v", *p)
	}
	if p := a.Params.MaxTokens; p != nil && *p < 1 {
		t.Errorf("max_tokens = %v", *p)
	}
	for _, d := range diags {
		if d.Severity != Error && d.Severity != Warning {
			t.Errorf("diagnostic without severity: %v", d)
		}
	}
}

// Seeds beyond the fixture files: snippets of the unit tests. The same
// inputs are committed under testdata/fuzz/<target>/.
var (
	seedsTOML = []string{
		"name = \"a\"\nmodel = \"openai/gpt-4.1\"\n[sub_agents_config]\nmax_depth = 7\ntimeout = 0\n",
		"name = \"a\"\nmodel = \"inherit\"\nparams = { temperature = \"hot\" }\n[memory]\nsize = 3\n",
		"name = \"a\"\nsystem_prompt = \"\"\"\nbogus = 1\n\"\"\"\n[[mcp_servers]]\nname = \"x\"\n",
		"name = 3\nmodel = \n",
		"name = \"a\"\nmodel = \"inherit\"\noutput_schema = { type = \"object\", required = [\"x\"] }\n[memory]\nenabled = true\nlast_n = 2\n",
		"name = \"a\"\nmodel = \"inherit\"\n[params.response_format]\ntype = \"json_schema\"\njson_schema = { schema = '{\"type\": 3}' }\n",
	}
	seedsMarkdown = []string{
		"---\nname: a\ntools: Read, Agent(x, y)\nmaxTurns: 3\nmax_turns: 4\n---\nbody",
		"---\nname: a\nsub_agents_config: {max_depth: 6, timeout: 2m}\nparams:\n  top_p: 1\n---\n",
		"---\n- a\n---\n",
		"---\nname: &x a\nb: *x\n[x]: 1\n---\n",
		"---\nname: a\n",
		"---\nname: a\noutput_schema: '{\"type\":\"array\"}'\nscratchpad: yes\n---\n",
	}
	seedsSettings = []string{
		"agent:\n  subagent:\n    max_depth: 11\n    max_total_time: -10\n",
		"retry:\n  max_delay: soon\nconcurency: 3\n",
		"providers:\n  local: {base_url: 'ftp://x', api_key_env: sk-1}\n  openai: {}\n",
		"concurrency: 99999999999999999999\n---\na: 1\n",
		"a: &a [*a]\n",
		"prices:\n  openai/gpt-4.1: {input: 2, output: 8, cache_read: 0.5}\n  local/qwen: {input: 0, output: 0}\n",
		"prices:\n  openai/x: {input: .nan, output: .inf}\n  y: {input: -1, output: 1}\n  a/b: {input: 1}\n  c/d: null\n",
		"prices:\n  openai/x: {input: '2', output: 1e400, cache_write: -0}\n",
	}
	seedsINI = []string{
		"[llm_tool_]\n" + goodSection,
		"[llm_tool_x]\nsystem_prompt_patch = p\nskill = code_reviewer\n",
		"[llm_tool_x]\n" + goodSection + "context_window = -1\n",
		"[llm_tool_x]\n" + goodSection + "\n[llm_tool_x]\n" + goodSection,
		"[llm_tool_x y]\n" + goodSection,
		"[llm_tool_llm_query]\n" + goodSection,
		"[llm_tool_x]\n" + goodSection + "foo = 1\nsession_id = t\n",
		"[llm_tool_x]\nsystem_prompt_patch = \"\"\"a\n[llm_tool_x]\n\"\"\"\nsession_id = s\nskill = nope\n",
		"k = v\n[other]\n- = a\n[llm_tool_a.b]\n" + goodSection,
		"[llm_tool_x\n",
		"[llm_tool.x] # old spelling\nsystem_prompt_patch = \"quoted # kept\" ; cut\nsession_id = ${SESSION}_$USER\nskill = code_reviewer ; a comment\n",
		"[LLM_TOOL_x]\n[ llm_tool_y ]\n[llm-tool-z]\nsystem_prompt_patch = `unclosed # kept\nsession_id = '$NOT expanded'\n",
		"[llm_tool_x]\nsystem_prompt_patch = a $ b ${ c} ${1} $$ $\nno equals here\n",
		"[llm_tool_x]\n" + goodSection + "description = d\nContext-Window = 4\ndescription = again\n[llm_tool.x]\nextra = 1\n",
		"[llm_tool_y]\nSystem_Prompt_Patch = p\nsession-id = s\nskill = code_reviewer\n",
		"[llm_tool_x]\n" + goodSection + "session_id = t\nskill = nope\nskill = code_reviewer\nsession_id = $X\nfoo = 1\nfoo = 2\n",
		"[llm_tool_x]\nsystem_prompt_patch = a prompt\nthat runs on\n= no key\n  =\nsession_id = s\nskill = code_reviewer\n[other]\nfree text\n",
		"[ llm_tool_x ]\n" + goodSection + "[llm_tool_ y\t]\n" + goodSection + "[ llm_tool_ ]\n" + goodSection + "[ llm_tool.x ]\n" + goodSection,
		"[llm_tool_x\n" + goodSection + "[llm_tool_y]\n" + goodSection + "[llm_tool_z\nsession_id = z\n[llm_tool_w = 1\n[LLM-TOOL-v\n",
	}
)

func addSeeds(f *testing.F, seeds []string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
}

func FuzzLoadAgentTOML(f *testing.F) {
	addFileSeeds(f, filepath.Join("testdata", "axe", "*.toml"))
	addFileSeeds(f, filepath.Join("testdata", "precedence", "*", "*.toml"))
	f.Add(InitAgentTOML("a"))
	addSeeds(f, seedsTOML)
	f.Fuzz(func(t *testing.T, data []byte) {
		a, diags := ParseAgentTOML(data, "a.toml")
		checkAgent(t, a, diags)
		_, again := ParseAgentTOML(data, "a.toml")
		if d := cmp.Diff(diagStrings(diags), diagStrings(again)); d != "" {
			t.Errorf("not deterministic (-first +second):\n%s", d)
		}
	})
}

func FuzzLoadAgentMarkdown(f *testing.F) {
	addFileSeeds(f, filepath.Join("testdata", "claude", "*.md"))
	addFileSeeds(f, filepath.Join("testdata", "precedence", "*", "*.md"))
	f.Add(InitAgentMarkdown("a"))
	addSeeds(f, seedsMarkdown)
	f.Fuzz(func(t *testing.T, data []byte) {
		a, diags := ParseAgentMarkdown(data, "a.md")
		checkAgent(t, a, diags)
		_, again := ParseAgentMarkdown(data, "a.md")
		if d := cmp.Diff(diagStrings(diags), diagStrings(again)); d != "" {
			t.Errorf("not deterministic (-first +second):\n%s", d)
		}
	})
}

func FuzzLoadSettingsYAML(f *testing.F) {
	addFileSeeds(f, filepath.Join("testdata", "settings", "*.yaml"))
	f.Add(InitSettingsYAML())
	addSeeds(f, seedsSettings)
	f.Fuzz(func(t *testing.T, data []byte) {
		file, diags := parseSettingsFile(data, "config.yaml")
		if file == nil && !diags.HasErrors() {
			t.Fatal("no settings and no error")
		}
		_, again := parseSettingsFile(data, "config.yaml")
		if d := cmp.Diff(diagStrings(diags), diagStrings(again)); d != "" {
			t.Errorf("not deterministic (-first +second):\n%s", d)
		}
		if file == nil || diags.HasErrors() {
			return
		}
		s := DefaultSettings()
		file.apply(s, "config.yaml", map[string]string{})
		sa := s.Agent.Subagent
		if s.Concurrency < 0 || s.MaxTurns < 1 || s.Retry.MaxAttempts < 1 || s.StreamIdleTimeout < 0 ||
			sa.MaxDepth < 1 || sa.MaxDepth > SubagentMaxDepthLimit || sa.DefaultMaxTurns < 1 || sa.DefaultMaxTurns > SubagentMaxTurnsLimit ||
			sa.OutputMaxSize < SubagentMinOutputMaxSize || sa.MaxExecutions < 0 || sa.MaxTotalTokens < 0 || sa.MaxTotalTime < 0 {
			t.Errorf("settings out of range passed validation: %+v", s)
		}
		for model, p := range s.Prices {
			for _, v := range []float64{p.Input, p.Output, p.CacheRead, p.CacheWrite} {
				if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
					t.Errorf("price of %s out of range passed validation: %+v", model, p)
				}
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
		if d := cmp.Diff(diagStrings(diags), diagStrings(again)); d != "" {
			t.Errorf("not deterministic (-first +second):\n%s", d)
		}
		for _, s := range servers {
			if s.Ref {
				continue
			}
			if s.Name == "" || (s.Transport == MCPStdio) != (s.Command != "") || (s.Transport != MCPStdio && s.URL == "") {
				t.Errorf("accepted an unusable server: %+v", s)
			}
		}
	})
}

func FuzzParseSpecializations(f *testing.F) {
	addFileSeeds(f, filepath.Join("..", "docs", "example_subqueries.ini"))
	addSeeds(f, seedsINI)
	opts := SpecOptions{SkillDirs: []string{"testdata"}, Reserved: func(n string) bool { return n == "read_file" }}
	f.Fuzz(func(t *testing.T, data []byte) {
		var warnings []Diagnostic
		opts := opts
		opts.Warn = func(d Diagnostic) { warnings = append(warnings, d) }
		specs, err := ParseSpecializations(data, "subqueries.ini", opts)
		_, again := ParseSpecializations(data, "subqueries.ini", SpecOptions{SkillDirs: opts.SkillDirs, Reserved: opts.Reserved})
		if (err == nil) != (again == nil) || (err != nil && err.Error() != again.Error()) {
			t.Fatalf("not deterministic: %v / %v", err, again)
		}
		// The INI reader never fails and keeps every value on its line, so
		// no value holds a newline, and a duplicated specialization is
		// always rejected. As in std::slop, what it reads is accepted:
		// an unknown key is ignored with one warning each, a repeated key
		// keeps its last value with one warning for each repeat, and a
		// line of a specialization that is not key = value is skipped
		// with one warning.
		secs, strays := parseINI(string(data))
		seen := map[string]bool{}
		last := map[string]map[string]iniKey{} // tool -> key -> its last line
		unknown, repeats, skipped := 0, 0, 0
		specSection := map[int]bool{}
		for i, s := range secs {
			if s.name != strings.TrimSpace(s.name) {
				t.Fatalf("section name %q not trimmed", s.name)
			}
			for _, k := range s.keys {
				if strings.ContainsAny(k.value, "\n") {
					t.Fatalf("value %q runs over a line", k.value)
				}
				if k.name == "" {
					t.Fatalf("empty key read at line %d", k.line)
				}
			}
			tool, ok := specToolName(s.name)
			if !ok {
				continue
			}
			specSection[i] = true
			if seen[tool] && err == nil {
				t.Fatalf("duplicate section %q accepted", s.name)
			}
			if !seen[tool] {
				names := map[string]bool{}
				last[tool] = map[string]iniKey{}
				for _, k := range s.keys {
					switch {
					case !specKeys[k.name] && !names[k.name]:
						unknown++
					case specKeys[k.name] && names[k.name]:
						repeats++
					}
					names[k.name] = true
					last[tool][k.name] = k
				}
			}
			seen[tool] = true
		}
		for _, st := range strays {
			inSpec := st.section >= 0 && specSection[st.section]
			switch {
			case st.section >= 0 && st.line == secs[st.section].line: // text after a header
			case inSpec, strings.HasPrefix(st.text, "[") && nearMissSpec(st.text[1:]):
				skipped++
			}
		}
		var warnedUnknown, warnedRepeats, warnedSkipped int
		for _, w := range warnings {
			if w.Severity != Warning {
				t.Fatalf("an error among the warnings: %v", w)
			}
			// A section name holds no ']', so the first "]: " ends the
			// message's "[section]" label; a line skipped before the
			// first section has none (and holds no ']').
			msg := w.Message
			if _, after, ok := strings.Cut(msg, "]: "); ok {
				msg = after
			}
			switch {
			case strings.HasPrefix(msg, "unknown key "):
				warnedUnknown++
			case strings.HasPrefix(msg, "key \""):
				warnedRepeats++
			case strings.HasPrefix(msg, "line is not \"key = value\"; skipped: "),
				strings.HasPrefix(msg, "[") && strings.HasSuffix(msg, " is not a section header (no closing ']'); skipped"):
				warnedSkipped++
			}
		}
		if warnedUnknown != unknown || warnedRepeats != repeats || warnedSkipped != skipped {
			t.Fatalf("warnings: %d unknown keys, %d repeats, %d skipped lines for %d, %d, %d: %v",
				warnedUnknown, warnedRepeats, warnedSkipped, unknown, repeats, skipped, warnings)
		}
		if err == nil {
			for _, s := range specs {
				// The last value of a repeated key is the one used
				// (checked where the environment plays no part).
				if k := last[s.ToolName]["session_id"]; k.literal || !strings.Contains(k.value, "$") {
					if s.SessionID != strings.ToValidUTF8(strings.TrimSpace(k.value), "\uFFFD") {
						t.Fatalf("session_id = %q, last written %q", s.SessionID, k.value)
					}
				}
			}
		}
		if err != nil {
			if specs != nil {
				t.Error("specializations returned with an error")
			}
			return
		}
		names := map[string]bool{}
		for _, s := range specs {
			if !validToolName(s.ToolName) || alwaysReserved[s.ToolName] || s.ToolName == "read_file" || names[s.ToolName] {
				t.Errorf("bad tool name accepted: %q", s.ToolName)
			}
			names[s.ToolName] = true
			if s.SystemPromptPatch == "" || s.SessionID == "" || s.SkillName == "" || s.Skill == nil || s.ContextWindow < 0 {
				t.Errorf("incomplete specialization accepted: %+v", s)
			}
			// What reaches the model and the ledger is text.
			if !utf8.ValidString(s.SystemPromptPatch) || !utf8.ValidString(s.SessionID) {
				t.Errorf("invalid UTF-8 accepted: %+v", s)
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
		dirs := claudePluginDirs(data, map[string]bool{"off@m": false}, cwd)
		if d := cmp.Diff(dirs, claudePluginDirs(data, map[string]bool{"off@m": false}, cwd)); d != "" {
			t.Errorf("not deterministic (-first +second):\n%s", d)
		}
		seen := map[string]bool{}
		for _, d := range dirs {
			if !filepath.IsAbs(d) || filepath.Base(d) != "agents" || seen[d] {
				t.Errorf("dir %q of %v", d, dirs)
			}
			seen[d] = true
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
		paths, outside := claudeManifestAgents(root, data)
		p2, o2 := claudeManifestAgents(root, data)
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

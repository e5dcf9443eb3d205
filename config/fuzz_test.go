package config

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/config/internal/testfile"
)

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
	c := a.SubagentsConfig
	if c.MaxDepth < 1 || c.MaxDepth > MaxSubagentsMaxDepth || c.Timeout <= 0 || c.Timeout > maxSubagentsTimeout {
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
		"name = \"a\"\nmodel = \"inherit\"\n[permissions]\nallow = [\"terminal(git:*)\"]\nask = [\"Bash(rm:*)\", \"fetch(x)\"]\ndeny = 3\nmode = \"plan\"\n",
		"name = \"a\"\nmodel = \"openai/gpt-4.1\"\n[sub_agents_config]\nmax_depth = 7\ntimeout = 0\n",
		"name = \"a\"\nmodel = \"inherit\"\nparams = { temperature = \"hot\" }\n[memory]\nsize = 3\n",
		"name = \"a\"\nsystem_prompt = \"\"\"\nbogus = 1\n\"\"\"\n[[mcp_servers]]\nname = \"x\"\n",
		"name = 3\nmodel = \n",
		"name = \"a\"\nmodel = \"inherit\"\noutput_schema = { type = \"object\", required = [\"x\"] }\n[memory]\nenabled = true\nlast_n = 2\n",
		"name = \"a\"\nmodel = \"inherit\"\n[params.response_format]\ntype = \"json_schema\"\njson_schema = { schema = '{\"type\": 3}' }\n",
	}
	seedsMarkdown = []string{
		"---\nname: a\npermissionMode: dontAsk\ndisallowedTools: Bash(rm:*), Edit(//x), Agent(y), WebSearch(q)\npermissions: {ask: [fetch], mode: auto}\n---\n",
		"---\nname: a\ntools: Read, Agent(x, y)\nmaxTurns: 3\nmax_turns: 4\n---\nbody",
		"---\nname: a\nsub_agents_config: {max_depth: 6, timeout: 2m}\nparams:\n  top_p: 1\n---\n",
		"---\n- a\n---\n",
		"---\nname: &x a\nb: *x\n[x]: 1\n---\n",
		"---\nname: a\n",
		"---\nname: a\noutput_schema: '{\"type\":\"array\"}'\nscratchpad: yes\n---\n",
	}
	seedsSettings = []string{
		"permissions:\n  allow: [terminal(git:*)]\n  ask: ['Bash(rm:*)', 'mcp__x__*']\n  deny: [write_file(/etc/**), fetch(x)]\n  mode: acceptEdits\napproval_timeout: 0s\n",
		"agent:\n  subagent:\n    max_depth: 11\n    max_total_time: -10\n",
		"retry:\n  max_delay: soon\nconcurency: 3\n",
		"providers:\n  local: {base_url: 'ftp://x', api_key_env: sk-1}\n  openai: {}\n",
		"concurrency: 99999999999999999999\n---\na: 1\n",
		"a: &a [*a]\n",
		"prices:\n  openai/gpt-4.1: {input: 2, output: 8, cache_read: 0.5}\n  local/qwen: {input: 0, output: 0}\n",
		"prices:\n  openai/x: {input: .nan, output: .inf}\n  y: {input: -1, output: 1}\n  a/b: {input: 1}\n  c/d: null\n",
		"prices:\n  openai/x: {input: '2', output: 1e400, cache_write: -0}\n",
	}
)

func FuzzLoadAgentTOML(f *testing.F) {
	testfile.AddFileSeeds(f, filepath.Join("axe", "testdata", "*.toml"))
	testfile.AddFileSeeds(f, filepath.Join("testdata", "precedence", "*", "*.toml"))
	f.Add(InitAgentTOML("a"))
	testfile.AddSeeds(f, seedsTOML)
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
	testfile.AddFileSeeds(f, filepath.Join("claude", "testdata", "*.md"))
	testfile.AddFileSeeds(f, filepath.Join("testdata", "precedence", "*", "*.md"))
	f.Add(InitAgentMarkdown("a"))
	testfile.AddSeeds(f, seedsMarkdown)
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
	testfile.AddFileSeeds(f, filepath.Join("testdata", "settings", "*.yaml"))
	f.Add(InitSettingsYAML())
	testfile.AddSeeds(f, seedsSettings)
	f.Fuzz(func(t *testing.T, data []byte) {
		file, diags := parseSettingsFile(data, "config.yaml", nil)
		if file == nil && !diags.HasErrors() {
			t.Fatal("no settings and no error")
		}
		_, again := parseSettingsFile(data, "config.yaml", nil)
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

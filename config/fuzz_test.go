package config

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/config/internal/testfile"
)

// seedsSettings are seeds beyond the fixture files: snippets of the unit
// tests. The same inputs are committed under testdata/fuzz/<target>/.
var seedsSettings = []string{
	"permissions:\n  allow: [terminal(git:*)]\n  ask: ['Bash(rm:*)', 'mcp__x__*']\n  deny: [write_file(/etc/**), fetch(x)]\n  mode: acceptEdits\napproval_timeout: 0s\n",
	"agent:\n  subagent:\n    max_depth: 11\n    max_total_time: -10\n",
	"retry:\n  max_delay: soon\nconcurency: 3\n",
	"providers:\n  local: {base_url: 'ftp://x', api_key_env: sk-1}\n  openai: {}\n",
	"concurrency: 99999999999999999999\n---\na: 1\n",
	"a: &a [*a]\n",
	"prices:\n  openai/gpt-4.1: {input: 2, output: 8, cache_read: 0.5}\n  local/qwen: {input: 0, output: 0}\n",
	"prices:\n  openai/x: {input: .nan, output: .inf}\n  y: {input: -1, output: 1}\n  a/b: {input: 1}\n  c/d: null\n",
	"prices:\n  openai/x: {input: '2', output: 1e400, cache_write: -0}\n",
	"search:\n  mode: auto\n  api: searxng\n  url: http://127.0.0.1:8888\n  max_results: 8\n",
	"search: {mode: api, api: brave, max_results: 0}\n",
	"search: {mode: native, api: google, url: 'ftp://s', max_results: 21}\n",
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
			sa.OutputMaxSize < SubagentMinOutputMaxSize || sa.MaxExecutions < 0 || sa.MaxTotalTokens < 0 || sa.MaxTotalTime < 0 ||
			s.Search.MaxResults < 1 || s.Search.MaxResults > 20 {
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

package gemini

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/config/internal/configtest"
	"github.com/deputyhq/deputy/config/internal/testfile"
)

// FuzzParseAgent: any subagent file read in Gemini CLI's dialect is an
// agent whose values are in range, or an error, never a panic; twice the
// same.
func FuzzParseAgent(f *testing.F) {
	testfile.AddFileSeeds(f, filepath.Join("testdata", "*.md"))
	testfile.AddSeeds(f, []string{
		"---\nname: a\ndescription: d\ntools: [mcp_, mcp__x, mcp_s_*, \"*\"]\ntimeout_mins: 0\nmax_turns: -1\n---\n",
		"---\nname: a\nkind: remote\nmcp_servers: [1]\ntemperature: 9\nmodel: openai/gpt-x\n---\n",
		"---\nname: a\nmcp_servers:\n  s: {http_url: 3, exclude_tools: [1, x]}\n  t: 4\n---\n",
		"---\n- name: r\n  kind: remote\n---\n",
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		a, diags := Dialect.ParseMarkdown(data, "a.md")
		configtest.CheckAgent(t, a, diags)
		_, again := Dialect.ParseMarkdown(data, "a.md")
		if d := cmp.Diff(configtest.DiagStrings(diags), configtest.DiagStrings(again)); d != "" {
			t.Errorf("not deterministic (-first +second):\n%s", d)
		}
	})
}

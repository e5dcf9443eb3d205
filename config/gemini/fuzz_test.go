package gemini

import (
	"path/filepath"
	"testing"

	"github.com/deputyhq/deputy/config/internal/configtest"
	"github.com/deputyhq/deputy/config/internal/testfile"
)

// agentSeeds are FuzzParseAgent's seeds beyond the files of testdata.
var agentSeeds = []string{
	"---\nname: a\ndescription: d\ntools: [mcp_, mcp__x, mcp_s_*, \"*\"]\ntimeout_mins: 0\nmax_turns: -1\n---\n",
	"---\nname: a\nkind: remote\nmcp_servers: [1]\ntemperature: 9\nmodel: openai/gpt-x\n---\n",
	"---\nname: a\nmcp_servers:\n  s: {http_url: 3, exclude_tools: [1, x]}\n  t: 4\n---\n",
	"---\n- name: r\n  kind: remote\n---\n",
}

// FuzzParseAgent: any subagent file read in Gemini CLI's dialect is an
// agent whose values are in range, or an error, never a panic; twice the
// same.
func FuzzParseAgent(f *testing.F) {
	testfile.AddFileSeeds(f, filepath.Join("testdata", "*.md"))
	testfile.AddSeeds(f, agentSeeds)
	configtest.FuzzAgent(f, Dialect.ParseMarkdown, "a.md", nil)
}

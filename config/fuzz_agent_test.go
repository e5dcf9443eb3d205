package config_test

import (
	"path/filepath"
	"testing"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/internal/configtest"
	"github.com/deputyhq/deputy/config/internal/testfile"
)

// Seeds beyond the fixture files: snippets of the unit tests. The same
// inputs are committed under testdata/fuzz/<target>/.
var seedsTOML = []string{
	"name = \"a\"\nmodel = \"inherit\"\n[permissions]\nallow = [\"terminal(git:*)\"]\nask = [\"Bash(rm:*)\", \"fetch(x)\"]\ndeny = 3\nmode = \"plan\"\n",
	"name = \"a\"\nmodel = \"openai/gpt-4.1\"\n[sub_agents_config]\nmax_depth = 7\ntimeout = 0\n",
	"name = \"a\"\nmodel = \"inherit\"\nparams = { temperature = \"hot\" }\n[memory]\nsize = 3\n",
	"name = \"a\"\nsystem_prompt = \"\"\"\nbogus = 1\n\"\"\"\n[[mcp_servers]]\nname = \"x\"\n",
	"name = 3\nmodel = \n",
	"name = \"a\"\nmodel = \"inherit\"\noutput_schema = { type = \"object\", required = [\"x\"] }\n[memory]\nenabled = true\nlast_n = 2\n",
	"name = \"a\"\nmodel = \"inherit\"\n[params.response_format]\ntype = \"json_schema\"\njson_schema = { schema = '{\"type\": 3}' }\n",
}

var seedsMarkdown = []string{
	"---\nname: a\npermissionMode: dontAsk\ndisallowedTools: Bash(rm:*), Edit(//x), Agent(y), WebSearch(q)\npermissions: {ask: [fetch], mode: auto}\n---\n",
	"---\nname: a\ntools: Read, Agent(x, y)\nmaxTurns: 3\nmax_turns: 4\n---\nbody",
	"---\nname: a\nsub_agents_config: {max_depth: 6, timeout: 2m}\nparams:\n  top_p: 1\n---\n",
	"---\n- a\n---\n",
	"---\nname: &x a\nb: *x\n[x]: 1\n---\n",
	"---\nname: a\n",
	"---\nname: a\noutput_schema: '{\"type\":\"array\"}'\nscratchpad: yes\n---\n",
}

// FuzzLoadAgentTOML: any file read in deputy's TOML format is an agent
// whose values are in range, or an error, never a panic; twice the same.
func FuzzLoadAgentTOML(f *testing.F) {
	testfile.AddFileSeeds(f, filepath.Join("axe", "testdata", "*.toml"))
	testfile.AddFileSeeds(f, filepath.Join("testdata", "precedence", "*", "*.toml"))
	f.Add(config.InitAgentTOML("a"))
	testfile.AddSeeds(f, seedsTOML)
	configtest.FuzzAgent(f, config.ParseAgentTOML, "a.toml", nil)
}

// FuzzLoadAgentMarkdown: the same for deputy's Markdown format.
func FuzzLoadAgentMarkdown(f *testing.F) {
	testfile.AddFileSeeds(f, filepath.Join("claude", "testdata", "*.md"))
	testfile.AddFileSeeds(f, filepath.Join("testdata", "precedence", "*", "*.md"))
	f.Add(config.InitAgentMarkdown("a"))
	testfile.AddSeeds(f, seedsMarkdown)
	configtest.FuzzAgent(f, config.ParseAgentMarkdown, "a.md", nil)
}

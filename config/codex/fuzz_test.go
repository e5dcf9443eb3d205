package codex

import (
	"path/filepath"
	"testing"

	"github.com/deputyhq/deputy/config/internal/configtest"
	"github.com/deputyhq/deputy/config/internal/testfile"
)

// agentSeeds are FuzzParseAgent's seeds beyond the files of testdata.
var agentSeeds = []string{
	"name = \"a\"\nmodel = 3\nmodel_provider = [1]\nsandbox_mode = \"x\"\n[tools]\nweb_search = true\n",
	"name = \"a\"\ndeveloper_instructions = \"\"\"\nx\n\"\"\"\n[profiles.p]\nmodel = \"o3\"\n[mcp_servers.s]\ncommand = \"x\"\nenabled_tools = [\"a\"]\n",
	"description = \"no name\"\n",
}

// FuzzParseAgent: any role file read in Codex's dialect is an agent whose
// values are in range, or an error, never a panic; twice the same.
func FuzzParseAgent(f *testing.F) {
	testfile.AddFileSeeds(f, filepath.Join("testdata", "*.toml"))
	testfile.AddSeeds(f, agentSeeds)
	configtest.FuzzAgent(f, Dialect.ParseTOML, "a.toml", nil)
}

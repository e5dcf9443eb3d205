package axe

import (
	"path/filepath"
	"testing"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/internal/configtest"
	"github.com/deputyhq/deputy/config/internal/testfile"
)

// agentSeeds are FuzzParseAgent's seeds beyond the files of testdata.
var agentSeeds = []string{
	"name = \"a\"\nmodel = \"openai/gpt-4.1\"\ntools = [\"run_command\", \"url_fetch\", \"web_search\"]\ntimeout = 3\n",
	"name = \"a\"\nmodel = \"inherit\"\n[retry]\nmax_retries = 2\nbogus = 1\n[artifacts]\nenabled = true\n",
	"name = \"a\"\nmodel = \"inherit\"\nstream = \"yes\"\nformat = 1\ntools = 3\n",
}

// FuzzParseAgent: any file read in axe's dialect is an agent whose values
// are in range, or an error, never a panic; twice the same; axe's tool
// names never survive as they are.
func FuzzParseAgent(f *testing.F) {
	testfile.AddFileSeeds(f, filepath.Join("testdata", "*.toml"))
	testfile.AddSeeds(f, agentSeeds)
	configtest.FuzzAgent(f, Dialect.ParseTOML, "a.toml", checkToolsMapped)
}

// checkToolsMapped: axe's tool names never survive as they are.
func checkToolsMapped(t *testing.T, a *config.Agent) {
	for _, tl := range a.Tools {
		if _, mapped := toolNames[tl]; mapped {
			t.Errorf("axe tool %q kept as it is", tl)
		}
	}
}

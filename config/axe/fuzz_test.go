package axe

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/config/internal/configtest"
	"github.com/deputyhq/deputy/config/internal/testfile"
)

// FuzzParseAgent: any file read in axe's dialect is an agent whose values
// are in range, or an error, never a panic; twice the same; axe's tool
// names never survive as they are.
func FuzzParseAgent(f *testing.F) {
	testfile.AddFileSeeds(f, filepath.Join("testdata", "*.toml"))
	testfile.AddSeeds(f, []string{
		"name = \"a\"\nmodel = \"openai/gpt-4.1\"\ntools = [\"run_command\", \"url_fetch\", \"web_search\"]\ntimeout = 3\n",
		"name = \"a\"\nmodel = \"inherit\"\n[retry]\nmax_retries = 2\nbogus = 1\n[artifacts]\nenabled = true\n",
		"name = \"a\"\nmodel = \"inherit\"\nstream = \"yes\"\nformat = 1\ntools = 3\n",
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		a, diags := Dialect.ParseTOML(data, "a.toml")
		configtest.CheckAgent(t, a, diags)
		_, again := Dialect.ParseTOML(data, "a.toml")
		if d := cmp.Diff(configtest.DiagStrings(diags), configtest.DiagStrings(again)); d != "" {
			t.Errorf("not deterministic (-first +second):\n%s", d)
		}
		if a == nil {
			return
		}
		for _, tl := range a.Tools {
			if _, mapped := toolNames[tl]; mapped {
				t.Errorf("axe tool %q kept as it is", tl)
			}
		}
	})
}

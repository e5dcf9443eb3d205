package opencode

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/deputyhq/deputy/config/internal/configtest"
	"github.com/deputyhq/deputy/config/internal/jsonc"
	"github.com/deputyhq/deputy/config/internal/testfile"
)

// agentSeeds are FuzzParseAgent's seeds beyond the files of testdata.
var agentSeeds = []string{
	"---\ndescription: d\ntools:\n  write: false\n  \"*\": true\npermission:\n  bash: {\"git *\": allow, \"*\": ask}\n  task: deny\n---\nbody",
	"---\ndescription: d\npermission: deny\nsteps: -1\nmaxSteps: 3\nmodel: x\ndisable: yes\n---\n",
	"---\nname: a/b\ntemperature: nan\nmode: [1]\ntools: [read]\npermission: [allow]\n---\n",
}

// FuzzParseAgent: any agent file read in opencode's dialect is an agent
// whose values are in range, or an error, never a panic; twice the same.
func FuzzParseAgent(f *testing.F) {
	testfile.AddFileSeeds(f, filepath.Join("testdata", "*.md"))
	testfile.AddSeeds(f, agentSeeds)
	configtest.FuzzAgent(f, Dialect.ParseMarkdown, "a.md", nil)
}

// FuzzConfigFile: any opencode.json gives agents in range or diagnostics,
// never a panic; StripJSONC leaves valid JSON meaning what it meant.
func FuzzConfigFile(f *testing.F) {
	testfile.AddFileSeeds(f, filepath.Join("testdata", "*.json*"))
	testfile.AddSeeds(f, []string{
		`{"agent": {"a": {"description": "d", "prompt": "{file:./nowhere}", "tools": {"bash": false}}, "build": {}}}`,
		"{\n// c\n\"agent\": {\"x\": {\"prompt\": \"p\",},/* */},\n}",
		`{"agent": [1], "model": 3}`,
		`{"agent": {"a": "b", "c": {"name": "Not Valid", "steps": 1e9}}}`,
		"/* unclosed",
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		p := testfile.Temp(t, "opencode.json", string(data))
		agents, diags := loadConfigFile(p, Source)
		for _, a := range agents {
			configtest.CheckAgent(t, a, diags)
		}
		var in, out any
		if json.Unmarshal(data, &in) == nil {
			if err := json.Unmarshal(jsonc.Strip(data), &out); err != nil || !reflect.DeepEqual(in, out) {
				t.Errorf("valid JSON changed: %v, %v != %v", err, in, out)
			}
		}
	})
}

// Package configtest holds the helpers the tests of config's origin
// packages share.
package configtest

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/config"
)

// Ptr returns a pointer to v.
func Ptr[T any](v T) *T { return &v }

// DiagStrings renders diagnostics as "severity: text" for comparison.
func DiagStrings(ds config.Diagnostics) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Severity.String()+": "+d.String())
	}
	return out
}

// CheckAgent holds for every agent a parser returns, whatever the input.
func CheckAgent(t *testing.T, a *config.Agent, diags config.Diagnostics) {
	t.Helper()
	if a == nil {
		if !diags.HasErrors() {
			t.Fatalf("no agent and no error: %v", diags)
		}
		return
	}
	if err := config.ValidAgentName(a.Name); err != nil {
		t.Errorf("agent with invalid name: %v", err)
	}
	c := a.SubagentsConfig
	if c.MaxDepth < 1 || c.MaxDepth > config.MaxSubagentsMaxDepth || c.Timeout <= 0 || c.Timeout > 24*time.Hour {
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
		if d.Severity != config.Error && d.Severity != config.Warning {
			t.Errorf("diagnostic without severity: %v", d)
		}
	}
}

// Parser reads one agent file in a dialect, as config.ParseAgentTOML and
// a Dialect's ParseTOML and ParseMarkdown do.
type Parser func(data []byte, path string) (*config.Agent, config.Diagnostics)

// ParseFile reads the file path (a fixture under testdata) and parses it.
func ParseFile(t *testing.T, parse Parser, path string) (*config.Agent, config.Diagnostics) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return parse(data, path)
}

// FuzzAgent is the body of a parser's fuzz target, its seeds added by the
// target: whatever the input, parse (given the file name name) returns an
// agent whose values are in range (CheckAgent) or an error, never a panic,
// and the same diagnostics twice. check, unless nil, is what else holds
// for an agent of the dialect.
func FuzzAgent(f *testing.F, parse Parser, name string, check func(*testing.T, *config.Agent)) {
	f.Fuzz(func(t *testing.T, data []byte) {
		a, diags := parse(data, name)
		CheckAgent(t, a, diags)
		_, again := parse(data, name)
		if d := cmp.Diff(DiagStrings(diags), DiagStrings(again)); d != "" {
			t.Errorf("not deterministic (-first +second):\n%s", d)
		}
		if a != nil && check != nil {
			check(t, a)
		}
	})
}

// Names are the names of set's agents, in its order.
func Names(set *config.AgentSet) []string {
	var names []string
	for _, a := range set.List() {
		names = append(names, a.Name)
	}
	return names
}

// NameSources are set's agents as "name:source", in its order.
func NameSources(set *config.AgentSet) []string {
	var names []string
	for _, a := range set.List() {
		names = append(names, a.Name+":"+a.Source)
	}
	return names
}

// Home gives the test a user of its own: root, a new temporary directory,
// holds home, which is $HOME, with $XDG_CONFIG_HOME its .config; each
// variable of unset (a tool's own, $CLAUDE_CONFIG_DIR say) is emptied,
// so that nothing of the machine's user is read.
func Home(t *testing.T, unset ...string) (root, home string) {
	t.Helper()
	root = t.TempDir()
	home = filepath.Join(root, "home")
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	for _, v := range unset {
		t.Setenv(v, "")
	}
	return root, home
}

// LoadAgents loads the agents of dirs, failing the test on an error.
func LoadAgents(t *testing.T, dirs []config.Dir, opts config.LoadOptions) (*config.AgentSet, config.Diagnostics) {
	t.Helper()
	set, diags := config.LoadAgents(dirs, opts)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return set, diags
}

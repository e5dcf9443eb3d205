package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func ptr[T any](v T) *T { return &v }

// diagStrings renders diagnostics as "severity: text" for comparison.
func diagStrings(ds Diagnostics) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Severity.String()+": "+d.String())
	}
	return out
}

func TestParseAgentTOMLDefaults(t *testing.T) {
	a, diags := ParseAgentTOML([]byte("name = \"a\"\nmodel = \"openai/gpt-4.1\"\n"), "a.toml")
	if len(diags) != 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	if a.SubagentsConfig != DefaultSubagentsConfig() {
		t.Errorf("SubagentsConfig = %+v, want defaults %+v", a.SubagentsConfig, DefaultSubagentsConfig())
	}
	if a.Tools != nil {
		t.Errorf("Tools = %#v, want nil (not set)", a.Tools)
	}
	if a.Params.Temperature != nil || a.Params.MaxTokens != nil {
		t.Errorf("Params = %+v, want unset", a.Params)
	}
}

func TestParseAgentTOMLEmptyToolsIsNotUnset(t *testing.T) {
	a, _ := ParseAgentTOML([]byte("name = \"a\"\nmodel = \"inherit\"\ntools = []\n"), "a.toml")
	if a.Tools == nil || len(a.Tools) != 0 {
		t.Errorf("Tools = %#v, want empty non-nil", a.Tools)
	}
	if !a.InheritsModel() {
		t.Error("model inherit: InheritsModel() = false")
	}
}

func TestParseAgentTOMLExplicitZeroTemperature(t *testing.T) {
	a, diags := ParseAgentTOML([]byte("name = \"a\"\nmodel = \"inherit\"\n[params]\ntemperature = 0\n"), "a.toml")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if a.Params.Temperature == nil || *a.Params.Temperature != 0 {
		t.Errorf("temperature = %v, want explicit 0", a.Params.Temperature)
	}
}

// Every validation message of a TOML agent, exactly.
func TestParseAgentTOMLMessages(t *testing.T) {
	const head = "name = \"a\"\nmodel = \"openai/gpt-4.1\"\n"
	tests := []struct {
		name  string
		src   string
		nilOK bool // the agent is not loaded
		want  []string
	}{
		{
			name:  "syntax error",
			src:   "name = \"a\"\nmodel = \n",
			nilOK: true,
			want:  []string{"error: a.toml:2: invalid TOML: expected value but found '\\n' instead"},
		},
		{
			name:  "missing name",
			src:   "model = \"openai/gpt-4.1\"\n",
			nilOK: true,
			want:  []string{"error: a.toml: name: missing required key"},
		},
		{
			name:  "empty name",
			src:   "name = \"  \"\nmodel = \"openai/gpt-4.1\"\n",
			nilOK: true,
			want:  []string{"error: a.toml:1: name: must not be empty"},
		},
		{
			name:  "invalid name",
			src:   "name = \"a b\"\nmodel = \"openai/gpt-4.1\"\n",
			nilOK: true,
			want:  []string{`error: a.toml:1: name: "a b" is not a valid agent name (letters, digits, '_', '-' and '.', at most 64 characters, not starting with '.' or '-')`},
		},
		{
			name:  "name of wrong type",
			src:   "name = 3\nmodel = \"openai/gpt-4.1\"\n",
			nilOK: true,
			want:  []string{"error: a.toml:1: name: must be a string, got an integer"},
		},
		{
			name: "missing model",
			src:  "name = \"a\"\n",
			want: []string{`error: a.toml: model: missing required key (write "inherit" to use the parent's model)`},
		},
		{
			name: "empty model",
			src:  "name = \"a\"\nmodel = \"\"\n",
			want: []string{`error: a.toml:2: model: must not be empty (write "inherit" to use the parent's model)`},
		},
		{
			name: "unknown key",
			src:  head + "colour = \"red\"\n",
			want: []string{"error: a.toml:3: colour: unknown key"},
		},
		{
			name: "key in the wrong case",
			src:  head + "Max_Turns = 3\n",
			want: []string{`error: a.toml:3: Max_Turns: unknown key (keys are case-sensitive: did you mean "max_turns"?)`},
		},
		{
			name: "unknown table reported once",
			src:  head + "[extras]\na = 1\nb = 2\n",
			want: []string{"error: a.toml:3: extras: unknown key"},
		},
		{
			name: "unknown key in a known table",
			src:  head + "[sub_agents_config]\nmax_depht = 2\n",
			want: []string{"error: a.toml:4: sub_agents_config.max_depht: unknown key"},
		},
		{
			name: "unknown key under memory",
			src:  head + "[memory]\nenabled = true\nsize = 3\n",
			want: []string{
				"error: a.toml:5: memory.size: unknown key",
			},
		},
		{
			name: "memory path",
			src:  head + "[memory]\nenabled = true\npath = \"/tmp/m.md\"\nlast_n = -1\n",
			want: []string{
				"warning: a.toml:5: memory.path: deputy keeps agent memory in its ledger, not in a file; path is ignored",
				"error: a.toml:6: memory.last_n: must be between 0 and 2147483647, got -1",
			},
		},
		{
			name: "dotted unknown key",
			src:  head + "params.top_p = 0.9\n",
			want: []string{"error: a.toml:3: params.top_p: unknown key"},
		},
		{
			name: "max_depth too high",
			src:  head + "\n[sub_agents_config]\nmax_depth = 7\n",
			want: []string{"error: a.toml:5: sub_agents_config.max_depth: must be between 1 and 5 (0 means the default, 3), got 7"},
		},
		{
			name: "max_depth too low",
			src:  head + "[sub_agents_config]\nmax_depth = -1\n",
			want: []string{"error: a.toml:4: sub_agents_config.max_depth: must be between 1 and 5 (0 means the default, 3), got -1"},
		},
		{
			name: "timeout negative",
			src:  head + "[sub_agents_config]\ntimeout = -5\n",
			want: []string{"error: a.toml:4: sub_agents_config.timeout: must be a positive number of seconds (0 means the default, 120), got -5"},
		},
		{
			name: "timeout huge",
			src:  head + "[sub_agents_config]\ntimeout = 9999999999999\n",
			want: []string{"error: a.toml:4: sub_agents_config.timeout: must be at most 86400 seconds, got 9999999999999"},
		},
		{
			name: "parallel wrong type",
			src:  head + "[sub_agents_config]\nparallel = \"yes\"\n",
			want: []string{"error: a.toml:4: sub_agents_config.parallel: must be true or false, got a string"},
		},
		{
			name: "sub_agents_config not a table",
			src:  head + "sub_agents_config = 3\n",
			want: []string{"error: a.toml:3: sub_agents_config: must be a table, got an integer"},
		},
		{
			name: "max_turns negative",
			src:  head + "max_turns = -1\n",
			want: []string{"error: a.toml:3: max_turns: must not be negative, got -1"},
		},
		{
			name: "temperature out of range",
			src:  head + "[params]\ntemperature = 2.5\n",
			want: []string{"error: a.toml:4: params.temperature: must be between 0 and 2, got 2.5"},
		},
		{
			name: "max_tokens zero",
			src:  head + "[params]\nmax_tokens = 0\n",
			want: []string{"error: a.toml:4: params.max_tokens: must be between 1 and 2147483647, got 0"},
		},
		{
			name: "inline params table",
			src:  head + "params = { temperature = \"hot\" }\n",
			want: []string{"error: a.toml:3: params.temperature: must be a number, got a string"},
		},
		{
			name: "files not a list",
			src:  head + "files = \"*.go\"\n",
			want: []string{"error: a.toml:3: files: must be a list of strings, got a string"},
		},
		{
			name: "files with a number",
			src:  head + "files = [\"a\", 3]\n",
			want: []string{"error: a.toml:3: files: must be a list of strings, found an integer"},
		},
		{
			name: "empty sub-agent name",
			src:  head + "sub_agents = [\"b\", \"\"]\n",
			want: []string{"error: a.toml:3: sub_agents: entries must not be empty"},
		},
		{
			name: "sub-agent twice",
			src:  head + "sub_agents = [\"b\", \"b\"]\n",
			want: []string{`warning: a.toml:3: sub_agents: "b" is listed twice`},
		},
		{
			name: "name differs from file", // known by both, as in axe
			src:  "name = \"b\"\nmodel = \"inherit\"\n",
			want: nil,
		},
		{
			name: "several problems in file order",
			src:  head + "max_turns = -2\nbogus = 1\n[sub_agents_config]\nmax_depth = 9\n",
			want: []string{
				"error: a.toml:3: max_turns: must not be negative, got -2",
				"error: a.toml:4: bogus: unknown key",
				"error: a.toml:6: sub_agents_config.max_depth: must be between 1 and 5 (0 means the default, 3), got 9",
			},
		},
		{
			name: "key inside a multi-line string is not a key",
			src:  head + "system_prompt = \"\"\"\nbogus = 1\n\"\"\"\nwhat = 2\n",
			want: []string{"error: a.toml:6: what: unknown key"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, diags := ParseAgentTOML([]byte(tt.src), "a.toml")
			if (a == nil) != tt.nilOK {
				t.Errorf("agent = %v, want nil: %v", a, tt.nilOK)
			}
			if d := cmp.Diff(tt.want, diagStrings(diags)); d != "" {
				t.Errorf("diagnostics (-want +got):\n%s", d)
			}
		})
	}
}

func TestParseAgentTOMLBOM(t *testing.T) {
	a, diags := ParseAgentTOML([]byte("\ufeffname = \"a\"\nmodel = \"inherit\"\n"), "a.toml")
	if a == nil || diags.HasErrors() {
		t.Fatalf("BOM file: agent %v, diags %v", a, diags)
	}
}

func TestSplitTools(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Read, Grep", []string{"Read", "Grep"}},
		{"Read,Grep,", []string{"Read", "Grep"}},
		{"Agent(a, b), Bash", []string{"Agent(a, b)", "Bash"}},
		{"", []string{}},
		{" , ", []string{}},
		{"x)(, y", []string{"x)(, y"}},
	}
	for _, tt := range tests {
		if got := splitTools(tt.in); !cmp.Equal(got, tt.want) {
			t.Errorf("splitTools(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestValidAgentName(t *testing.T) {
	for _, ok := range []string{"a", "code-reviewer", "v1.2", "A_b", strings.Repeat("x", 64)} {
		if err := ValidAgentName(ok); err != nil {
			t.Errorf("ValidAgentName(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", ".a", "-a", "a/b", "a b", "é", strings.Repeat("x", 65)} {
		if err := ValidAgentName(bad); err == nil {
			t.Errorf("ValidAgentName(%q) = nil, want an error", bad)
		}
	}
}

// axe writes 0 for "the default"; such files must load unchanged.
func TestSubagentsConfigZeroMeansDefault(t *testing.T) {
	src := "name = \"a\"\nmodel = \"openai/gpt-4.1\"\n[sub_agents_config]\nmax_depth = 0\ntimeout = 0\n"
	a, diags := ParseAgentTOML([]byte(src), "a.toml")
	if diags.HasErrors() {
		t.Fatalf("diagnostics: %v", diags)
	}
	if a.SubagentsConfig != DefaultSubagentsConfig() {
		t.Errorf("got %+v, want the defaults", a.SubagentsConfig)
	}
}

func TestAgentBudget(t *testing.T) {
	a, diags := ParseAgentTOML([]byte("name = \"a\"\nmodel = \"inherit\"\n[budget]\ntokens = 1000\nusd = 0.5\ntime = \"30s\"\nturns = 4\n"), "a.toml")
	if len(diags) != 0 {
		t.Fatalf("diags: %v", diagStrings(diags))
	}
	if want := (Budget{Tokens: 1000, USD: 0.5, Time: 30 * time.Second, Turns: 4}); a.Budget != want {
		t.Errorf("budget = %+v, want %+v", a.Budget, want)
	}
	_, diags = ParseAgentTOML([]byte("name = \"a\"\nmodel = \"inherit\"\n[budget]\ntokens = -1\ntime = \"soon\"\nusd = \"x\"\nextra = 1\n"), "a.toml")
	want := []string{
		"error: a.toml:4: budget.tokens: must not be negative, got -1",
		"error: a.toml:5: budget.time: must be a duration such as \"30s\" or \"5m\", got \"soon\"",
		"error: a.toml:6: budget.usd: must be a number, got a string",
		"error: a.toml:7: budget.extra: unknown key",
	}
	if d := cmp.Diff(want, diagStrings(diags)); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
}

func TestAgentMarkdownBudget(t *testing.T) {
	a, diags := ParseAgentMarkdown([]byte("---\nname: a\nbudget:\n  tokens: 200\n  time: 1m\n---\nbody\n"), "a.md")
	if len(diags) != 0 {
		t.Fatalf("diags: %v", diagStrings(diags))
	}
	if want := (Budget{Tokens: 200, Time: time.Minute}); a.Budget != want {
		t.Errorf("budget = %+v, want %+v", a.Budget, want)
	}
}

// A front matter's budget.max_tokens is honoured as budget.tokens, as in a
// TOML file; it was honoured while a warning said it was ignored.
func TestAgentMarkdownBudgetMaxTokens(t *testing.T) {
	a, diags := ParseAgentMarkdown([]byte("---\nname: a\nbudget:\n  max_tokens: 100\n---\nbody\n"), "a.md")
	if len(diags) != 0 {
		t.Errorf("diags: %v", diagStrings(diags))
	}
	if want := (Budget{Tokens: 100}); a.Budget != want {
		t.Errorf("budget = %+v, want %+v", a.Budget, want)
	}
}

// isolation = "worktree" (or "none") is read in TOML and front matter
// alike; another value is an error in TOML and a warning in Markdown,
// whose loader (Claude Code's) is lenient.
func TestAgentIsolation(t *testing.T) {
	for _, v := range []string{IsolationWorktree, IsolationNone} {
		a, diags := ParseAgentTOML([]byte("name = \"a\"\nmodel = \"inherit\"\nisolation = \""+v+"\"\n"), "a.toml")
		if len(diags) != 0 || a.Isolation != v {
			t.Errorf("TOML %s: isolation %q, diags %v", v, a.Isolation, diagStrings(diags))
		}
		a, diags = ParseAgentMarkdown([]byte("---\nname: a\nisolation: "+v+"\n---\nbody\n"), "a.md")
		if len(diags) != 0 || a.Isolation != v {
			t.Errorf("Markdown %s: isolation %q, diags %v", v, a.Isolation, diagStrings(diags))
		}
	}
	_, diags := ParseAgentTOML([]byte("name = \"a\"\nmodel = \"inherit\"\nisolation = \"container\"\n"), "a.toml")
	if d := cmp.Diff([]string{`error: a.toml:3: isolation: must be "worktree" (a git worktree of its own) or "none", not "container"`}, diagStrings(diags)); d != "" {
		t.Errorf("TOML diagnostics (-want +got):\n%s", d)
	}
	a, diags := ParseAgentMarkdown([]byte("---\nname: a\nisolation: container\n---\nbody\n"), "a.md")
	if d := cmp.Diff([]string{`warning: a.md:3: isolation: must be "worktree" (a git worktree of its own) or "none", not "container"; ignored`}, diagStrings(diags)); d != "" || a.Isolation != "" {
		t.Errorf("Markdown diagnostics (-want +got):\n%s; isolation %q", d, a.Isolation)
	}
}

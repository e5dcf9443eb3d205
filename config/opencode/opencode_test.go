package opencode

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/internal/configtest"
	"github.com/deputyhq/deputy/config/internal/jsonc"
	"github.com/deputyhq/deputy/config/internal/testfile"
)

// An opencode agent file: named after its file, its model, temperature
// and steps honoured, every tool its permissions allow (ask_user only when
// question is allowed), the tools map and permission evaluated as opencode
// evaluates them (the last matching rule decides), and one warning for
// what deputy cannot honour.
func TestParseAgent(t *testing.T) {
	src := `---
description: Reviews code
mode: subagent
model: anthropic/claude-sonnet-4-20250514
temperature: 0.1
steps: 12
variant: high
tools:
  write: false
  websearch: true
permission:
  bash:
    "git *": allow
    "*": deny
  webfetch: ask
  mymcp_*: deny
---
You review code.
`
	a, diags := Dialect.ParseMarkdown([]byte(src), "review.md")
	if a == nil || diags.HasErrors() {
		t.Fatalf("agent %v, diagnostics %v", a, diags)
	}
	if a.Name != "review" || a.Description != "Reviews code" || a.Model != "anthropic/claude-sonnet-4-20250514" ||
		*a.Params.Temperature != 0.1 || a.MaxTurns != 12 || a.Params.Effort != "high" || a.SystemPrompt != "You review code." {
		t.Errorf("agent %+v", a)
	}
	if d := cmp.Diff([]string{config.ToolsAll}, a.Tools); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
	// webfetch asks: fetch stays, with an ask rule of the agent's.
	want := []string{"write_file", "edit_file", "terminal", "ask_user", "mcp__mymcp"}
	if d := cmp.Diff(want, a.DisallowedTools); d != "" {
		t.Errorf("disallowed (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"ask fetch"}, a.Permissions.Lines()); d != "" || a.Permissions.Ask[0].Source != "review.md" {
		t.Errorf("rules (-want +got):\n%s", d)
	}
	wantDiags := []string{
		`warning: review.md:11: permission: "bash": rules for some commands or paths only are not honoured (opencode's last matching pattern decides; deputy's rules put deny before ask before allow), so these tools are left out`,
	}
	if d := cmp.Diff(wantDiags, configtest.DiagStrings(diags)); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
	if !slices.Equal(a.Optional.Patterns, []string{"*"}) {
		t.Errorf("task: patterns %v", a.Optional.Patterns)
	}

	// The last matching rule decides: "*" after read denies read too.
	a, _ = Dialect.ParseMarkdown([]byte("---\ndescription: d\npermission:\n  read: allow\n  \"*\": deny\n  question: allow\n---\n"), "x.md")
	if d := cmp.Diff([]string{"read_file", "write_file", "edit_file", "find_path", "grep", "list_directory", "terminal", "fetch", "todo_write", "todo_read", "web_search"}, a.DisallowedTools); d != "" {
		t.Errorf("order (-want +got):\n%s", d)
	}
	if a.Optional.Patterns != nil {
		t.Errorf("task denied by *: patterns %v", a.Optional.Patterns)
	}
	// A permission that is one action applies to every tool; task names
	// the subagents the agent may spawn.
	a, _ = Dialect.ParseMarkdown([]byte("---\ndescription: d\npermission: allow\n---\n"), "x.md")
	if len(a.DisallowedTools) != 0 {
		t.Errorf("allow: disallowed %v", a.DisallowedTools)
	}
	a, _ = Dialect.ParseMarkdown([]byte("---\ndescription: d\npermission:\n  task:\n    \"*\": deny\n    \"review-*\": allow\n---\n"), "x.md")
	if !slices.Equal(a.Optional.Patterns, []string{"review-*"}) {
		t.Errorf("task patterns %v", a.Optional.Patterns)
	}
	// A subagent the task mapping denies or asks for is a rule on
	// call_agent: "*" allowing the rest does not let the agent call it.
	a, _ = Dialect.ParseMarkdown([]byte("---\ndescription: d\npermission:\n  task:\n    \"*\": allow\n    deploy: deny\n    \"docs-*\": ask\n---\n"), "x.md")
	if !slices.Equal(a.Optional.Patterns, []string{"*", "docs-*"}) {
		t.Errorf("task patterns %v", a.Optional.Patterns)
	}
	if d := cmp.Diff([]string{"ask call_agent(docs-*)", "deny call_agent(deploy)"}, a.Permissions.Lines()); d != "" {
		t.Errorf("task rules (-want +got):\n%s", d)
	}
	a, _ = Dialect.ParseMarkdown([]byte("---\ndescription: d\npermission:\n  task: ask\n---\n"), "x.md")
	if !slices.Equal(a.Optional.Patterns, []string{"*"}) || !slices.Equal(a.Permissions.Lines(), []string{"ask call_agent"}) {
		t.Errorf("task: ask: patterns %v, rules %v", a.Optional.Patterns, a.Permissions.Lines())
	}
	// opencode's websearch is web_search.
	a, diags = Dialect.ParseMarkdown([]byte("---\ndescription: d\ntools:\n  websearch: false\n---\n"), "x.md")
	if !slices.Equal(a.DisallowedTools, []string{"ask_user", "web_search"}) || len(diags) != 0 {
		t.Errorf("websearch: false: disallowed %v, diagnostics %v", a.DisallowedTools, diags)
	}
}

// What opencode accepts and deputy reads with a warning, and what it
// refuses.
func TestParseAgentMessages(t *testing.T) {
	for _, tt := range []struct {
		src  string
		want []string
	}{
		{"---\ndescription: d\nmodel: claude-4-sonnet\n---\n", []string{`warning: a.md:3: model: "claude-4-sonnet" is not provider/model, as opencode reads a model; the agent runs on its caller's model`}},
		{"---\ndescription: d\npermissions:\n  bash: deny\n---\n", []string{"warning: a.md:4: permissions.bash: unknown key; ignored"}},
		{"---\ndescription: d\nmode: helper\n---\n", []string{`warning: a.md:3: mode: "helper" is not one of opencode's modes (primary, subagent, all); the agent loads as all`}},
		{"---\ndescription: d\ntemperature: 3\n---\n", []string{"error: a.md:3: temperature: must be between 0 and 2, got 3"}},
		{"---\ndescription: d\nsteps: 0\n---\n", []string{"error: a.md:3: steps: must be a positive integer, got 0"}},
		{"---\ndescription: d\nmaxSteps: 5\ncolor: \"#ff0000\"\n---\n", []string{"warning: a.md:4: color: key color is an opencode setting deputy ignores"}},
	} {
		a, diags := Dialect.ParseMarkdown([]byte(tt.src), "a.md")
		if a == nil {
			t.Errorf("%q: no agent: %v", tt.src, diags)
			continue
		}
		if d := cmp.Diff(tt.want, configtest.DiagStrings(diags)); d != "" {
			t.Errorf("%q (-want +got):\n%s", tt.src, d)
		}
	}
}

// opencode's directories: agents in agent/ and agents/ of each
// configuration directory (subdirectories too, named after their file),
// the agent section of opencode.json ({file:} prompts, JSONC), a
// disabled agent left out, opencode's built-in agents not taken for
// deputy's, the model opencode.json names as the root's, and task as
// call_agent over the other opencode agents.
func TestAgentDirs(t *testing.T) {
	root, home := configtest.Home(t, "OPENCODE_CONFIG", "OPENCODE_CONFIG_DIR", "XDG_STATE_HOME")
	proj := filepath.Join(root, "proj")
	testfile.WriteFiles(t, root, map[string]string{
		"home/.config/opencode/opencode.json":         `{"model": "openai/gpt-test", "agent": {"build": {"model": "x/y"}}}`,
		"home/.config/opencode/agent/global.md":       "---\ndescription: global\n---\nGLOBAL\n",
		"proj/.git/HEAD":                              "ref\n",
		"proj/opencode.jsonc":                         "{\n  // the project's\n  \"agent\": {\n    \"docs\": {\"description\": \"docs\", \"prompt\": \"{file:./prompts/docs.txt}\", \"mode\": \"subagent\",},\n    \"old\": {\"description\": \"off\", \"disable\": true},\n  },\n}\n",
		"proj/prompts/docs.txt":                       "Write docs.\n",
		"proj/.opencode/agents/lead.md":               "---\ndescription: lead\nmode: primary\npermission:\n  task:\n    docs: allow\n---\nLEAD\n",
		"proj/.opencode/agent/review/security.md":     "---\ndescription: security\nmodel: anthropic/claude-x\n---\nSEC\n",
		"proj/.opencode/agent/review/notes/README.md": "not an agent\n",
	})
	set, diags := configtest.LoadAgents(t, AgentDirs(proj), config.LoadOptions{})
	if d := cmp.Diff([]string{"docs:opencode", "global:opencode", "lead:opencode", "security:opencode"}, configtest.NameSources(set)); d != "" {
		t.Errorf("agents (-want +got):\n%s", d)
	}
	docs, _ := set.Get("docs")
	if docs == nil || docs.SystemPrompt != "Write docs." || docs.RootModel != "openai/gpt-test" || docs.Path != filepath.Join(proj, "opencode.jsonc") {
		t.Errorf("docs %+v", docs)
	}
	if sec, _ := set.Get("security"); sec == nil || sec.RootModel != "" || sec.Model != "anthropic/claude-x" {
		t.Errorf("security %+v", sec)
	}
	if lead, _ := set.Get("lead"); lead == nil || !slices.Equal(lead.Subagents, []string{"docs"}) {
		t.Errorf("lead %+v", lead)
	}
	if g, _ := set.Get("global"); g == nil || !slices.Equal(g.Subagents, []string{"docs", "lead", "security"}) {
		t.Errorf("global %+v", g)
	}
	var got []string
	for _, d := range diags {
		got = append(got, d.String())
	}
	want := []string{
		filepath.Join(home, ".config", "opencode", "opencode.json") + `:1: agent.build: adjusts opencode's built-in agent "build", which deputy does not have; left out`,
		filepath.Join(proj, "opencode.jsonc") + `: agent "old" is left out: disable: true, as opencode leaves it out`,
		filepath.Join(proj, ".opencode", "agent", "review", "notes", "README.md") + ": no front matter, so not an agent; skipped",
		filepath.Join(proj, ".opencode", "agent", "review", "security.md") + `: opencode calls this agent "review/security"; deputy calls it "security", its file's name`,
	}
	slices.Sort(got)
	slices.Sort(want)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
}

func TestStrip(t *testing.T) {
	for in, want := range map[string]string{
		`{"a": "http://x//y", /* c */ "b": [1, 2,], }`: `{"a": "http://x//y",  "b": [1, 2 ]  }`,
		"{\n// line\n\"a\": \"\\\"//\"\n}":             "{\n\n\"a\": \"\\\"//\"\n}",
		"{\"a\": 1 /* x\ny */, \"b\": 2}":              "{\"a\": 1 \n, \"b\": 2}",
	} {
		if got := string(jsonc.Strip([]byte(in))); got != want {
			t.Errorf("jsonc.Strip(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSessionModel(t *testing.T) {
	root := t.TempDir()
	t.Setenv("HOME", filepath.Join(root, "home"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(root, "xdg"))
	t.Setenv("OPENCODE_CONFIG", "")
	t.Setenv("OPENCODE_CONFIG_DIR", "")
	testfile.WriteFiles(t, root, map[string]string{
		"xdg/opencode/opencode.json":       `{"model": "openai/gpt-global"}`,
		"proj/.git/HEAD":                   "",
		"proj/opencode.json":               `{"model": "anthropic/claude-proj", // the project's` + "\n}",
		"proj/sub/.opencode/opencode.json": `{"model": "no-provider"}`,
	})
	// The model opencode last used (its state's model.json) comes after
	// every configuration file: one that names a model wins over it.
	t.Setenv("XDG_STATE_HOME", filepath.Join(root, "state"))
	testfile.WriteFiles(t, root, map[string]string{
		"state/opencode/model.json": `{"recent": [{"providerID": "google", "modelID": "gemini-2.5-pro"}, {"providerID": "openai", "modelID": "gpt-5"}], "favorite": []}`,
	})
	if got := SessionModel(filepath.Join(root, "proj", "sub")); got != "anthropic/claude-proj" {
		t.Errorf("SessionModel = %q", got)
	}
	if err := os.Remove(filepath.Join(root, "proj", "opencode.json")); err != nil {
		t.Fatal(err)
	}
	if got := SessionModel(filepath.Join(root, "proj")); got != "openai/gpt-global" || strings.Contains(got, "no-provider") {
		t.Errorf("SessionModel = %q", got)
	}
	// ~/.opencode and $OPENCODE_CONFIG_DIR, where agents are found too,
	// come last, as in opencode.
	testfile.WriteFiles(t, root, map[string]string{
		"home/.opencode/opencode.json": `{"model": "openai/gpt-home"}`,
		"dir/opencode.jsonc":           `{"model": "openai/gpt-dir"}`,
	})
	if got := SessionModel(filepath.Join(root, "proj")); got != "openai/gpt-home" {
		t.Errorf("SessionModel with ~/.opencode = %q", got)
	}
	t.Setenv("OPENCODE_CONFIG_DIR", filepath.Join(root, "dir"))
	if got := SessionModel(filepath.Join(root, "proj")); got != "openai/gpt-dir" {
		t.Errorf("SessionModel with $OPENCODE_CONFIG_DIR = %q", got)
	}
}

// With no opencode.json naming a model, opencode runs a session on the
// model it last used (the first of recent in its state's model.json,
// $XDG_STATE_HOME/opencode, else ~/.local/state/opencode), before its own
// pick from its model catalogue, which deputy does not have.
func TestSessionModelLastUsed(t *testing.T) {
	root, _ := configtest.Home(t, "XDG_STATE_HOME", "OPENCODE_CONFIG", "OPENCODE_CONFIG_DIR")
	proj := filepath.Join(root, "proj")
	testfile.WriteFiles(t, root, map[string]string{"proj/.git/HEAD": ""})
	if got := SessionModel(proj); got != "" {
		t.Errorf("SessionModel with no state = %q", got)
	}
	for _, c := range []struct{ file, want string }{
		{`{"recent": [{"providerID": "anthropic", "modelID": "claude-sonnet-4-5"}, {"providerID": "openai", "modelID": "gpt-5"}]}`, "anthropic/claude-sonnet-4-5"},
		// An entry opencode would skip for want of its ids is skipped.
		{`{"recent": [{"providerID": "anthropic"}, 3, {"providerID": "openai", "modelID": "gpt-5"}]}`, "openai/gpt-5"},
		{`{"recent": []}`, ""},
		{`{"recent": {"providerID": "openai", "modelID": "gpt-5"}}`, ""},
		{`not json`, ""},
	} {
		testfile.WriteFiles(t, root, map[string]string{"home/.local/state/opencode/model.json": c.file})
		if got := SessionModel(proj); got != c.want {
			t.Errorf("model.json %s: SessionModel = %q, want %q", c.file, got, c.want)
		}
	}
	// $XDG_STATE_HOME moves it, as it moves opencode's.
	testfile.WriteFiles(t, root, map[string]string{"xdg-state/opencode/model.json": `{"recent": [{"providerID": "google", "modelID": "gemini-2.5-pro"}]}`})
	t.Setenv("XDG_STATE_HOME", filepath.Join(root, "xdg-state"))
	if got := SessionModel(proj); got != "google/gemini-2.5-pro" {
		t.Errorf("SessionModel with $XDG_STATE_HOME = %q", got)
	}
}

// An agent deputy cannot call by its name (an opencode.json key, a file's
// name, neither a name deputy takes) is left out with one warning; a name
// key deputy cannot use gives way to the entry's key, as to a file's name.
// FuzzConfigFile found "0!" loaded as an agent.
func TestAgentNames(t *testing.T) {
	const rule = `is not a valid agent name (letters, digits, '_', '-' and '.', at most 64 characters, not starting with '.' or '-')`
	for _, tt := range []struct {
		json  string
		names []string
		want  []string
	}{
		{`{"agent": {"0!": {"description": "d"}, "ok": {"description": "d"}}}`, []string{"ok"},
			[]string{`warning: opencode.json:1: agent.0!: "0!" ` + rule + `; deputy cannot call the agent by it, so it is left out`}},
		{"{\"agent\": {\n\"c\": {\"name\": \"Not Valid\"}}}", []string{"c"},
			[]string{`warning: opencode.json:2: agent.c.name: "Not Valid" ` + rule + `; the agent is called "c", its key`}},
		{`{"agent": {"my agent": {"name": "Not Valid"}}}`, nil,
			[]string{`warning: opencode.json:1: agent.my agent.name: "Not Valid" ` + rule + `; deputy cannot call the agent by it, so it is left out`}},
	} {
		p := testfile.Temp(t, "opencode.json", tt.json)
		agents, diags := loadConfigFile(p, Source)
		var names []string
		for _, a := range agents {
			names = append(names, a.Name)
		}
		if d := cmp.Diff(tt.names, names); d != "" {
			t.Errorf("%s: agents (-want +got):\n%s", tt.json, d)
		}
		got := configtest.DiagStrings(diags)
		for i := range got {
			got[i] = strings.ReplaceAll(got[i], p, "opencode.json")
		}
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("%s: diagnostics (-want +got):\n%s", tt.json, d)
		}
	}

	a, diags := Dialect.ParseMarkdown([]byte("---\ndescription: d\n---\n"), "my agent.md")
	want := []string{`warning: my agent.md: "my agent" ` + rule + `; deputy cannot call the agent by it, so it is left out`}
	if d := cmp.Diff(want, configtest.DiagStrings(diags)); a != nil || d != "" {
		t.Errorf("my agent.md: agent %v, diagnostics (-want +got):\n%s", a, d)
	}
}

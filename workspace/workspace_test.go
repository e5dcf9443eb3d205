package workspace_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/workspace"
)

// isolate keeps the user's own configuration and ledger out of a test.
func isolate(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local", "state"))
	t.Setenv("DEPUTY_DB", "")
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("ANTHROPIC_MODEL", "")
	for _, k := range []string{"OPENCODE_CONFIG", "OPENCODE_CONFIG_DIR", "GEMINI_CLI_HOME", "CODEX_HOME"} {
		t.Setenv(k, "")
	}
	return home
}

// The README's team runs from a loaded workspace as it does from the
// command, and the run is in the ledger the workspace opens.
func TestEngineRunsTheTeamExample(t *testing.T) {
	home := isolate(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(home, "ledger.db")
	w, err := workspace.Load(workspace.Options{Dir: root, AgentsDirs: []string{filepath.Join(root, "examples", "team")}, DB: db})
	if err != nil {
		t.Fatal(err)
	}
	if got := w.LedgerPath(); got != db {
		t.Errorf("LedgerPath() = %q, want %q", got, db)
	}
	a, _, err := w.Agent("lead")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ledger, err := w.OpenLedger(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer ledger.Close()
	env := w.Engine(ledger).Run(ctx, delegate.RunRequest{Agent: a, Task: "How does deputy keep a parent's context small?", Workdir: root})
	if !env.OK() {
		t.Fatalf("run failed: %s", env.Error)
	}
	if len(env.Children) != 2 {
		t.Errorf("lead ran %d children, want the researcher and the writer", len(env.Children))
	}
	tree, err := ledger.Tree(ctx, env.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if len(tree) != 3 {
		t.Errorf("ledger holds %d runs of the tree, want 3", len(tree))
	}
}

// An engine built without a ledger (even a nil *store.Store) runs and
// records nothing.
func TestEngineWithoutLedger(t *testing.T) {
	isolate(t)
	root, _ := filepath.Abs("..")
	w, err := workspace.Load(workspace.Options{Dir: root, AgentsDirs: []string{filepath.Join(root, "examples", "team")}})
	if err != nil {
		t.Fatal(err)
	}
	a, _, err := w.Agent("lead")
	if err != nil {
		t.Fatal(err)
	}
	env := w.Engine(nil).Run(context.Background(), delegate.RunRequest{Agent: a, Task: "Why?", Workdir: root})
	if !env.OK() {
		t.Fatalf("run failed: %s", env.Error)
	}
}

func TestAgentErrors(t *testing.T) {
	isolate(t)
	w, err := workspace.Load(workspace.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = w.Agent("nobody")
	if err == nil || !strings.Contains(err.Error(), `no agent named "nobody"; no agents are defined`) {
		t.Errorf("Agent(nobody) error = %v", err)
	}
	if _, err := workspace.Load(workspace.Options{Dir: t.TempDir(), AgentsDirs: []string{"/does/not/exist"}}); err == nil ||
		err.Error() != "--agents-dir /does/not/exist: not a directory" {
		t.Errorf("Load with a missing agents dir: %v", err)
	}
}

// A lazily loaded workspace runs an agent and what it calls with the
// diagnostics of their files only: a broken file of another agent does not
// stop it, a broken sub-agent does, and the list still shows every agent.
func TestLazyAgent(t *testing.T) {
	home := isolate(t)
	dir := t.TempDir()
	agents := filepath.Join(dir, ".deputy", "agents")
	write(t, filepath.Join(agents, "lead.toml"), `name = "lead"
model = "openai/gpt-5-mini"
system_prompt = "Lead."
sub_agents = ["helper"]
`)
	write(t, filepath.Join(agents, "helper.md"), "---\nname: helper\nmodel: inherit\ndescription: Helps.\ncolour: red\n---\nHelp.\n")
	write(t, filepath.Join(agents, "broken.toml"), "model = \n")
	write(t, filepath.Join(agents, "caller.toml"), `name = "caller"
model = "openai/gpt-5-mini"
system_prompt = "Calls."
sub_agents = ["missing"]
`)
	w, err := workspace.Load(workspace.Options{Dir: dir, Lazy: true})
	if err != nil {
		t.Fatal(err)
	}
	a, warns, err := w.Agent("lead")
	if err != nil {
		t.Fatalf("Agent(lead): %v", err)
	}
	if a.Name != "lead" || len(warns) != 1 || warns[0].Key != "colour" {
		t.Errorf("Agent(lead) = %s, warnings %v; want lead with its helper's warning", a.Name, warns)
	}
	if _, _, err := w.Agent("caller"); err == nil || !strings.Contains(err.Error(), `no agent named "missing"`) {
		t.Errorf("Agent(caller) error = %v; want the missing sub-agent", err)
	}
	if _, _, err := w.Agent("broken"); err == nil || !strings.Contains(err.Error(), "cannot be loaded") {
		t.Errorf("Agent(broken) error = %v; want its file's error", err)
	}
	if n := len(w.Agents.List()); n != 3 {
		t.Errorf("List has %d agents, want 3 (lead, helper, caller)", n)
	}
	if _, err := os.Stat(filepath.Join(home, ".cache", "deputy", "agent-index")); err != nil {
		t.Errorf("no index in the cache directory: %v", err)
	}
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The agents' hooks are engine hooks only for a run that can reach an
// agent with hooks: a tree of agents without them keeps the engine's
// cheaper path (no wrapped tools, children that hand their ledger writes
// to their parents).
func TestAgentHooksOnlyWhereAnAgentHasThem(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	agents := filepath.Join(dir, ".deputy", "agents")
	write(t, filepath.Join(agents, "lead.toml"), "name = \"lead\"\nmodel = \"openai/gpt-5-mini\"\nsystem_prompt = \"Lead.\"\nsub_agents = [\"guarded\"]\n")
	write(t, filepath.Join(agents, "plain.toml"), "name = \"plain\"\nmodel = \"openai/gpt-5-mini\"\nsystem_prompt = \"Plain.\"\n")
	write(t, filepath.Join(agents, "guarded.md"), `---
name: guarded
description: Guarded.
hooks:
  PreToolUse:
    - matcher: "Bash"
      hooks:
        - type: command
          command: "exit 2"
---
Guarded.
`)
	w, err := workspace.Load(workspace.Options{Dir: dir, Lazy: true})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"plain": false, "guarded": true, "lead": true} {
		a, _, err := w.Agent(name)
		if err != nil {
			t.Fatalf("Agent(%s): %v", name, err)
		}
		if got := w.AgentHooks(a) != nil; got != want {
			t.Errorf("AgentHooks(%s) set = %v, want %v", name, got, want)
		}
	}
}

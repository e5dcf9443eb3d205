package workspace_test

import (
	"context"
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

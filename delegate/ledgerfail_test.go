package delegate_test

import (
	"bytes"
	"context"
	"database/sql"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	_ "modernc.org/sqlite" // the raw connection that plants the failure

	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/store"
)

const ledgerFailScript = `
rules:
  - name: lead-first
    match: {system: "^LEAD", last_role: user}
    reply:
      tool_calls:
        - {name: call_agent, arguments: {agent: worker, task: "one"}}
  - name: lead-final
    match: {system: "^LEAD", last_role: tool}
    reply: {text: "lead got: {{ join .ToolResults \" | \" }}"}
  - name: worker
    match: {system: "^WORKER"}
    reply: {text: "did {{ .LastUser }}"}
`

// lockedBuffer is a log destination shared by the runs' goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestLedgerWriteFailure: the ledger refuses the root's message that asks
// for a child (a real SQLite error, from a trigger). The run still answers;
// its envelope says the record is incomplete (LedgerErr) and the logger
// says so once; what the root recorded is its conversation up to the
// failure, with no hole for a resume to trip on, and its end.
func TestLedgerWriteFailure(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	st, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`CREATE TRIGGER refuse_calls BEFORE INSERT ON messages WHEN NEW.tool_calls IS NOT NULL
BEGIN SELECT RAISE(ABORT, 'the disk says no'); END`); err != nil {
		t.Fatal(err)
	}

	h := newHarness(t, ledgerFailScript, agentDef("lead", "LEAD", "worker"), agentDef("worker", "WORKER"))
	h.engine.Ledger = st
	var logs lockedBuffer
	h.engine.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	env := h.run(agentDef("lead", "LEAD", "worker"), "go")

	if env.Status != delegate.StatusOK || env.Output != "lead got: did one" {
		t.Fatalf("run = %s %q (%s), want ok with the answer", env.Status, env.Output, env.Error)
	}
	if env.LedgerErr == nil || !strings.Contains(env.LedgerErr.Error(), "the disk says no") {
		t.Errorf("LedgerErr = %v, want the ledger's failure", env.LedgerErr)
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, logs.String())
	}

	msgs, err := st.Messages(ctx, env.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || msgs[0].Role != "user" {
		t.Errorf("the root recorded %+v, want only its task (nothing after the refused message)", msgs)
	}
	root, err := st.GetRun(ctx, env.RunID)
	if err != nil || root.Status != store.StatusOK || root.Output != env.Output {
		t.Errorf("root row = %+v, %v; want it finished ok with its answer", root, err)
	}
	if len(env.Children) != 1 {
		t.Fatalf("children: %+v", env.Children)
	}
	child, err := st.GetRun(ctx, env.Children[0].RunID)
	if err != nil || child.Status != store.StatusOK || child.Output != "did one" {
		t.Errorf("child row = %+v, %v; want it recorded ok", child, err)
	}
}

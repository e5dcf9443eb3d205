package delegate_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm"
)

// recordingExecutor runs children here, as Local does, and keeps their
// specs.
type recordingExecutor struct {
	mu    sync.Mutex
	specs []delegate.RunSpec
}

func (x *recordingExecutor) Execute(ctx context.Context, c *delegate.Child) *delegate.Envelope {
	x.mu.Lock()
	x.specs = append(x.specs, c.Spec())
	x.mu.Unlock()
	return c.Run(ctx)
}

func TestExecutorRunsEveryChild(t *testing.T) {
	lead := agentDef("lead", "LEAD agent", "researcher", "writer")
	h := newHarness(t, teamScript, lead, agentDef("researcher", "RESEARCHER"), agentDef("writer", "WRITER"))
	x := &recordingExecutor{}
	h.engine.Executor = x
	env := h.run(lead, "tides")
	if !env.OK() || env.Output != "LEAD GOT: facts about (research tides) | prose" {
		t.Fatalf("run: %+v", env)
	}
	if len(x.specs) != 2 {
		t.Fatalf("the executor saw %d children, want 2", len(x.specs))
	}
	for _, sp := range x.specs {
		if sp.Depth != 1 || sp.ParentID != env.RunID || sp.RootID != env.RunID || sp.ToolCallID == "" || sp.Kind != delegate.KindCallAgent {
			t.Errorf("child spec %+v", sp)
		}
		if sp.Agent != "researcher" && sp.Agent != "writer" || len(sp.Messages) != 1 {
			t.Errorf("child spec agent %q messages %+v", sp.Agent, sp.Messages)
		}
	}
}

func TestRemoteStepsHandTheChildOver(t *testing.T) {
	lead := agentDef("lead", "LEAD agent", "researcher", "writer")
	h := newHarness(t, teamScript, lead, agentDef("researcher", "RESEARCHER"), agentDef("writer", "WRITER"))
	ctx := context.Background()
	spec, err := h.engine.Describe(delegate.RunRequest{Agent: lead, Task: "tides", Workdir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := h.engine.ModelStep(ctx, spec, spec.Messages, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.ToolCalls) != 2 || !strings.Contains(strings.Join(toolNames(h.prov.requests("LEAD")[0]), ","), "call_agent") {
		t.Fatalf("lead's first step: %+v", resp.Message)
	}
	call := resp.Message.ToolCalls[0]
	out, err := h.engine.ToolStep(ctx, spec, call, nil)
	if err != nil || out.Child == nil {
		t.Fatalf("first tool step: %+v, %v", out, err)
	}
	if c := out.Child; c.Agent != "researcher" || c.Depth != 1 || c.ParentID != spec.RunID || c.ToolCallID != call.ID {
		t.Errorf("child spec %+v", c)
	}
	if n := len(h.prov.requests("RESEARCHER")); n != 0 {
		t.Errorf("the child ran in the step (%d model calls)", n)
	}
	out, err = h.engine.ToolStep(ctx, spec, call, &delegate.Envelope{Status: delegate.StatusOK, Output: "remote facts"})
	if err != nil || out.Child != nil || out.Result.Content != "remote facts" || out.Result.IsError {
		t.Fatalf("answered tool step: %+v, %v", out, err)
	}
	// The guard still refuses what the scope does not allow.
	bad := llm.ToolCall{ID: "x1", Name: "call_agent", Arguments: json.RawMessage(`{"agent":"stranger","task":"t"}`)}
	out, err = h.engine.ToolStep(ctx, spec, bad, nil)
	if err != nil || out.Child != nil || !out.Result.IsError {
		t.Fatalf("refused step: %+v, %v", out, err)
	}
}

package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
)

// runTools runs the calls of one response, at most ToolConcurrency at a
// time, and returns their results in call order. It returns once every call
// has finished; tools are expected to return promptly when ctx is done.
func (r *runner) runTools(ctx context.Context, calls []llm.ToolCall) []tool.Result {
	results := make([]tool.Result, len(calls))
	limit := r.spec.ToolConcurrency
	switch {
	case limit == 0:
		limit = DefaultToolConcurrency
	case limit < 0:
		limit = len(calls)
	}
	if len(calls) == 1 || limit == 1 {
		for i := range calls {
			results[i] = r.runTool(ctx, &calls[i])
		}
		return results
	}
	// The places are taken here, in call order, before each call's
	// goroutine starts: a later call never holds one while an earlier
	// call waits, so a call may wait for its elder siblings (an isolated
	// child's merge waits for theirs) without waiting for one that cannot
	// start.
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := range calls {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			results[i] = tool.Errorf("Tool call not run: %v", ctx.Err())
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[i] = r.runTool(ctx, &calls[i])
		}()
	}
	wg.Wait()
	return results
}

// runTool runs one call: unknown tool, refused call, invalid JSON, a
// returned error and a panic all become error results the model can read.
// call is the conversation's own (in the answer that asked for it), not a
// copy: a wide fan-out's tool goroutines each saved one allocation, and
// nothing changes a call once it has been asked for.
func (r *runner) runTool(ctx context.Context, call *llm.ToolCall) (res tool.Result) {
	start := time.Now()
	ctx = context.WithValue(ctx, toolCallKey{}, call)
	r.emit(Event{Kind: EventToolStart, Turn: r.res.Turns, Call: call})
	defer func() {
		r.emit(Event{Kind: EventToolEnd, Turn: r.res.Turns, Call: call, Result: &res, Duration: time.Since(start)})
	}()

	// The guard comes first and sees every call, also calls of tools this
	// run was never offered: a model that invents a forbidden tool must
	// meet the policy's refusal, not a generic "unknown tool".
	if r.spec.Guard != nil {
		if err := r.spec.Guard(ctx, *call); err != nil {
			var refusal *tool.Refusal
			if errors.As(err, &refusal) {
				return refusal.Rendered
			}
			return tool.Errorf("Error: %v", err)
		}
	}
	var t tool.Tool
	if r.spec.Tools != nil {
		t, _ = r.spec.Tools.Get(call.Name)
	}
	if t == nil {
		return tool.Errorf("Error: unknown tool %q. Available tools: %s", call.Name, r.toolNames())
	}
	// Arguments that are not valid JSON go to the tool like any others:
	// each tool reports bad input in its own shape (the subagent tool
	// answers with its envelope).
	args := call.Arguments
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	defer func() {
		if p := recover(); p != nil {
			res = tool.Errorf("Error: tool %s failed unexpectedly: %v", call.Name, p)
			r.emit(Event{Kind: EventToolPanic, Call: call, Text: string(debug.Stack())})
		}
	}()
	out, err := t.Run(ctx, args)
	if err != nil {
		return tool.Errorf("Error: %v", err)
	}
	return out
}

func (r *runner) toolNames() string {
	if r.spec.Tools == nil || r.spec.Tools.Len() == 0 {
		return "(none)"
	}
	return fmt.Sprint(r.spec.Tools.Names())
}

type toolCallKey struct{}

// ToolCallFrom returns the tool call a tool runs for, when ctx is the
// context the loop handed to the tool; nil otherwise. It is the
// conversation's own: read it, do not change it. It lets a tool that
// starts work elsewhere (a delegation) link that work to the call.
func ToolCallFrom(ctx context.Context) *llm.ToolCall {
	c, _ := ctx.Value(toolCallKey{}).(*llm.ToolCall)
	return c
}

// RunToolCall runs one tool call the way the loop does: through
// spec.Guard, with an unknown tool, a refusal, bad input or a panic turned
// into an error result the model can read. It is for a loop that runs
// elsewhere (a Temporal workflow), one call at a time.
func RunToolCall(ctx context.Context, spec Spec, call llm.ToolCall) tool.Result {
	r := &runner{spec: spec}
	r.res = &r.result
	return r.runTool(ctx, &call)
}

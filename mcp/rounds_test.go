package mcp

import (
	"context"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deputyhq/deputy/approval"
	"github.com/deputyhq/deputy/delegate"
)

// A tree carried over several calls (multi round-trip): the requests of
// one moment go out together as the call's input requests, the next call's
// answers reach the runs that asked, and the call that finds the tree done
// gets its result. A request the client leaves unanswered is a deny.
func TestRoundsCarryATreeOver(t *testing.T) {
	calls := newRounds()
	asked := make(chan struct{})
	var got []approval.Answer
	var mu sync.Mutex
	r := calls.start(&progress{}, func(ctx context.Context, person approval.Asker) *delegate.Envelope {
		var wg sync.WaitGroup
		for _, id := range []string{"A", "B"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ans, err := person.Ask(ctx, &approval.Request{ID: id, Kind: approval.KindApproval, Path: []string{"lead"}, Tool: "terminal"})
				if err != nil {
					t.Errorf("%s: %v", id, err)
				}
				mu.Lock()
				got = append(got, ans)
				mu.Unlock()
			}()
		}
		<-asked // both requests are waiting before the first call looks
		wg.Wait()
		return &delegate.Envelope{Status: delegate.StatusOK, Output: "done"}
	})
	result := func(env *delegate.Envelope) *sdk.CallToolResult { return agentResult(nil, env) }
	ctx := context.Background()
	// The first call finds a request; the other one that waits joins it
	// once it is there (one round may take one or both).
	close(asked)
	pending := 0
	for round := 0; round < 3 && pending < 2; round++ {
		res, err := calls.wait(ctx, r, result)
		if err != nil || res.RequestState != r.id || len(res.InputRequests) == 0 {
			t.Fatalf("round %d: %v %+v", round, err, res)
		}
		pending += len(res.InputRequests)
		responses := sdk.InputResponseMap{}
		if _, ok := res.InputRequests["A"]; ok {
			responses["A"] = &sdk.ElicitResult{Action: "accept", Content: map[string]any{"decision": allowOnce}}
		}
		r.answer(responses) // B, when asked, is left unanswered: a deny
	}
	res, err := calls.wait(ctx, r, result)
	if err != nil || res.IsError || res.Content[0].(*sdk.TextContent).Text != "done" || calls.find(r.id) != nil {
		t.Fatalf("last call: %v %+v", err, res)
	}
	allowed := 0
	for _, a := range got {
		if a.Allow {
			allowed++
		}
	}
	if len(got) != 2 || allowed != 1 {
		t.Errorf("answers %+v", got)
	}
}

// A client that stops calling ends its tree: the tree is cancelled once it
// waited the idle time, and forgotten.
func TestRoundsExpire(t *testing.T) {
	calls := newRounds()
	calls.idle = time.Millisecond
	ended := make(chan error, 1)
	r := calls.start(&progress{}, func(ctx context.Context, person approval.Asker) *delegate.Envelope {
		_, err := person.Ask(ctx, &approval.Request{ID: "A", Kind: approval.KindQuestion, Question: "?"})
		ended <- err
		return &delegate.Envelope{Status: delegate.StatusCancelled}
	})
	res, err := calls.wait(context.Background(), r, func(*delegate.Envelope) *sdk.CallToolResult { return nil })
	if err != nil || len(res.InputRequests) != 1 {
		t.Fatalf("%v %+v", err, res)
	}
	if err := <-ended; err != context.Canceled {
		t.Errorf("the tree's request ended with %v", err)
	}
	<-r.done
	for i := 0; i < 1000 && calls.find(r.id) != nil; i++ {
		time.Sleep(time.Millisecond)
	}
	if calls.find(r.id) != nil {
		t.Error("the tree is still known")
	}
}

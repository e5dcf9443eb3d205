package delegate

import (
	"context"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/isolate"
	"github.com/deputyhq/deputy/llm"
)

// Spawns are granted in call order. The tool calls of one response run
// concurrently, so without care the max_executions quota would go to
// whichever calls reach the engine first: a random N. Instead, when a
// model response arrives (before any of its tools runs) every delegation
// call in it takes its place against the quota in the order the model
// wrote them; the spawn of that call later uses its place, and a call that
// ends without spawning (bad arguments, a refusal) gives it back.

// tickets are one scope's places against max_executions, by tool call id:
// nil for a granted place not yet used, the refusal otherwise.
type tickets struct {
	places map[string]error
}

// orderSpawns is the loop listener half of the above: it grants places on
// an assistant message and returns unused ones when a tool call ends.
func (e *Engine) orderSpawns(s *Scope, ev agent.Event) {
	e.orderMerges(s, ev)
	switch {
	case ev.Kind == agent.EventMessage && ev.Message != nil && ev.Message.Role == llm.RoleTool:
		// A call closed without running (the run stopped) has no end event.
		s.releasePlace(ev.Message.ToolCallID)
	case ev.Kind == agent.EventMessage && ev.Message != nil:
		m := ev.Message
		if m.Role != llm.RoleAssistant || len(m.ToolCalls) == 0 || s.tree.quotas.MaxExecutions <= 0 {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, c := range m.ToolCalls {
			if c.ID == "" || !s.spawns(c.Name) {
				continue
			}
			if s.tickets.places == nil {
				s.tickets.places = map[string]error{}
			}
			s.tickets.places[c.ID] = s.tree.reserveExecution()
		}
	case ev.Kind == agent.EventToolEnd && ev.Call != nil:
		s.releasePlace(ev.Call.ID)
	}
}

// releasePlace gives back the place of a call that ended without using it.
func (s *Scope) releasePlace(callID string) {
	s.mu.Lock()
	err, ok := s.tickets.places[callID]
	delete(s.tickets.places, callID)
	s.mu.Unlock()
	if ok && err == nil {
		s.tree.releaseExecution()
	}
}

// takePlace uses the place the tool call of ctx was granted. ok is false
// when it has none (a spawn outside a model response, or no
// max_executions): the caller then reserves as before.
func (s *Scope) takePlace(ctx context.Context) (err error, ok bool) {
	id := toolCallID(ctx)
	if id == "" {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	err, ok = s.tickets.places[id]
	if ok {
		delete(s.tickets.places, id)
	}
	return err, ok
}

// reserve takes one execution for a child of s: its call's place when it
// has one (then only the token and time quotas are checked here), else a
// reservation now.
func (s *Scope) reserve(ctx context.Context) error {
	if err := s.reserveQuota(ctx); err != nil {
		return err
	}
	// A run whose budget chain is spent spawns nothing more: the child
	// could only stop after its first call.
	if err := s.budget.exhausted(); err != nil {
		s.tree.releaseExecution()
		return err
	}
	return nil
}

func (s *Scope) reserveQuota(ctx context.Context) error {
	placeErr, ok := s.takePlace(ctx)
	if !ok {
		return s.tree.reserveSpawn()
	}
	if placeErr != nil {
		return placeErr
	}
	if err := s.tree.spent(); err != nil {
		s.tree.releaseExecution()
		return err
	}
	return nil
}

// orderMerges is the same for the merges of isolated children
// (isolation.go): each delegation call takes its place among the parent's
// merges in the order the model wrote them, so that siblings' work merges
// in call order, whichever finishes first. A call that ends without
// spawning an isolated child gives its place up.
func (e *Engine) orderMerges(s *Scope, ev agent.Event) {
	if e.Isolation == nil {
		return
	}
	switch {
	case ev.Kind == agent.EventMessage && ev.Message != nil && ev.Message.Role == llm.RoleTool:
		s.endMergeTurn(ev.Message.ToolCallID)
	case ev.Kind == agent.EventMessage && ev.Message != nil && ev.Message.Role == llm.RoleAssistant:
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, c := range ev.Message.ToolCalls {
			if c.ID == "" || !s.spawns(c.Name) {
				continue
			}
			if s.mergeTurns == nil {
				s.mergeTurns = map[string]isolate.Turn{}
			}
			s.mergeTurns[c.ID] = s.merges.Take()
		}
	case ev.Kind == agent.EventToolEnd && ev.Call != nil:
		s.endMergeTurn(ev.Call.ID)
	}
}

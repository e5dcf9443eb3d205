package delegate

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
)

// Hooks are callbacks for one root run and every run of its tree (the
// engine's Listeners see every run of every tree, but only watch). Each is
// optional; they are called from the runs' goroutines, concurrently, so
// they must be safe for that. The *Scope says which run is calling; treat
// it as read-only.
type Hooks struct {
	// BeforeModelCall sees each model request before it is sent and may
	// change it (the request is the run's own copy). An error refuses the
	// call: the run fails with it.
	BeforeModelCall func(ctx context.Context, s *Scope, req *llm.Request) error
	// AfterModelCall sees each model call's response (nil on error) and
	// error. It may change the response before the run reads it.
	AfterModelCall func(ctx context.Context, s *Scope, resp *llm.Response, err error)
	// BeforeToolCall sees each tool call that passed the engine's policy,
	// before it runs. An error refuses it: the tool does not run and the
	// model reads the refusal as an error result.
	BeforeToolCall func(ctx context.Context, s *Scope, call llm.ToolCall) error
	// AfterToolCall sees each tool call's result and may change what the
	// model reads.
	AfterToolCall func(ctx context.Context, s *Scope, call llm.ToolCall, res *tool.Result)
	// OnSpawn is told of each child run as it starts.
	OnSpawn func(ctx context.Context, child *Scope)
}

// RefusedError is what a run or a tool call refused by a hook fails with.
type RefusedError struct {
	What string // "model call" or the tool's name
	Err  error
}

func (e *RefusedError) Error() string { return fmt.Sprintf("%s refused by a hook: %v", e.What, e.Err) }

func (e *RefusedError) Unwrap() error { return e.Err }

func (s *Scope) hooks() *Hooks {
	if s == nil || s.tree == nil {
		return nil
	}
	return s.tree.hooks
}

// hookedProvider runs the model-call hooks around a provider.
type hookedProvider struct {
	llm.Provider
	s *Scope
	h *Hooks
}

func (p hookedProvider) Generate(ctx context.Context, req *llm.Request, onEvent llm.StreamFunc) (*llm.Response, error) {
	if p.h.BeforeModelCall != nil {
		c := *req
		c.Messages = append([]llm.Message(nil), req.Messages...)
		c.Tools = append([]llm.ToolSpec(nil), req.Tools...)
		if err := p.h.BeforeModelCall(ctx, p.s, &c); err != nil {
			return nil, &RefusedError{What: "model call", Err: err}
		}
		req = &c
	}
	resp, err := p.Provider.Generate(ctx, req, onEvent)
	if p.h.AfterModelCall != nil {
		p.h.AfterModelCall(ctx, p.s, resp, err)
	}
	return resp, err
}

// hookModelCalls is the provider layer of the tree's model-call hooks.
func hookModelCalls(_ *Engine, s *Scope, next llm.Provider) llm.Provider {
	h := s.hooks()
	if h == nil || (h.BeforeModelCall == nil && h.AfterModelCall == nil) {
		return next
	}
	return hookedProvider{Provider: next, s: s, h: h}
}

// withToolHooks adds BeforeToolCall to a guard: it is asked only about
// calls the engine's policy lets through.
func withToolHooks(guard func(context.Context, llm.ToolCall) error, s *Scope) func(context.Context, llm.ToolCall) error {
	h := s.hooks()
	if h == nil || h.BeforeToolCall == nil {
		return guard
	}
	return func(ctx context.Context, call llm.ToolCall) error {
		if err := guard(ctx, call); err != nil {
			return err
		}
		if err := h.BeforeToolCall(ctx, s, call); err != nil {
			return &RefusedError{What: call.Name, Err: err}
		}
		return nil
	}
}

// withResultHooks wraps every tool of reg so that AfterToolCall sees its
// results.
func withResultHooks(reg *tool.Registry, s *Scope) *tool.Registry {
	h := s.hooks()
	if h == nil || h.AfterToolCall == nil {
		return reg
	}
	out := tool.NewRegistry()
	for _, t := range reg.Tools() {
		_ = out.Add(hookedTool{Tool: t, s: s, h: h})
	}
	return out
}

type hookedTool struct {
	tool.Tool
	s *Scope
	h *Hooks
}

func (t hookedTool) Run(ctx context.Context, args json.RawMessage) (tool.Result, error) {
	res, err := t.Tool.Run(ctx, args)
	if err != nil {
		res, err = tool.Result{Content: err.Error(), IsError: true}, nil
	}
	call := llm.ToolCall{Name: t.Spec().Name, Arguments: args}
	if c := agent.ToolCallFrom(ctx); c != nil {
		call = *c
	}
	t.h.AfterToolCall(ctx, t.s, call, &res)
	return res, nil
}

func onSpawnHook(ctx context.Context, s *Scope) {
	if h := s.hooks(); h != nil && h.OnSpawn != nil {
		h.OnSpawn(ctx, s)
	}
}

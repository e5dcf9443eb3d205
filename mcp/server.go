package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/approval"
	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/tool"
)

// ServerOptions configure NewServer.
type ServerOptions struct {
	// Engine builds the engine a call runs on, with the call's listener
	// added (workspace.Workspace.Engine with a ledger fits). One engine per
	// call keeps each call's progress to itself.
	Engine func(listeners ...delegate.Listener) *delegate.Engine
	// Agents are offered as tools, one each, named after the agent.
	Agents []*config.Agent
	// Workdir is where the agents run (an agent's own workdir, relative
	// to it, still applies).
	Workdir string
	// Version is reported to clients.
	Version string
}

// agentInput is what a client sends to an agent's tool: the call_agent
// arguments.
type agentInput struct {
	Task    string `json:"task" jsonschema:"the task for the agent, self-contained: it sees nothing else of your conversation"`
	Context string `json:"context,omitempty" jsonschema:"optional material the agent needs (a diff, a log, notes), added after the task"`
}

// NewServer returns an MCP server that offers each agent as a tool. A call
// runs the agent's whole tree on the engine, as `deputy run` would; the
// tree's events become progress notifications when the client asks for
// them; cancelling the call stops the tree (the ledger records it as
// cancelled). The result is the agent's final text, and its structured
// result when the agent has an output schema.
func NewServer(opts ServerOptions) (*sdk.Server, error) {
	v := opts.Version
	if v == "" {
		v = "dev"
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "deputy", Version: v}, nil)
	in, err := jsonSchemaFor[agentInput]()
	if err != nil {
		return nil, err
	}
	calls := newRounds()
	for _, a := range opts.Agents {
		t := &sdk.Tool{Name: a.Name, Description: toolDescription(a), InputSchema: in}
		if len(a.OutputSchema) > 0 {
			t.OutputSchema = json.RawMessage(a.OutputSchema)
		}
		s.AddTool(t, agentHandler(opts, a, calls))
	}
	return s, nil
}

func jsonSchemaFor[T any]() (json.RawMessage, error) {
	sch, err := tool.SchemaFor[T]()
	if err != nil {
		return nil, fmt.Errorf("mcp: agent tool schema: %w", err)
	}
	return sch.JSON(), nil
}

func toolDescription(a *config.Agent) string {
	d := strings.TrimSpace(a.Description)
	if d == "" {
		d = fmt.Sprintf("Runs the deputy agent %q on a task.", a.Name)
	}
	return d + "\n\nThe agent works on its own, may delegate to other agents, and answers with its final result only."
}

// agentHandler runs one call of an agent's tool. The tree's approvals
// and questions go to the client's user as elicitations when the client
// supports them: asked by the server during the call on protocol versions
// before 2026-07-28, returned as the call's input requests from then on
// (rounds.go); without elicitation nobody is there, and what asks is
// refused.
func agentHandler(opts ServerOptions, a *config.Agent, calls *rounds) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		result := func(env *delegate.Envelope) *sdk.CallToolResult { return agentResult(a, env) }
		if state := req.Params.RequestState; state != "" {
			r := calls.find(state)
			if r == nil {
				return toolError("this call of %q has ended or is not known (requestState %q)", a.Name, state), nil
			}
			r.answer(req.Params.InputResponses)
			r.prog.retarget(ctx, req.Session, req.Params.GetProgressToken())
			return calls.wait(ctx, r, result)
		}
		var in agentInput
		if raw := req.Params.Arguments; len(raw) > 0 {
			if err := json.Unmarshal(raw, &in); err != nil {
				return toolError("invalid arguments: %v", err), nil
			}
		}
		if strings.TrimSpace(in.Task) == "" && strings.TrimSpace(in.Context) == "" {
			return toolError("task must not be empty"), nil
		}
		p := &progress{ctx: ctx, session: req.Session, token: req.Params.GetProgressToken()}
		run := func(ctx context.Context, person approval.Asker) *delegate.Envelope {
			e := opts.Engine(p.listen)
			e.Person = person
			env := e.Run(ctx, delegate.RunRequest{Agent: a, Task: in.Task, Context: in.Context, Workdir: a.ResolveWorkdir(opts.Workdir)})
			p.stop()
			return env
		}
		switch {
		case canElicit(req.Session) && multiRound(req.Session):
			return calls.wait(ctx, calls.start(p, run), result)
		case canElicit(req.Session):
			return result(run(ctx, elicitPerson{session: req.Session})), nil
		}
		return result(run(ctx, nil)), nil
	}
}

// agentResult is the tool result of an agent's finished tree.
func agentResult(a *config.Agent, env *delegate.Envelope) *sdk.CallToolResult {
	if !env.OK() {
		msg := env.Error
		if msg == "" {
			msg = string(env.Status)
		}
		return toolError("agent %q %s: %s (run %s)", a.Name, env.Status, msg, env.RunID)
	}
	res := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: env.Output}}}
	if len(env.OutputJSON) > 0 {
		res.StructuredContent = env.OutputJSON
	}
	return res
}

func toolError(format string, args ...any) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

// progress turns a tree's events into MCP progress notifications, when the
// client gave a progress token: the token of the call that carries the tree
// on (retarget).
type progress struct {
	ctx     context.Context
	session *sdk.ServerSession
	token   any

	mu      sync.Mutex
	n       float64
	stopped bool
}

func (p *progress) listen(ev delegate.Event) {
	msg := progressMessage(ev)
	if msg == "" {
		return
	}
	// Notifications go out in order, one at a time; the engine calls
	// listeners from many goroutines.
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped || p.token == nil || p.session == nil {
		return
	}
	p.n++
	_ = p.session.NotifyProgress(p.ctx, &sdk.ProgressNotificationParams{ProgressToken: p.token, Progress: p.n, Message: msg})
}

// retarget sends the notifications of a tree carried on by another call
// (a multi round-trip retry) to that call's progress token.
func (p *progress) retarget(ctx context.Context, ss *sdk.ServerSession, token any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ctx, p.session, p.token = ctx, ss, token
}

func (p *progress) stop() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
}

// progressMessage says what an event means to someone waiting for the
// result; "" for events not worth a notification.
func progressMessage(ev delegate.Event) string {
	switch ev.Type {
	case delegate.EventRunStart:
		return fmt.Sprintf("%s started", ev.Label)
	case delegate.EventSpawn:
		return fmt.Sprintf("%s started %s (%s, depth %d)", parentOf(ev), ev.Label, ev.Kind, ev.Depth)
	case delegate.EventComplete, delegate.EventError, delegate.EventRunEnd:
		if ev.Status == "" && ev.Envelope != nil {
			ev.Status, ev.Error = ev.Envelope.Status, ev.Envelope.Error
		}
		if ev.Error != "" {
			return fmt.Sprintf("%s ended: %s: %s", ev.Label, ev.Status, ev.Error)
		}
		return fmt.Sprintf("%s ended: %s", ev.Label, ev.Status)
	case delegate.EventProgress:
		if a := ev.Agent; a != nil && a.Kind == agent.EventToolStart && a.Call != nil {
			return fmt.Sprintf("%s calls %s", ev.Label, a.Call.Name)
		}
	}
	return ""
}

func parentOf(ev delegate.Event) string {
	if ev.Depth <= 1 {
		return "the root agent"
	}
	return "an agent at depth " + fmt.Sprint(ev.Depth-1)
}

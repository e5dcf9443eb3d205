package delegate_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
	"github.com/deputyhq/deputy/tool/builtin"
)

// oneCallProvider asks once for the tool call name(args), then answers:
// every run it serves makes at most two model calls, so a tree it drives
// is bounded by its depth limits.
type oneCallProvider struct{ name, args string }

func (oneCallProvider) Name() string { return "fuzz" }

func (p oneCallProvider) Generate(_ context.Context, req *llm.Request, _ llm.StreamFunc) (*llm.Response, error) {
	usage := llm.Usage{InputTokens: 3, OutputTokens: 2}
	for _, m := range req.Messages {
		if m.Role == llm.RoleTool || p.name == "" {
			return &llm.Response{Message: llm.AssistantMessage("done"), Usage: usage, FinishReason: llm.FinishStop}, nil
		}
	}
	call := llm.ToolCall{ID: "c1", Name: p.name, Arguments: json.RawMessage(p.args)}
	return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call}}, Usage: usage,
		FinishReason: llm.FinishToolCalls}, nil
}

// FuzzRun: Run, Prepare and Describe never panic, whatever the request
// and whichever of its parts the engine lacks; a run that did not end ok
// says why, and an engine without a part answers with ErrConfig.
func FuzzRun(f *testing.F) {
	type seed struct {
		parts                                 uint8 // bits: no Agents, no Models, no Tools, Tools returns nil
		hasAgent                              bool
		name, model, tools, subs, schema      string
		maxTurns                              int
		tokens                                int64
		usd                                   float64
		task, taskCtx, reqModel, reqSchema    string
		workdir                               uint8 // 0 a temporary directory, 1 "", 2 missing, 3 relative
		history, callName, callArgs, disallow string
		subagents                             uint8 // 0 unset, 1 off, 2 on
		scratchpad                            bool
	}
	for _, s := range []seed{
		{}, // the zero request on the zero engine
		{parts: 0, hasAgent: false},
		{parts: 1 | 2 | 4, hasAgent: true, name: "a", model: "fuzz/m", task: "t"},
		{parts: 2, hasAgent: true, name: "a", model: "fuzz/m", task: "t"},
		{parts: 4, hasAgent: true, name: "a", model: "fuzz/m", task: "t"},
		{parts: 8, hasAgent: true, name: "a", model: "fuzz/m", tools: "read_file", task: "t"},
		{hasAgent: true, name: "a", model: "fuzz/m", task: "t", callName: "call_agent", callArgs: `{"agent":"b","task":"x"}`, subs: "b,a"},
		{hasAgent: true, name: "a", model: "fuzz/m", task: "t", callName: "subagent", callArgs: `{"label":"x","task_prompt":"y"}`, tools: "subagent,read_file", subagents: 2},
		{hasAgent: true, name: "a", model: "fuzz/m", task: "t", callName: "llm_query", callArgs: `{"query":"q"}`},
		{hasAgent: true, name: "a", model: "fuzz/m", task: "t", callName: "memory_write", callArgs: `{"key":"k","value":"v"}`, scratchpad: true},
		{hasAgent: true, name: "a", model: "", task: "t"},
		{hasAgent: true, name: "a", model: "nonsense", task: "t"},
		{hasAgent: true, name: "a", model: "fuzz/m", task: "t", tokens: -1},
		{hasAgent: true, name: "a", model: "fuzz/m", task: "t", usd: math.NaN()},
		{hasAgent: true, name: "a", model: "fuzz/m", task: "t", tokens: 1},
		{hasAgent: true, name: "a", model: "fuzz/m", task: "t", schema: `{"type":`},
		{hasAgent: true, name: "a", model: "fuzz/m", task: "t", reqSchema: `{"type":"object","required":["x"]}`},
		{hasAgent: true, name: "a", model: "fuzz/m", task: "t", workdir: 2},
		{hasAgent: true, name: "a", model: "fuzz/m", task: "t", workdir: 3, tools: "no_such_tool"},
		{hasAgent: true, name: "a", model: "fuzz/m", task: "", taskCtx: "piped", history: "tool"},
		{hasAgent: true, name: "a", model: "fuzz/m", task: "t", maxTurns: -3, callName: "read_file", callArgs: `{"path":`},
		{hasAgent: true, name: "a", model: "fuzz/m", task: "t", disallow: "subagent", subagents: 2, callName: "subagent", callArgs: `{}`},
	} {
		f.Add(s.parts, s.hasAgent, s.name, s.model, s.tools, s.subs, s.schema, s.maxTurns, s.tokens, s.usd,
			s.task, s.taskCtx, s.reqModel, s.reqSchema, s.workdir, s.history, s.callName, s.callArgs, s.disallow, s.subagents, s.scratchpad)
	}
	f.Fuzz(func(t *testing.T, parts uint8, hasAgent bool, name, model, tools, subs, schema string, maxTurns int, tokens int64, usd float64,
		task, taskCtx, reqModel, reqSchema string, workdir uint8, history, callName, callArgs, disallow string, subagents uint8, scratchpad bool) {
		dir := t.TempDir()
		var req delegate.RunRequest
		var defs []*config.Agent
		if hasAgent {
			a := &config.Agent{Name: name, Model: model, SystemPrompt: "fuzzed", Tools: list(tools), Subagents: list(subs),
				SubagentsConfig: config.DefaultSubagentsConfig(), MaxTurns: maxTurns, Budget: config.Budget{Tokens: tokens, USD: usd},
				DisallowedTools: list(disallow), Scratchpad: scratchpad}
			if schema != "" {
				a.OutputSchema = json.RawMessage(schema)
			}
			req.Agent = a
			defs = append(defs, a)
			for _, n := range a.Subagents {
				defs = append(defs, &config.Agent{Name: n, Model: "inherit", SystemPrompt: "child", Subagents: a.Subagents,
					SubagentsConfig: config.DefaultSubagentsConfig(), Tools: []string{"read_file"}})
			}
		}
		req.Task, req.Context, req.Model = task, taskCtx, reqModel
		if reqSchema != "" {
			req.OutputSchema = json.RawMessage(reqSchema)
		}
		switch workdir % 4 {
		case 0:
			req.Workdir = dir
		case 2:
			req.Workdir = filepath.Join(dir, "missing")
		case 3:
			req.Workdir = "relative"
		}
		if history != "" {
			req.History = []llm.Message{{Role: llm.Role(history), Content: history, ToolCallID: history}}
		}
		if subagents%3 > 0 {
			on := subagents%3 == 2
			req.Subagents = &on
		}
		e := &delegate.Engine{
			Agents: config.NewAgentSet(defs...),
			Models: models{oneCallProvider{name: callName, args: callArgs}},
			Tools: func(wd string) *tool.Registry {
				if parts&8 != 0 {
					return nil
				}
				if wd == "" || wd == "relative" {
					return tool.NewRegistry()
				}
				return builtin.New(builtin.Options{Workdir: wd})
			},
			Options: delegate.Options{DefaultTools: []string{"read_file"}, MaxTurns: 4},
		}
		if parts&1 != 0 {
			e.Agents = nil
		}
		if parts&2 != 0 {
			e.Models = nil
		}
		if parts&4 != 0 {
			e.Tools = nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()

		env := e.Run(ctx, req)
		if env == nil {
			t.Fatal("Run returned no envelope")
		}
		if !env.OK() && (env.Error == "" || env.Err == nil) {
			t.Fatalf("status %s without its reason (Error %q, Err %v)", env.Status, env.Error, env.Err)
		}
		if parts&7 != 0 && !errors.Is(env.Err, delegate.ErrConfig) {
			t.Fatalf("an engine without a part ran: %s %v", env.Status, env.Err)
		}
		if !hasAgent && !errors.Is(env.Err, delegate.ErrConfig) {
			t.Fatalf("a request without an agent ran: %s %v", env.Status, env.Err)
		}
		if _, err := e.Prepare(req); err == nil && (parts&7 != 0 || !hasAgent) {
			t.Fatal("Prepare accepted what Run refused")
		}
		if _, err := e.Describe(req); err == nil && (parts&7 != 0 || !hasAgent) {
			t.Fatal("Describe accepted what Run refused")
		}
	})
}

func list(csv string) []string {
	if csv == "" {
		return nil
	}
	return strings.Split(csv, ",")
}

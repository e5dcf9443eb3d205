package delegate_test

// Runnable examples of deputy as a library, quoted in docs/library.md. They
// run on llmtest's scripted provider, so they need no key and no network;
// swap in a provider from llm/providers for a real model.

import (
	"context"
	"fmt"
	"strings"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest"
	"github.com/deputyhq/deputy/tool"
	"github.com/deputyhq/deputy/tool/builtin"
)

// wordCountArgs are the arguments of the example's word_count tool. The
// JSON Schema the model sees is inferred from this struct.
type wordCountArgs struct {
	Text string `json:"text" jsonschema:"the text whose words to count"`
}

// Example_agentLoop runs one agent's turn loop with agent.Run: the model
// asks for a tool, the loop runs it, and the model answers from the result.
func Example_agentLoop() {
	// A scripted model: first ask for word_count, then answer from its result.
	model := llmtest.NewProvider(llmtest.MustParseScript(`
rules:
  - match: {last_role: user}
    reply:
      tool_calls:
        - name: word_count
          arguments: {text: "{{ .LastUser }}"}
  - match: {last_role: tool}
    reply: {text: "That is {{ index .ToolResults 0 }} words."}
`))

	wordCount := tool.New("word_count", "Count the words in a text.",
		func(ctx context.Context, in wordCountArgs) (tool.Result, error) {
			return tool.Text(fmt.Sprint(len(strings.Fields(in.Text)))), nil
		})

	res, err := agent.Run(context.Background(), agent.Spec{
		Name:     "counter",
		Provider: model,
		Model:    "any", // the provider's model name, without "provider/"
		System:   "You count words with the word_count tool.",
		Messages: []llm.Message{llm.UserMessage("one two three four")},
		Tools:    tool.NewRegistry(wordCount),
		MaxTurns: 5,
	})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(res.Output)
	fmt.Println("status:", res.Status, "turns:", res.Turns)
	// Output:
	// That is 4 words.
	// status: ok turns: 2
}

// scriptModels serves every model string from one scripted provider; a
// program would use providers.NewRegistry, which satisfies the same
// delegate.Models interface.
type scriptModels struct{ p llm.Provider }

func (m scriptModels) ForModel(model string) (llm.Provider, llm.ModelRef, error) {
	ref, err := llm.ParseModel(model)
	return m.p, ref, err
}

// ExampleEngine_Run runs a delegating tree with the engine: a lead agent
// hands a task to a researcher with call_agent and answers from what comes
// back. Agents are parsed from axe-style TOML, as deputy loads them.
func ExampleEngine_Run() {
	lead, _ := config.ParseAgentTOML([]byte(`
name = "lead"
model = "script/team"
system_prompt = "You are the lead. Delegate research, then answer."
sub_agents = ["researcher"]
tools = []
`), "lead.toml")
	researcher, _ := config.ParseAgentTOML([]byte(`
name = "researcher"
description = "Finds facts"
model = "inherit"
system_prompt = "You are a researcher."
tools = []
`), "researcher.toml")

	model := llmtest.NewProvider(llmtest.MustParseScript(`
rules:
  - match: {system: "^You are the lead", last_role: user}
    reply:
      tool_calls:
        - name: call_agent
          arguments: {agent: researcher, task: "What drives the tides?"}
  - match: {system: "^You are the lead", last_role: tool}
    reply: {text: "The researcher says: {{ index .ToolResults 0 }}"}
  - match: {system: "^You are a researcher"}
    reply: {text: "the moon's gravity."}
`))

	// The three parts an engine cannot run without: its agents, its
	// models, and the built-in tools of each run's working directory.
	engine, err := delegate.New(config.NewAgentSet(lead, researcher), scriptModels{model},
		func(workdir string) *tool.Registry { return builtin.New(builtin.Options{Workdir: workdir}) })
	if err != nil {
		fmt.Println("error:", err) // a part left out (nil)
		return
	}
	// The rest are plain fields, set before the first run.
	engine.Listeners = []delegate.Listener{func(ev delegate.Event) {
		switch ev.Type {
		case delegate.EventSpawn:
			fmt.Printf("spawn %s (%s, depth %d)\n", ev.Label, ev.Kind, ev.Depth)
		case delegate.EventComplete:
			fmt.Printf("complete %s: %s\n", ev.Label, ev.Status)
		}
	}}
	engine.Options = delegate.Options{DefaultTools: builtin.DefaultToolNames()}

	env := engine.Run(context.Background(), delegate.RunRequest{
		Agent:   lead,
		Task:    "Why are there tides?",
		Workdir: ".", // required when Tools uses builtin.New
	})
	fmt.Println(env.Status, "-", env.Output)
	for _, child := range env.Children {
		fmt.Printf("child %s at depth %d: %s\n", child.Label, child.Depth, child.Output)
	}
	// Output:
	// spawn researcher (call_agent, depth 1)
	// complete researcher: ok
	// ok - The researcher says: the moon's gravity.
	// child researcher at depth 1: the moon's gravity.
}

// triage is the typed answer of ExampleRunAs. Its JSON Schema, inferred
// from the struct, is what the model is asked to follow.
type triage struct {
	Severity  string `json:"severity" jsonschema:"low or high"`
	Component string `json:"component"`
}

// ExampleRunAs asks an agent for a typed answer: the schema comes from the
// Go type, an invalid answer gets one repair turn, and the valid one is
// decoded.
func ExampleRunAs() {
	triager, _ := config.ParseAgentTOML([]byte(`
name = "triager"
model = "script/triage"
system_prompt = "Classify the bug report."
tools = []
`), "triager.toml")
	// The first answer misses a field; the repair turn fixes it.
	model := llmtest.NewProvider(llmtest.MustParseScript(`
rules:
  - match: {last: "^Your answer does not match"}
    reply: {text: '{"severity": "high", "component": "parser"}'}
  - reply: {text: '{"severity": "high"}'}
`))
	engine := &delegate.Engine{Agents: config.NewAgentSet(triager), Models: scriptModels{model},
		Tools: func(string) *tool.Registry { return tool.NewRegistry() }}

	t, env, err := delegate.RunAs[triage](context.Background(), engine,
		delegate.RunRequest{Agent: triager, Task: "The parser crashes on empty input.", Workdir: "."})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Printf("%+v after %d turns\n", t, env.Turns)
	// Output:
	// {Severity:high Component:parser} after 2 turns
}

// sumArgs and sumResult are the typed input and output of the sum tool.
type sumArgs struct {
	A int `json:"a"`
	B int `json:"b"`
}

type sumResult struct {
	Sum int `json:"sum"`
}

// ExampleEngine_AgentTool gives a lead two tools of its own: an agent
// definition (AgentTool) and a typed Go function (FuncTool). Each call runs
// as a child of the lead through the engine.
func ExampleEngine_AgentTool() {
	lead, _ := config.ParseAgentTOML([]byte(`
name = "lead"
model = "script/team"
system_prompt = "You are the lead."
tools = ["ask_checker", "sum"]
`), "lead.toml")
	checker, _ := config.ParseAgentTOML([]byte(`
name = "checker"
model = "inherit"
system_prompt = "You are the checker."
tools = []
`), "checker.toml")
	model := llmtest.NewProvider(llmtest.MustParseScript(`
rules:
  - match: {system: "^You are the lead", last_role: user}
    reply:
      tool_calls:
        - {name: ask_checker, arguments: {task: "Is 2 + 3 = 5?"}}
        - {name: sum, arguments: {a: 2, b: 3}}
  - match: {system: "^You are the lead", last_role: tool}
    reply: {text: "checker: {{ index .ToolResults 0 }}; sum: {{ index .ToolResults 1 }}"}
  - match: {system: "^You are the checker"}
    reply: {text: "yes"}
`))
	engine := &delegate.Engine{Agents: config.NewAgentSet(lead, checker), Models: scriptModels{model}}
	engine.Tools = func(workdir string) *tool.Registry {
		r := builtin.New(builtin.Options{Workdir: workdir})
		_ = r.Add(engine.AgentTool(checker, "ask_checker", "Have the checker verify a claim."))
		_ = r.Add(delegate.FuncTool(engine, "sum", "Add two numbers.",
			func(ctx context.Context, in sumArgs) (sumResult, error) { return sumResult{Sum: in.A + in.B}, nil }))
		return r
	}

	env := engine.Run(context.Background(), delegate.RunRequest{Agent: lead, Task: "Check the sum.", Workdir: "."})
	fmt.Println(env.Output)
	for _, child := range env.Children {
		if child.Kind == delegate.KindTool {
			fmt.Println("child:", child.Label, child.Kind, child.Status)
		}
	}
	// Output:
	// checker: yes; sum: {"sum":5}
	// child: sum tool ok
}

// secondOpinion is a front door of the program's own: a delegation tool
// the engine knows only by what it says of itself. Its calls run the
// critic agent as a child of kind "second_opinion", and only a root agent
// may call it.
type secondOpinion struct{ tool.Tool }

func (secondOpinion) Kind() delegate.Kind { return "second_opinion" }
func (secondOpinion) Spawns() bool        { return true } // each call is one child, in call order under max_executions
func (secondOpinion) Allow(p *delegate.Policy) error {
	if p.Depth > 0 {
		return &delegate.PolicyError{Tool: "second_opinion", Msg: "second_opinion is for the lead only"}
	}
	return nil
}

type opinionArgs struct {
	Claim string `json:"claim" jsonschema:"the claim the critic should weigh"`
}

// ExampleFrontDoor adds a delegation tool of its own: a tool that
// implements delegate.FrontDoor and spawns its child with Engine.Delegate.
// The engine gives the child its scope, limits, events and ledger record,
// and holds every call to the door's policy.
func ExampleFrontDoor() {
	lead, _ := config.ParseAgentTOML([]byte(`
name = "lead"
model = "script/team"
system_prompt = "You are the lead."
tools = ["second_opinion"]
`), "lead.toml")
	critic, _ := config.ParseAgentTOML([]byte(`
name = "critic"
model = "inherit"
system_prompt = "You are the critic."
tools = []
`), "critic.toml")
	model := llmtest.NewProvider(llmtest.MustParseScript(`
rules:
  - match: {system: "^You are the lead", last_role: user}
    reply: {tool_calls: [{name: second_opinion, arguments: {claim: "Tabs beat spaces."}}]}
  - match: {system: "^You are the lead", last_role: tool}
    reply: {text: "The critic says: {{ index .ToolResults 0 }}"}
  - match: {system: "^You are the critic"}
    reply: {text: "it depends."}
`))
	engine := &delegate.Engine{Agents: config.NewAgentSet(lead, critic), Models: scriptModels{model}}
	door := secondOpinion{tool.New("second_opinion", "Ask the critic for a second opinion on a claim.",
		func(ctx context.Context, in opinionArgs) (tool.Result, error) {
			env := engine.Delegate(ctx, "second_opinion", critic, in.Claim, "")
			if !env.OK() {
				return tool.Errorf("Error: the critic failed — %s", env.Error), nil
			}
			return tool.Text(env.Output), nil
		})}
	engine.Tools = func(string) *tool.Registry { return tool.NewRegistry(door) }

	env := engine.Run(context.Background(), delegate.RunRequest{Agent: lead, Task: "Settle it.", Workdir: "."})
	fmt.Println(env.Output)
	fmt.Println("child:", env.Children[0].Label, env.Children[0].Kind, env.Children[0].Status)
	// Output:
	// The critic says: it depends.
	// child: critic second_opinion ok
}

// ExampleHooks sets hooks for one run: every model request of the tree
// gets a line added to its system prompt, and a tool call is refused.
func ExampleHooks() {
	a, _ := config.ParseAgentTOML([]byte(`
name = "reader"
model = "script/reader"
system_prompt = "You read files."
tools = ["read_file"]
`), "reader.toml")
	model := llmtest.NewProvider(llmtest.MustParseScript(`
rules:
  - match: {last_role: user}
    reply: {tool_calls: [{name: read_file, arguments: {path: "/etc/passwd"}}]}
  - reply: {text: "{{ index .ToolResults 0 }}"}
`))
	engine := &delegate.Engine{Agents: config.NewAgentSet(a), Models: scriptModels{model},
		Tools: func(workdir string) *tool.Registry { return builtin.New(builtin.Options{Workdir: workdir}) }}

	hooks := &delegate.Hooks{
		BeforeModelCall: func(ctx context.Context, s *delegate.Scope, req *llm.Request) error {
			req.System += "\nAnswer in English."
			return nil
		},
		BeforeToolCall: func(ctx context.Context, s *delegate.Scope, call llm.ToolCall) error {
			if call.Name == "read_file" && strings.Contains(string(call.Arguments), "/etc/") {
				return fmt.Errorf("system files are off limits")
			}
			return nil
		},
	}
	env := engine.Run(context.Background(), delegate.RunRequest{Agent: a, Task: "Show me the users.", Workdir: ".", Hooks: hooks})
	fmt.Println(env.Output)
	// Output:
	// Error: read_file refused by a hook: system files are off limits
}

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

	engine := &delegate.Engine{
		Agents: config.NewAgentSet(lead, researcher),
		Models: scriptModels{model},
		// The built-in tools, confined to each run's working directory.
		Tools: func(workdir string) *tool.Registry {
			return builtin.New(builtin.Options{Workdir: workdir})
		},
		Listeners: []delegate.Listener{func(ev delegate.Event) {
			switch ev.Type {
			case delegate.EventSpawn:
				fmt.Printf("spawn %s (%s, depth %d)\n", ev.Label, ev.Kind, ev.Depth)
			case delegate.EventComplete:
				fmt.Printf("complete %s: %s\n", ev.Label, ev.Status)
			}
		}},
		Options: delegate.Options{DefaultTools: builtin.DefaultToolNames()},
	}

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

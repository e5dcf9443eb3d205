// A program outside deputy's module that runs a delegating tree with no
// ledger. delegate's outside_test.go builds it in a module of its own
// (with a replace directive to this repository) and checks what it links.
package main

import (
	"context"
	"fmt"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest"
	"github.com/deputyhq/deputy/tool"
)

type models struct{ p llm.Provider }

func (m models) ForModel(model string) (llm.Provider, llm.ModelRef, error) {
	ref, err := llm.ParseModel(model)
	return m.p, ref, err
}

func main() {
	lead, _ := config.ParseAgentTOML([]byte(`
name = "lead"
model = "script/team"
system_prompt = "You are the lead."
sub_agents = ["helper"]
tools = []
`), "lead.toml")
	helper, _ := config.ParseAgentTOML([]byte(`
name = "helper"
model = "inherit"
system_prompt = "You are the helper."
tools = []
`), "helper.toml")
	model := llmtest.NewProvider(llmtest.MustParseScript(`
rules:
  - match: {system: "^You are the lead", last_role: user}
    reply:
      tool_calls:
        - name: call_agent
          arguments: {agent: helper, task: "Say hello."}
  - match: {system: "^You are the lead", last_role: tool}
    reply: {text: "helper said: {{ index .ToolResults 0 }}"}
  - match: {system: "^You are the helper"}
    reply: {text: "hello"}
`))
	engine := &delegate.Engine{
		Agents: config.NewAgentSet(lead, helper),
		Models: models{model},
		Tools:  func(string) *tool.Registry { return tool.NewRegistry() },
	}
	env := engine.Run(context.Background(), delegate.RunRequest{Agent: lead, Task: "Greet.", Workdir: "."})
	fmt.Println(env.Status, "-", env.Output)
}

package delegate_test

import (
	"context"
	"errors"
	"testing"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm/llmtest"
	"github.com/deputyhq/deputy/tool"
)

// New refuses an engine without agents, models or tools, naming what is
// missing; with all three it returns an engine that runs.
func TestNewChecksItsParts(t *testing.T) {
	agents := config.NewAgentSet()
	m := models{llmtest.Sequence()}
	tools := func(string) *tool.Registry { return tool.NewRegistry() }
	for _, c := range []struct {
		name   string
		agents delegate.Agents
		models delegate.Models
		tools  delegate.Tools
		want   string
	}{
		{"nothing", nil, nil, nil, "configuration error: the engine has no Agents and no Models and no Tools (give them to delegate.New)"},
		{"no agents", nil, m, tools, "configuration error: the engine has no Agents (give them to delegate.New)"},
		{"no models", agents, nil, tools, "configuration error: the engine has no Models (give them to delegate.New)"},
		{"no tools", agents, m, nil, "configuration error: the engine has no Tools (give them to delegate.New)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := delegate.New(c.agents, c.models, c.tools)
			if e != nil || err == nil || err.Error() != c.want || !errors.Is(err, delegate.ErrConfig) {
				t.Fatalf("New = %v, %v; want the error %q", e, err, c.want)
			}
		})
	}
	a := agentDef("solo", "SOLO")
	e, err := delegate.New(config.NewAgentSet(a), models{llmtest.NewProvider(llmtest.MustParseScript("rules:\n  - reply: {text: hi}\n"))}, tools)
	if err != nil {
		t.Fatal(err)
	}
	if env := e.Run(context.Background(), delegate.RunRequest{Agent: a, Task: "t", Workdir: t.TempDir()}); !env.OK() || env.Output != "hi" {
		t.Fatalf("run: %s %q %s", env.Status, env.Output, env.Error)
	}
}

// Run answers a request without an agent, and an engine literal without
// its parts, with an error envelope instead of a panic.
func TestRunRefusesWhatItCannotRun(t *testing.T) {
	a := agentDef("solo", "SOLO")
	for _, c := range []struct {
		name string
		e    *delegate.Engine
		req  delegate.RunRequest
		want string
	}{
		{"zero request", &delegate.Engine{}, delegate.RunRequest{}, "configuration error: the engine has no Agents and no Models and no Tools (give them to delegate.New)"},
		{"no agent", newHarness(t, "rules:\n  - reply: {text: hi}\n").engine, delegate.RunRequest{Task: "t"}, "configuration error: no agent to run"},
		{"no models", &delegate.Engine{Agents: config.NewAgentSet(a), Tools: func(string) *tool.Registry { return nil }},
			delegate.RunRequest{Agent: a, Task: "t"}, "configuration error: the engine has no Models (give them to delegate.New)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := c.e.Run(context.Background(), c.req)
			if env.Status != delegate.StatusError || env.Error != c.want || !errors.Is(env.Err, delegate.ErrConfig) {
				t.Fatalf("got %s %q (%v), want error %q", env.Status, env.Error, env.Err, c.want)
			}
		})
	}
}

package telemetry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/telemetry"
	"github.com/deputyhq/deputy/tool"
)

// instant answers at once: the root asks for 16 children, which answer.
type instant struct{}

func (instant) Name() string { return "instant" }

func (instant) Generate(_ context.Context, req *llm.Request, _ llm.StreamFunc) (*llm.Response, error) {
	u := llm.Usage{InputTokens: 10, OutputTokens: 5}
	if !strings.HasPrefix(req.System, "ROOT") || req.Messages[len(req.Messages)-1].Role == llm.RoleTool {
		return &llm.Response{Message: llm.AssistantMessage("done"), Usage: u, FinishReason: llm.FinishStop}, nil
	}
	calls := make([]llm.ToolCall, 16)
	for i := range calls {
		calls[i] = llm.ToolCall{ID: fmt.Sprint("c", i), Name: "call_agent", Arguments: json.RawMessage(`{"agent":"child","task":"work"}`)}
	}
	return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: calls}, Usage: u, FinishReason: llm.FinishToolCalls}, nil
}

type models struct{}

func (models) ForModel(s string) (llm.Provider, llm.ModelRef, error) {
	ref, err := llm.ParseModel(s)
	return instant{}, ref, err
}

func tree(listeners ...delegate.Listener) (*delegate.Engine, *config.Agent) {
	root := &config.Agent{Name: "root", Model: "instant/m", SystemPrompt: "ROOT", Subagents: []string{"child"}, SubagentsConfig: config.DefaultSubagentsConfig(), Tools: []string{}}
	child := &config.Agent{Name: "child", Model: "inherit", SystemPrompt: "CHILD", SubagentsConfig: config.DefaultSubagentsConfig(), Tools: []string{}}
	empty := tool.NewRegistry()
	return &delegate.Engine{Agents: config.NewAgentSet(root, child), Models: models{}, Tools: func(string) *tool.Registry { return empty },
		Listeners: listeners}, root
}

// BenchmarkTracing runs a root with 16 instant children: without tracing
// (the OTEL_* variables unset: no listener at all), with the trace
// listener on a no-op provider, and on the SDK recording in memory. The
// first two show what tracing costs when it is off; docs/observability.md
// has the figures.
func BenchmarkTracing(b *testing.B) {
	rec := tracetest.NewSpanRecorder()
	sdk := trace.NewTracerProvider(trace.WithSpanProcessor(rec))
	for _, c := range []struct {
		name      string
		listeners []delegate.Listener
	}{
		{"off", nil},
		{"noop-provider", []delegate.Listener{telemetry.TraceListener(noop.NewTracerProvider())}},
		{"sdk-in-memory", []delegate.Listener{telemetry.TraceListener(sdk)}},
	} {
		b.Run(c.name, func(b *testing.B) {
			e, root := tree(c.listeners...)
			dir := b.TempDir()
			b.ReportAllocs()
			for b.Loop() {
				if env := e.Run(context.Background(), delegate.RunRequest{Agent: root, Task: "go", Workdir: dir}); !env.OK() {
					b.Fatal(env.Error)
				}
			}
		})
	}
}

// The trace listener nests a child's agent span under the tool call that
// spawned it, and every span of a tree shares one trace.
func TestTraceListenerNesting(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	e, root := tree(telemetry.TraceListener(trace.NewTracerProvider(trace.WithSpanProcessor(rec))))
	if env := e.Run(context.Background(), delegate.RunRequest{Agent: root, Task: "go", Workdir: t.TempDir()}); !env.OK() {
		t.Fatal(env.Error)
	}
	spans := rec.Ended()
	byID := map[string]string{}
	for _, s := range spans {
		byID[s.SpanContext().SpanID().String()] = s.Name()
		if s.SpanContext().TraceID() != spans[0].SpanContext().TraceID() {
			t.Fatalf("span %s in another trace", s.Name())
		}
	}
	count := map[string]int{}
	for _, s := range spans {
		key := s.Name() + " < " + byID[s.Parent().SpanID().String()]
		count[key]++
	}
	want := map[string]int{
		"invoke_agent root < ":                         1,
		"chat m < invoke_agent root":                   2,
		"execute_tool call_agent < invoke_agent root":  16,
		"invoke_agent child < execute_tool call_agent": 16,
		"chat m < invoke_agent child":                  16,
	}
	for k, n := range want {
		if count[k] != n {
			t.Errorf("%d spans %q, want %d (all: %v)", count[k], k, n, count)
		}
	}
	if len(spans) != 51 {
		t.Errorf("%d spans, want 51", len(spans))
	}
}

package telemetry

import (
	"context"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/delegate"
)

// TracerName is the instrumentation scope of deputy's spans.
const TracerName = "github.com/deputyhq/deputy"

// TraceListener records the engine's events as OpenTelemetry spans after
// the GenAI semantic conventions: one trace per root run, a span per agent
// run ("invoke_agent <name>"), per model call ("chat <model>") and per tool
// call ("execute_tool <tool>"). A child's agent span is nested under the
// parent's tool span that asked for it, so the trace is the tree. Spans
// carry the gen_ai.* attributes and deputy's own (deputy.depth,
// deputy.kind, deputy.status, ...); no prompt, answer or tool argument is
// recorded.
func TraceListener(tp trace.TracerProvider) delegate.Listener {
	t := &tracer{tr: tp.Tracer(TracerName), spans: map[string]*runSpans{}}
	return t.listen
}

type tracer struct {
	tr    trace.Tracer
	mu    sync.Mutex
	spans map[string]*runSpans // by run id
}

// runSpans are the open spans of one run.
type runSpans struct {
	agent trace.Span
	ctx   context.Context
	chat  trace.Span
	tools map[string]trace.Span // by tool call id
	tctx  map[string]context.Context
}

func (t *tracer) listen(ev delegate.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch ev.Type {
	case delegate.EventRunStart, delegate.EventSpawn:
		t.start(ev)
	case delegate.EventRunEnd, delegate.EventComplete, delegate.EventError:
		t.end(ev)
	case delegate.EventProgress:
		if rs := t.spans[ev.RunID]; rs != nil {
			t.loop(rs, ev)
		}
	}
}

func (t *tracer) start(ev delegate.Event) {
	if t.spans[ev.RunID] != nil {
		return
	}
	parent := context.Background()
	if p := t.spans[ev.ParentID]; p != nil {
		parent = p.ctx
		if c, ok := p.tctx[ev.ToolCallID]; ok {
			parent = c
		}
	}
	provider, model := splitModel(ev.Model)
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", "invoke_agent"),
		attribute.String("gen_ai.agent.name", ev.Label),
		attribute.String("gen_ai.agent.id", ev.RunID),
		attribute.String("gen_ai.provider.name", provider),
		attribute.String("gen_ai.request.model", model),
		attribute.Int("deputy.depth", ev.Depth),
		attribute.String("deputy.kind", string(ev.Kind)),
		attribute.String("deputy.root_id", ev.RootID),
	}
	if ev.ParentID != "" {
		attrs = append(attrs, attribute.String("deputy.parent_id", ev.ParentID))
	}
	ctx, span := t.tr.Start(parent, "invoke_agent "+ev.Label, trace.WithTimestamp(ev.Time),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	t.spans[ev.RunID] = &runSpans{agent: span, ctx: ctx, tools: map[string]trace.Span{}, tctx: map[string]context.Context{}}
}

func (t *tracer) end(ev delegate.Event) {
	rs := t.spans[ev.RunID]
	if rs == nil {
		return
	}
	delete(t.spans, ev.RunID)
	status := string(ev.Status)
	if env := ev.Envelope; env != nil {
		status = string(env.Status)
		rs.agent.SetAttributes(
			attribute.Int64("gen_ai.usage.input_tokens", env.Usage.InputTokens),
			attribute.Int64("gen_ai.usage.output_tokens", env.Usage.OutputTokens),
			attribute.Int64("deputy.tree.input_tokens", env.TreeUsage.InputTokens),
			attribute.Int64("deputy.tree.output_tokens", env.TreeUsage.OutputTokens),
			attribute.Int("deputy.turns", env.Turns),
		)
		if env.CostUSD != nil {
			rs.agent.SetAttributes(attribute.Float64("deputy.cost_usd", *env.CostUSD))
		}
	}
	rs.agent.SetAttributes(attribute.String("deputy.status", status))
	if status != string(delegate.StatusOK) {
		rs.agent.SetStatus(codes.Error, ev.Error)
	}
	// Whatever is still open ends with its run (a cancelled call).
	if rs.chat != nil {
		rs.chat.End(trace.WithTimestamp(ev.Time))
	}
	for _, s := range rs.tools {
		s.End(trace.WithTimestamp(ev.Time))
	}
	rs.agent.End(trace.WithTimestamp(ev.Time))
}

func (t *tracer) loop(rs *runSpans, ev delegate.Event) {
	a := ev.Agent
	provider, model := splitModel(ev.Model)
	switch a.Kind {
	case agent.EventModelStart:
		_, rs.chat = t.tr.Start(rs.ctx, "chat "+model, trace.WithTimestamp(ev.Time), trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(
				attribute.String("gen_ai.operation.name", "chat"),
				attribute.String("gen_ai.provider.name", provider),
				attribute.String("gen_ai.request.model", model),
				attribute.String("gen_ai.agent.name", ev.Label),
				attribute.String("gen_ai.agent.id", ev.RunID),
				attribute.Int("deputy.turn", a.Turn),
			))
	case agent.EventRetry:
		if rs.chat != nil {
			rs.chat.AddEvent("retry", trace.WithTimestamp(ev.Time), trace.WithAttributes(
				attribute.Int("deputy.attempt", a.Attempt), attribute.Int64("deputy.wait_ms", a.Duration.Milliseconds()),
				attribute.String("error.type", errString(a.Err))))
		}
	case agent.EventModelEnd:
		if rs.chat == nil {
			return
		}
		respModel := a.Model
		if respModel == "" {
			respModel = model
		}
		if a.Err != nil {
			rs.chat.SetStatus(codes.Error, a.Err.Error())
			rs.chat.SetAttributes(attribute.String("error.type", errString(a.Err)))
		} else {
			rs.chat.SetAttributes(
				attribute.String("gen_ai.response.model", respModel),
				attribute.Int64("gen_ai.usage.input_tokens", a.Usage.InputTokens),
				attribute.Int64("gen_ai.usage.output_tokens", a.Usage.OutputTokens),
				attribute.StringSlice("gen_ai.response.finish_reasons", []string{string(a.Finish)}),
			)
			if ev.CostUSD != nil {
				rs.chat.SetAttributes(attribute.Float64("deputy.cost_usd", *ev.CostUSD))
			}
		}
		rs.chat.End(trace.WithTimestamp(ev.Time))
		rs.chat = nil
	case agent.EventToolStart:
		ctx, span := t.tr.Start(rs.ctx, "execute_tool "+a.Call.Name, trace.WithTimestamp(ev.Time), trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(
				attribute.String("gen_ai.operation.name", "execute_tool"),
				attribute.String("gen_ai.tool.name", a.Call.Name),
				attribute.String("gen_ai.tool.call.id", a.Call.ID),
				attribute.String("gen_ai.agent.id", ev.RunID),
			))
		rs.tools[a.Call.ID], rs.tctx[a.Call.ID] = span, ctx
	case agent.EventToolEnd:
		span := rs.tools[a.Call.ID]
		if span == nil {
			return
		}
		if a.Result.IsError {
			span.SetStatus(codes.Error, "the tool returned an error result")
		}
		span.End(trace.WithTimestamp(ev.Time))
		delete(rs.tools, a.Call.ID)
		delete(rs.tctx, a.Call.ID)
	}
}

// splitModel turns "provider/model" into the gen_ai provider name and the
// model.
func splitModel(s string) (provider, model string) {
	provider, model, ok := strings.Cut(s, "/")
	if !ok {
		return "", s
	}
	switch provider {
	case "gemini":
		provider = "gcp.gemini"
	}
	return provider, model
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

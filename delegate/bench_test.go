package delegate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/store"
	"github.com/deputyhq/deputy/tool"
	"github.com/deputyhq/deputy/tool/builtin"
)

// fixedProvider answers instantly or after a fixed latency: the root's
// first call asks for `fanout` call_agent calls, its second answers, and a
// child answers at once. It does no parsing or templating, so what a
// benchmark measures is the engine.
type fixedProvider struct {
	latency time.Duration
	fanout  int
	// childLatency, when set, is the children's latency instead (the
	// root's calls then answer at once).
	childLatency time.Duration
}

func (p fixedProvider) Name() string { return "fixed" }

func (p fixedProvider) Generate(ctx context.Context, req *llm.Request, _ llm.StreamFunc) (*llm.Response, error) {
	latency := p.latency
	if p.childLatency > 0 {
		latency = 0
		if !strings.HasPrefix(req.System, "ROOT") {
			latency = p.childLatency
		}
	}
	if latency > 0 {
		t := time.NewTimer(latency)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, llm.Classify(ctx, "fixed", ctx.Err())
		case <-t.C:
		}
	}
	usage := llm.Usage{InputTokens: 10, OutputTokens: 5}
	last := req.Messages[len(req.Messages)-1]
	if !strings.HasPrefix(req.System, "ROOT") || last.Role == llm.RoleTool {
		return &llm.Response{Message: llm.AssistantMessage("done"), Usage: usage, FinishReason: llm.FinishStop}, nil
	}
	calls := make([]llm.ToolCall, p.fanout)
	for i := range calls {
		calls[i] = llm.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "call_agent", Arguments: json.RawMessage(`{"agent":"child","task":"work"}`)}
	}
	return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: calls}, Usage: usage, FinishReason: llm.FinishToolCalls}, nil
}

func benchEngine(b *testing.B, p llm.Provider, ledger *store.Store, concurrency int) (*delegate.Engine, *config.Agent) {
	root := &config.Agent{Name: "root", Model: "fixed/m", SystemPrompt: "ROOT", Subagents: []string{"child"}, SubagentsConfig: config.DefaultSubagentsConfig(), Tools: []string{}}
	child := &config.Agent{Name: "child", Model: "inherit", SystemPrompt: "CHILD", SubagentsConfig: config.DefaultSubagentsConfig(), Tools: []string{}}
	tools := builtin.New(builtin.Options{Workdir: b.TempDir()})
	e := &delegate.Engine{
		Agents:  config.NewAgentSet(root, child),
		Models:  models{p},
		Tools:   func(string) *tool.Registry { return tools },
		Options: delegate.Options{Concurrency: concurrency},
	}
	if ledger != nil {
		// A nil *store.Store in the Ledger interface would not be nil.
		e.Ledger = ledger
	}
	return e, root
}

// BenchmarkDelegation measures a root run with `children` delegations
// against an instant model: the difference between 0 and 1 child is the
// engine's own cost of one delegation (scope, guard, tools, envelope,
// events), with and without the ledger.
func BenchmarkDelegation(b *testing.B) {
	for _, ledger := range []bool{false, true} {
		for _, children := range []int{0, 1, 8} {
			name := fmt.Sprintf("children=%d/ledger=%v", children, ledger)
			b.Run(name, func(b *testing.B) {
				var st *store.Store
				if ledger {
					var err error
					st, err = store.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
					if err != nil {
						b.Fatal(err)
					}
					defer st.Close()
				}
				e, root := benchEngine(b, fixedProvider{fanout: children}, st, 8)
				wd := b.TempDir()
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					env := e.Run(context.Background(), delegate.RunRequest{Agent: root, Task: "go", Workdir: wd})
					if !env.OK() || len(env.Children) != children {
						b.Fatalf("run: %s %s", env.Status, env.Error)
					}
				}
			})
		}
	}
}

// BenchmarkFanOut64 runs one root that delegates to 64 children in one
// response, every model call taking 50ms. The ideal wall time is the
// latency chain root -> slowest child -> root = 150ms; "x-ideal" is the
// measured wall time divided by it.
func BenchmarkFanOut64(b *testing.B) {
	const latency = 50 * time.Millisecond
	for _, concurrency := range []int{0, 64, 8} {
		b.Run(fmt.Sprintf("concurrency=%d", concurrency), func(b *testing.B) {
			e, root := benchEngine(b, fixedProvider{latency: latency, fanout: 64}, nil, concurrency)
			wd := b.TempDir()
			var total time.Duration
			for b.Loop() {
				start := time.Now()
				env := e.Run(context.Background(), delegate.RunRequest{Agent: root, Task: "go", Workdir: wd})
				total += time.Since(start)
				if !env.OK() || len(env.Children) != 64 {
					b.Fatalf("run: %s %s", env.Status, env.Error)
				}
			}
			// With a cap of c model calls in flight, the 64 children take
			// ceil(64/c) rounds of one latency each; with none, one round.
			rounds := 1
			if concurrency > 0 {
				rounds = (64 + concurrency - 1) / concurrency
			}
			ideal := time.Duration(2+rounds) * latency
			b.ReportMetric(float64(total)/float64(b.N)/float64(ideal), "x-ideal")
		})
	}
}

// BenchmarkFanOut10k runs one root that delegates to 10,000 children in
// one response, each child's model call taking 1s, in one process with no
// concurrency configured, with and without the SQLite ledger. x-ideal is
// the wall time over the 1s latency chain (the root's calls answer at
// once); heap-KB/child and stack-KB/child are the peaks of the heap in
// use and of the goroutine stacks during the run, above what they were
// before it, per child. Run it with -benchtime 1x: one run takes seconds.
func BenchmarkFanOut10k(b *testing.B) {
	const n, latency = 10000, time.Second
	for _, withLedger := range []bool{false, true} {
		b.Run(fmt.Sprintf("ledger=%v", withLedger), func(b *testing.B) {
			var st *store.Store
			if withLedger {
				var err error
				st, err = store.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
			}
			e, root := benchEngine(b, fixedProvider{fanout: n, childLatency: latency}, st, 0)
			wd := b.TempDir()
			var total time.Duration
			var heap, stack uint64
			for b.Loop() {
				runtime.GC()
				peak := sampleMemory()
				start := time.Now()
				env := e.Run(context.Background(), delegate.RunRequest{Agent: root, Task: "go", Workdir: wd})
				total += time.Since(start)
				h, s := peak()
				heap, stack = max(heap, h), max(stack, s)
				if !env.OK() || len(env.Children) != n {
					b.Fatalf("run: %s %s", env.Status, env.Error)
				}
			}
			b.ReportMetric(float64(total)/float64(b.N)/float64(latency), "x-ideal")
			b.ReportMetric(float64(heap)/n/1024, "heap-KB/child")
			b.ReportMetric(float64(stack)/n/1024, "stack-KB/child")
		})
	}
}

// sampleMemory samples the heap in use and the goroutine stacks every 20ms
// until the returned function is called, which returns their peaks above
// the values at the start.
func sampleMemory() func() (heap, stack uint64) {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	baseHeap, baseStack := m.HeapInuse, m.StackInuse
	var peakHeap, peakStack uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peakHeap, peakStack = max(peakHeap, m.HeapInuse), max(peakStack, m.StackInuse)
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() (uint64, uint64) {
		close(stop)
		<-done
		return peakHeap - min(peakHeap, baseHeap), peakStack - min(peakStack, baseStack)
	}
}

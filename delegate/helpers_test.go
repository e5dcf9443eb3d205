package delegate_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest"
	"github.com/deputyhq/deputy/store"
	"github.com/deputyhq/deputy/tool"
	"github.com/deputyhq/deputy/tool/builtin"
)

// timedProvider records when each request started and ended, keyed by the
// first line of its system prompt, so tests can prove overlap without
// timing themselves.
type timedProvider struct {
	llm.Provider
	mu    sync.Mutex
	spans []span
}

type span struct {
	who        string
	start, end time.Time
	req        *llm.Request
}

func (p *timedProvider) Generate(ctx context.Context, req *llm.Request, on llm.StreamFunc) (*llm.Response, error) {
	start := time.Now()
	resp, err := p.Provider.Generate(ctx, req, on)
	who, _, _ := strings.Cut(req.System, "\n")
	p.mu.Lock()
	p.spans = append(p.spans, span{who: who, start: start, end: time.Now(), req: req})
	p.mu.Unlock()
	return resp, err
}

func (p *timedProvider) requests(who string) []*llm.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*llm.Request
	for _, s := range p.spans {
		if strings.HasPrefix(s.who, who) {
			out = append(out, s.req)
		}
	}
	return out
}

// overlap reports whether a call of a and a call of b were in flight at
// the same time.
func (p *timedProvider) overlap(a, b string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, x := range p.spans {
		for _, y := range p.spans {
			if strings.HasPrefix(x.who, a) && strings.HasPrefix(y.who, b) && x.start.Before(y.end) && y.start.Before(x.end) {
				return true
			}
		}
	}
	return false
}

type models struct{ p llm.Provider }

func (m models) ForModel(s string) (llm.Provider, llm.ModelRef, error) {
	ref, err := llm.ParseModel(s)
	return m.p, ref, err
}

// harness is an engine over a script, with agents and collected events.
type harness struct {
	t      *testing.T
	engine *delegate.Engine
	prov   *timedProvider
	mu     sync.Mutex
	events []delegate.Event
}

func newHarness(t *testing.T, script string, agents ...*config.Agent) *harness {
	t.Helper()
	s, err := llmtest.ParseScript([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, prov: &timedProvider{Provider: llmtest.NewProvider(s)}}
	set := config.NewAgentSet(agents...)
	h.engine = &delegate.Engine{
		Agents: set,
		Models: models{h.prov},
		Tools: func(workdir string) *tool.Registry {
			return builtin.New(builtin.Options{Workdir: workdir})
		},
		Listeners: []delegate.Listener{h.listen},
		Options:   delegate.Options{DefaultTools: builtin.DefaultToolNames()},
	}
	return h
}

func (h *harness) listen(ev delegate.Event) {
	if ev.Type == delegate.EventProgress {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, ev)
}

func (h *harness) eventsOf(t delegate.EventType) []delegate.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []delegate.Event
	for _, e := range h.events {
		if e.Type == t {
			out = append(out, e)
		}
	}
	return out
}

func (h *harness) run(a *config.Agent, task string) *delegate.Envelope {
	h.t.Helper()
	return h.engine.Run(context.Background(), delegate.RunRequest{Agent: a, Task: task, Workdir: h.t.TempDir()})
}

func agentDef(name, prompt string, subs ...string) *config.Agent {
	return &config.Agent{Name: name, Description: "the " + name, Model: "script/test", SystemPrompt: prompt,
		Subagents: subs, SubagentsConfig: config.DefaultSubagentsConfig()}
}

// toolResults returns the tool messages of a request, in order.
func toolResults(req *llm.Request) []llm.Message {
	var out []llm.Message
	for _, m := range req.Messages {
		if m.Role == llm.RoleTool {
			out = append(out, m)
		}
	}
	return out
}

func toolNames(req *llm.Request) []string {
	var out []string
	for _, t := range req.Tools {
		out = append(out, t.Name)
	}
	return out
}

func decodeEnvelope(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("not a JSON envelope: %v\n%s", err, s)
	}
	return m
}

// openLedger opens a SQLite ledger in the test's temporary directory,
// closed when the test ends.
func openLedger(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "ledger.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

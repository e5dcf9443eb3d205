//go:build temporal

package durable_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm"
)

// stateProvider gives every answer a provider state and a summary of its
// thinking, as today's reasoning models do, and notes each request that
// does not send back an earlier answer's state as it came.
type stateProvider struct {
	llm.Provider
	mu    sync.Mutex
	n     int
	given map[string]string // state data by system prompt and answer
	bad   []string
}

func stateKey(system string, m llm.Message) string {
	calls, _ := json.Marshal(m.ToolCalls)
	return system + "\x00" + m.Content + "\x00" + string(calls)
}

func (p *stateProvider) Generate(ctx context.Context, req *llm.Request, on llm.StreamFunc) (*llm.Response, error) {
	p.mu.Lock()
	for i, m := range req.Messages {
		if m.Role != llm.RoleAssistant {
			continue
		}
		want, ok := p.given[stateKey(req.System, m)]
		var got bytes.Buffer
		if m.State != nil {
			json.Compact(&got, m.State.Data)
		}
		if !ok || m.State == nil || m.State.Format != "test-format" || m.State.Model != req.Model || got.String() != want {
			p.bad = append(p.bad, fmt.Sprintf("%.10s message %d: state %+v, want data %s", req.System, i, m.State, want))
		}
	}
	p.mu.Unlock()
	resp, err := p.Provider.Generate(ctx, req, on)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	data := fmt.Sprintf(`{"signature":"sig-%d"}`, p.n)
	resp.Message.State = &llm.State{Format: "test-format", Model: req.Model, Data: json.RawMessage(data)}
	resp.Message.Reasoning = fmt.Sprintf("THINKING-%d", p.n)
	p.given[stateKey(req.System, resp.Message)] = data
	return resp, nil
}

// A conversation on Temporal carries each turn's provider state through
// the workflow's history (the model activity's input and result are JSON
// there): every request of a tree's tool loops sends back the state of
// its earlier answers, and no thinking reaches a result.
func TestProviderStateSurvivesTemporalHistory(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "data.txt", "DATA")
	eng, prov, lead := newEngineWith(t, noRateLimit(treeScript))
	sp := &stateProvider{Provider: prov, given: map[string]string{}}
	eng.Models = models{sp}
	_, got := onTemporal(t, eng, eng, delegate.RunRequest{Agent: lead, Task: "go", Workdir: dir})
	if got.Status != delegate.StatusOK || got.Output != "A read DATA\n | B done" {
		t.Fatalf("workflow answer %q (%s)", got.Output, got.Status)
	}
	if sp.n != 5 {
		t.Errorf("%d model calls, want 5 (lead 2, worker-a 2, worker-b 1)", sp.n)
	}
	if len(sp.bad) > 0 {
		t.Errorf("state not sent back on Temporal:\n%s", strings.Join(sp.bad, "\n"))
	}
	whole, _ := json.Marshal(got)
	if bytes.Contains(whole, []byte("THINKING")) || bytes.Contains(whole, []byte("sig-")) {
		t.Errorf("thinking or state in the tree's result:\n%s", whole)
	}
}

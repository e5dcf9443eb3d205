package llmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/deputyhq/deputy/llm"
)

// What a Stateful provider's answers carry, for a test to look for where
// it must never be (a parent's tool result, an output).
const (
	// StatefulThinking starts every summary of thinking (Message.Reasoning).
	StatefulThinking = "THINKING-"
	// StatefulSignature starts every signature inside a state's data.
	StatefulSignature = "sig-"
	// StatefulFormat is the Format of a Stateful provider's states.
	StatefulFormat = "llmtest-state"
)

// Stateful wraps a provider so that it answers as today's reasoning
// models do: every answer carries an opaque provider state
// (Message.State) and a readable summary of the model's thinking
// (Message.Reasoning). It checks that each request sends back, on every
// earlier answer of its conversation, the state that answer came with
// (as JSON: the same value), which is what a provider requires; Problems
// lists the requests that did not.
//
// Answers are told apart by the request's system prompt and what they
// said and asked for, so a test's conversations should differ in those.
type Stateful struct {
	llm.Provider
	mu    sync.Mutex
	calls int
	given map[string]string // a state's data by the answer it came with
	bad   []string
}

// NewStateful wraps p.
func NewStateful(p llm.Provider) *Stateful {
	return &Stateful{Provider: p, given: map[string]string{}}
}

func answerKey(system string, m llm.Message) string {
	calls, _ := json.Marshal(m.ToolCalls)
	return system + "\x00" + m.Content + "\x00" + string(calls)
}

// Generate checks req's earlier answers, then answers as the wrapped
// provider does, with a state and a summary of thinking.
func (p *Stateful) Generate(ctx context.Context, req *llm.Request, on llm.StreamFunc) (*llm.Response, error) {
	p.check(req)
	resp, err := p.Provider.Generate(ctx, req, on)
	if err != nil {
		return nil, err
	}
	who, _, _ := strings.Cut(req.System, "\n")
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	// The provider's own JSON, its spacing included: it must come back as
	// the same JSON value.
	data := fmt.Sprintf(`{"signature": "%s%d", "who": %q}`, StatefulSignature, p.calls, who)
	resp.Message.State = &llm.State{Format: StatefulFormat, Model: req.Model, Data: json.RawMessage(data)}
	resp.Message.Reasoning = fmt.Sprintf("%s%d: weighing %q", StatefulThinking, p.calls, who)
	p.given[answerKey(req.System, resp.Message)] = data
	return resp, nil
}

func (p *Stateful) check(req *llm.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, m := range req.Messages {
		if m.Role != llm.RoleAssistant {
			continue
		}
		data, ok := p.given[answerKey(req.System, m)]
		switch {
		case !ok:
			p.bad = append(p.bad, fmt.Sprintf("message %d (%q) is no answer of mine", i, m.Content))
		case m.State == nil:
			p.bad = append(p.bad, fmt.Sprintf("message %d (%q) came back without its state", i, m.Content))
		case m.State.Format != StatefulFormat || m.State.Model != req.Model || !sameJSON(m.State.Data, data):
			p.bad = append(p.bad, fmt.Sprintf("message %d (%q) came back with state %s %s %s, want %s",
				i, m.Content, m.State.Format, m.State.Model, m.State.Data, data))
		}
	}
}

// Problems lists every earlier answer that a request sent back without
// its state, or with another one.
func (p *Stateful) Problems() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.bad...)
}

// Calls counts the answers given.
func (p *Stateful) Calls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls
}

func sameJSON(a json.RawMessage, b string) bool {
	var x, y bytes.Buffer
	return json.Compact(&x, a) == nil && json.Compact(&y, []byte(b)) == nil && x.String() == y.String()
}

package llmtest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/llm"
)

// Stateful notes an answer sent back without its state, with another
// state, or reformatted only in its spacing (no problem: the same JSON).
func TestStatefulChecksStateComesBack(t *testing.T) {
	p := NewStateful(NewProvider(MustParseScript(`rules: [{reply: {text: "answer {{ .Turn }}"}}]`)))
	ctx := context.Background()
	req := &llm.Request{Model: "m", System: "S", Messages: []llm.Message{llm.UserMessage("q")}}
	first, err := p.Generate(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if first.Message.State == nil || first.Message.State.Format != StatefulFormat || !strings.HasPrefix(first.Message.Reasoning, StatefulThinking) {
		t.Fatalf("answer %+v", first.Message)
	}
	var compacted json.RawMessage
	if err := json.Unmarshal(first.Message.State.Data, &compacted); err != nil {
		t.Fatal(err)
	}
	back := first.Message
	back.State = &llm.State{Format: StatefulFormat, Model: "m", Data: compacted}
	req.Messages = append(req.Messages, back, llm.UserMessage("again"))
	if _, err := p.Generate(ctx, req, nil); err != nil || len(p.Problems()) != 0 {
		t.Fatalf("the same state, respaced: %v %v", err, p.Problems())
	}
	req.Messages[1].State = nil
	p.Generate(ctx, req, nil)
	req.Messages[1].State = &llm.State{Format: StatefulFormat, Model: "m", Data: json.RawMessage(`{"signature":"forged"}`)}
	p.Generate(ctx, req, nil)
	got := p.Problems()
	if len(got) != 2 || !strings.Contains(got[0], "without its state") || !strings.Contains(got[1], "forged") {
		t.Errorf("problems %q", got)
	}
	if p.Calls() != 4 {
		t.Errorf("calls %d", p.Calls())
	}
}

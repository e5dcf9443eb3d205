package anthropic_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest/adaptertest"
)

// sentParams is what a request body says of thinking, effort and length.
type sentParams struct {
	MaxTokens int `json:"max_tokens"`
	Thinking  *struct {
		Type         string `json:"type"`
		Display      string `json:"display,omitempty"`
		BudgetTokens int    `json:"budget_tokens,omitempty"`
	} `json:"thinking,omitempty"`
	OutputConfig *struct {
		Effort string `json:"effort,omitempty"`
	} `json:"output_config,omitempty"`
}

func (s sentParams) String() string { b, _ := json.Marshal(s); return string(b) }

// Params.Effort goes to each model family's own control, by the
// capability table: output_config.effort with adaptive thinking shown
// summarized on the Claude 5 models (which think anyway), a thinking
// budget on the budget models, the nearest level a model takes; the
// default max_tokens is the model's output limit. Every request is one
// the strict fake accepts.
func TestEffortAndMaxTokens(t *testing.T) {
	const adaptive = `"thinking":{"type":"adaptive","display":"summarized"}`
	tests := []struct {
		model, effort string
		maxTokens     int
		want          string // the body's max_tokens, thinking and output_config
	}{
		{"claude-sonnet-5-5", "", 0, `{"max_tokens":128000,` + adaptive + `}`},
		{"claude-sonnet-5-5", "high", 0, `{"max_tokens":128000,` + adaptive + `,"output_config":{"effort":"high"}}`},
		{"claude-sonnet-5-5", "none", 0, `{"max_tokens":128000,` + adaptive + `,"output_config":{"effort":"low"}}`},
		{"claude-opus-5-5", "max", 0, `{"max_tokens":128000,` + adaptive + `,"output_config":{"effort":"max"}}`},
		{"claude-opus-4-6", "", 0, `{"max_tokens":128000}`},
		{"claude-opus-4-6", "xhigh", 0, `{"max_tokens":128000,` + adaptive + `,"output_config":{"effort":"high"}}`},
		{"claude-opus-4-5", "medium", 0, `{"max_tokens":64000,"output_config":{"effort":"medium"}}`},
		{"claude-haiku-4-5", "", 0, `{"max_tokens":64000}`},
		{"claude-haiku-4-5", "high", 0, `{"max_tokens":64000,"thinking":{"type":"enabled","budget_tokens":32768}}`},
		{"claude-haiku-4-5-20251001", "minimal", 0, `{"max_tokens":64000,"thinking":{"type":"enabled","budget_tokens":4096}}`},
		{"claude-haiku-4-5", "high", 2000, `{"max_tokens":2000,"thinking":{"type":"enabled","budget_tokens":1999}}`},
		{"claude-haiku-4-5", "low", 1000, `{"max_tokens":1000}`},
		{"MiniMax-M2", "high", 0, `{"max_tokens":4096,"output_config":{"effort":"high"}}`},
		{"MiniMax-M2", "", 0, `{"max_tokens":4096}`},
	}
	p, srv := adaptertest.Start(t, adapter, okScript)
	for _, tt := range tests {
		t.Run(tt.model+"/"+tt.effort, func(t *testing.T) {
			req := &llm.Request{Model: tt.model, Messages: []llm.Message{llm.UserMessage("hi")}, Params: llm.Params{Effort: tt.effort}}
			if tt.maxTokens > 0 {
				req.Params.MaxTokens = &tt.maxTokens
			}
			n := len(srv.Requests())
			if _, err := p.Generate(adaptertest.Context(t), req, nil); err != nil {
				t.Fatalf("Generate: %v", err)
			}
			var got, want sentParams
			if err := json.Unmarshal(srv.Requests()[n].Body, &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.String(), got.String()); diff != "" {
				t.Errorf("sent (-want +got):\n%s", diff)
			}
		})
	}
}

// An effort that is no level at all is refused before anything is sent.
func TestUnknownEffortRefused(t *testing.T) {
	p, srv := adaptertest.Start(t, adapter, okScript)
	req := &llm.Request{Model: current, Messages: []llm.Message{llm.UserMessage("hi")}, Params: llm.Params{Effort: "ultra"}}
	_, err := p.Generate(adaptertest.Context(t), req, nil)
	adaptertest.WantKind(t, err, llm.KindBadRequest, adaptertest.Key)
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

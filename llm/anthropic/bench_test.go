package anthropic_test

import (
	"context"
	"testing"

	"deputy/llm"
	"deputy/llm/anthropic"
	"deputy/llm/llmtest"
)

// BenchmarkGenerate measures one call against the fake server over
// loopback: the adapter's and the SDK's overhead, plain and streamed.
func BenchmarkGenerate(b *testing.B) {
	srv := llmtest.StartServer(b, llmtest.MustParseScript(toolScript))
	p, err := anthropic.New(anthropic.Options{APIKey: testKey, BaseURL: srv.URL()})
	if err != nil {
		b.Fatal(err)
	}
	req := &llm.Request{Model: "bench", Messages: []llm.Message{llm.UserMessage("gopher")}, Tools: []llm.ToolSpec{lookupTool, clockTool}}
	for _, tc := range []struct {
		name    string
		onEvent llm.StreamFunc
	}{{"plain", nil}, {"stream", func(llm.StreamEvent) {}}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := p.Generate(context.Background(), req, tc.onEvent); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

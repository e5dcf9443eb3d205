package adaptertest

import (
	"context"
	"testing"

	"github.com/deputyhq/deputy/llm"
)

// Bench measures one call of a's provider against the fake server over
// loopback, plain and streamed: the overhead of the adapter and its SDK
// for an answer with text and two tool calls.
func Bench(b *testing.B, a Adapter) {
	p, _ := Start(b, a, toolScript)
	req := &llm.Request{Model: a.model(), Messages: []llm.Message{llm.UserMessage("gopher")}, Tools: []llm.ToolSpec{LookupTool, ClockTool}}
	for _, stream := range []bool{false, true} {
		b.Run(streamName(stream), func(b *testing.B) {
			var onEvent llm.StreamFunc
			if stream {
				onEvent = func(llm.StreamEvent) {}
			}
			for b.Loop() {
				if _, err := p.Generate(context.Background(), req, onEvent); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

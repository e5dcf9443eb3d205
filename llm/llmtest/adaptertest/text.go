package adaptertest

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/llm"
)

// helloScript answers every request with a greeting and fixed usage.
const helloScript = `
rules:
  - name: hello
    reply:
      text: "Hello, {{ .LastUser }}! Nice to meet you."
      usage: { input_tokens: 12, output_tokens: 7 }
`

// testText: a text answer arrives whole, plain or streamed in several
// deltas, with usage, finish reason and model; the request reached the
// right path with the key, the system prompt and no unset parameter.
func testText(t *testing.T, a Adapter) {
	for _, stream := range []bool{false, true} {
		t.Run(streamName(stream), func(t *testing.T) {
			p, srv := Start(t, a, helloScript)
			req := a.request("Ada")
			req.System = "You are terse."
			var rec Recorder
			resp, err := p.Generate(Context(t), req, rec.Func(stream))
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			want := &llm.Response{
				Message:      llm.Message{Role: llm.RoleAssistant, Content: "Hello, Ada! Nice to meet you."},
				Usage:        llm.Usage{InputTokens: 12, OutputTokens: 7},
				FinishReason: llm.FinishStop,
				Model:        a.model(),
			}
			if diff := cmp.Diff(want, resp, IgnoreState); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
			if stream {
				checkReasoning(t, &rec, resp)
				if len(rec.Texts) < 2 {
					t.Errorf("got %d text deltas, want the text in pieces", len(rec.Texts))
				}
				if got := rec.Text(); got != want.Message.Content {
					t.Errorf("deltas join to %q, want %q", got, want.Message.Content)
				}
				if len(rec.Calls) != 0 {
					t.Errorf("tool call events %+v for a text answer", rec.Calls)
				}
			}

			log := srv.Requests()
			if len(log) != 1 {
				t.Fatalf("server got %d requests, want 1", len(log))
			}
			r := log[0]
			if r.Protocol != a.Protocol || r.Path != a.Path(a.model(), stream) || r.Stream != a.streams(stream, req.Params) {
				t.Errorf("request: protocol %q path %q stream %v, want %q %q %v", r.Protocol, r.Path, r.Stream, a.Protocol, a.Path(a.model(), stream), a.streams(stream, req.Params))
			}
			if got, want := r.Header.Get(a.KeyHeader), a.KeyPrefix+Key; got != want {
				t.Errorf("%s header = %q, want %q", a.KeyHeader, got, want)
			}
			if r.Parsed == nil {
				t.Fatalf("the server could not read the request: %s", r.Body)
			}
			if r.Parsed.System != req.System {
				t.Errorf("system = %q, want %q", r.Parsed.System, req.System)
			}
			if diff := cmp.Diff(req.Messages, r.Parsed.Messages); diff != "" {
				t.Errorf("messages at the server (-want +got):\n%s", diff)
			}
			checkParams(t, a, r.Body, r.Parsed.Params, llm.Params{})
		})
	}
}

// checkReasoning: the reasoning deltas of a stream join to the
// response's reasoning (none for a model that gives none).
func checkReasoning(t *testing.T, rec *Recorder, resp *llm.Response) {
	t.Helper()
	if got := rec.Reasoning(); got != resp.Message.Reasoning {
		t.Errorf("reasoning deltas join to %q, want the response's reasoning %q", got, resp.Message.Reasoning)
	}
}

// testParams: set parameters arrive as given, an explicit temperature 0
// included, and unset ones are left out (or take the adapter's default).
func testParams(t *testing.T, a Adapter) {
	tests := []struct {
		name   string
		params llm.Params
	}{
		{"unset", llm.Params{}},
		{"zero temperature", llm.Params{Temperature: Ptr(0.0)}},
		{"temperature and max tokens", llm.Params{Temperature: Ptr(0.7), MaxTokens: Ptr(100)}},
		{"max tokens only", llm.Params{MaxTokens: Ptr(256)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, srv := Start(t, a, helloScript)
			req := a.request("x")
			req.Params = a.fitParams(tt.params)
			if _, err := p.Generate(Context(t), req, nil); err != nil {
				t.Fatalf("Generate: %v", err)
			}
			r := srv.Requests()[0]
			if r.Parsed == nil {
				t.Fatalf("the server could not read the request: %s", r.Body)
			}
			checkParams(t, a, r.Body, r.Parsed.Params, req.Params)
		})
	}
}

// checkParams compares the parameters the server read with those sent.
func checkParams(t *testing.T, a Adapter, body []byte, got, sent llm.Params) {
	t.Helper()
	want := sent
	if want.MaxTokens == nil && a.DefaultMaxTokens != 0 {
		want.MaxTokens = Ptr(a.DefaultMaxTokens)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("params at the server (-want +got):\n%s", diff)
	}
	// The parsed form cannot tell a missing temperature from a null one;
	// the body can.
	if inBody := HasKey(body, "temperature"); inBody != (sent.Temperature != nil) {
		t.Errorf("temperature in the body = %v, want %v: %s", inBody, sent.Temperature != nil, body)
	}
}

package anthropic_test

import (
	"testing"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/anthropic"
	"github.com/deputyhq/deputy/llm/capability"
	"github.com/deputyhq/deputy/llm/llmtest/adaptertest"
)

// adapter describes the Anthropic adapter to the shared conformance suite.
var adapter = adaptertest.Adapter{
	New: func(tb testing.TB, o adaptertest.Options) llm.Provider {
		p, err := anthropic.New(anthropic.Options{
			Name: o.Name, APIKey: o.APIKey, BaseURL: o.BaseURL, HTTPClient: o.HTTPClient,
			IdleTimeout: o.IdleTimeout, ResponseTimeout: o.ResponseTimeout, Headers: o.Headers,
		})
		if err != nil {
			tb.Fatalf("anthropic.New: %v", err)
		}
		return p
	},
	// A current model: the fake holds every request to what Anthropic
	// documents for it (thinking blocks sent back unchanged, only the
	// default sampling, the text between tool calls in thinking blocks).
	Model:  "claude-sonnet-5-5",
	Strict: true,
	// What the engine sends it: no temperature (llm/capability).
	FitParams: func(p llm.Params) llm.Params {
		fitted, _ := capability.Default.Fit("anthropic/claude-sonnet-5-5", p)
		return fitted
	},
	ProgressAsReasoning: true,
	// Its default max_tokens, its output limit, needs a stream.
	PlainStreamsAbove: 21333,
	Name:              "anthropic",
	Protocol:          "anthropic",
	OutputKey:         "output_config",
	Path:              func(string, bool) string { return "/v1/messages" },
	KeyHeader:         "X-Api-Key",
	DefaultMaxTokens:  capability.MaxOutput("anthropic/claude-sonnet-5-5", anthropic.DefaultMaxTokens),
	ToolErrorFlag:     true,
	BaseURLSuffix:     "/v1/",
	Env: map[string]string{
		"ANTHROPIC_API_KEY":    "junk-key-from-env",
		"ANTHROPIC_BASE_URL":   "http://127.0.0.1:1",
		"ANTHROPIC_AUTH_TOKEN": "junk-token-from-env",
	},
	Invalid: map[string]*llm.Request{
		"zero max tokens": {Model: "m", Messages: []llm.Message{llm.UserMessage("x")}, Params: llm.Params{MaxTokens: adaptertest.Ptr(0)}},
	},
}

func TestConformance(t *testing.T) { adaptertest.Run(t, adapter) }

// BenchmarkGenerate measures one call against the fake server over
// loopback: the adapter's and the SDK's overhead, plain and streamed.
func BenchmarkGenerate(b *testing.B) { adaptertest.Bench(b, adapter) }

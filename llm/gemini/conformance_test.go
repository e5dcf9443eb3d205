package gemini_test

import (
	"testing"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/gemini"
	"github.com/deputyhq/deputy/llm/llmtest/adaptertest"
)

// adapter describes the Gemini adapter to the shared conformance suite.
var adapter = adaptertest.Adapter{
	New: func(tb testing.TB, o adaptertest.Options) llm.Provider {
		p, err := gemini.New(gemini.Options{
			Name: o.Name, APIKey: o.APIKey, BaseURL: o.BaseURL, HTTPClient: o.HTTPClient,
			IdleTimeout: o.IdleTimeout, ResponseTimeout: o.ResponseTimeout, Headers: o.Headers,
		})
		if err != nil {
			tb.Fatalf("gemini.New: %v", err)
		}
		return p
	},
	Name:     "gemini",
	Protocol: "gemini",
	// A current model: the fake signs its answers and wants the
	// signatures back (thought signatures).
	Model:     "gemini-3-pro",
	Strict:    true,
	OutputKey: "responseJsonSchema",
	Path: func(model string, stream bool) string {
		if stream {
			return "/v1beta/models/" + model + ":streamGenerateContent"
		}
		return "/v1beta/models/" + model + ":generateContent"
	},
	KeyHeader:     "X-Goog-Api-Key",
	ToolErrorFlag: true,
	// Every Gemini stream chunk is a whole GenerateContentResponse.
	WholeChunks:   true,
	BaseURLSuffix: "/v1beta/",
	Env: map[string]string{
		"GEMINI_API_KEY":            "junk-gemini-key",
		"GOOGLE_API_KEY":            "junk-google-key",
		"GOOGLE_GEMINI_BASE_URL":    "http://127.0.0.1:1",
		"GOOGLE_GENAI_USE_VERTEXAI": "true",
	},
	Invalid: map[string]*llm.Request{
		"zero max tokens": {Model: "m", Messages: []llm.Message{llm.UserMessage("x")}, Params: llm.Params{MaxTokens: adaptertest.Ptr(0)}},
	},
}

func TestConformance(t *testing.T) { adaptertest.Run(t, adapter) }

// BenchmarkGenerate measures one call against the fake server over
// loopback: the adapter's and the SDK's overhead, plain and streamed.
func BenchmarkGenerate(b *testing.B) { adaptertest.Bench(b, adapter) }

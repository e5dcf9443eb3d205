package openai_test

import (
	"encoding/json"
	"testing"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest/adaptertest"
	"github.com/deputyhq/deputy/llm/openai"
)

// factory builds the adapter on the given wire API ("" chooses by base URL
// and model: chat completions on the fake).
func factory(wire string) adaptertest.Factory {
	return func(tb testing.TB, o adaptertest.Options) llm.Provider {
		p, err := openai.New(openai.Options{
			// The SDK wants the API root, which ends in /v1.
			Name: o.Name, APIKey: o.APIKey, BaseURL: o.BaseURL + "/v1", HTTPClient: o.HTTPClient,
			IdleTimeout: o.IdleTimeout, ResponseTimeout: o.ResponseTimeout, Headers: o.Headers,
			WireAPI: wire,
		})
		if err != nil {
			tb.Fatalf("openai.New: %v", err)
		}
		return p
	}
}

// adapter describes the OpenAI adapter on chat completions, as every
// compatible server gets it, to the shared conformance suite.
var adapter = adaptertest.Adapter{
	New:       factory(""),
	Name:      "openai",
	Protocol:  "openai",
	Path:      func(string, bool) string { return "/v1/chat/completions" },
	KeyHeader: "Authorization",
	KeyPrefix: "Bearer ",
	OutputKey: "response_format",
	// The chat completions wire has no flag for a failed tool result.
	ToolErrorFlag: false,
	Env: map[string]string{
		"OPENAI_BASE_URL":       "http://127.0.0.1:1/v1/",
		"OPENAI_API_KEY":        "junk-key",
		"OPENAI_ORG_ID":         "junk-org",
		"OPENAI_PROJECT_ID":     "junk-project",
		"OPENAI_CUSTOM_HEADERS": "X-Junk: 1",
	},
	Invalid: map[string]*llm.Request{
		"tool result without id": {Model: "m", Messages: []llm.Message{{Role: llm.RoleTool, Content: "x"}}},
		"schema not an object":   {Model: "m", Messages: []llm.Message{llm.UserMessage("hi")}, Tools: []llm.ToolSpec{{Name: "t", Parameters: json.RawMessage(`[1]`)}}},
	},
}

// responsesAdapter is the adapter on OpenAI's Responses API, on a current
// reasoning model: the fake answers it with encrypted reasoning items and
// refuses what gpt-5.6 refuses.
var responsesAdapter = func() adaptertest.Adapter {
	a := adapter
	a.New = factory(openai.WireResponses)
	a.Protocol = "openai-responses"
	a.Model = "gpt-5.6"
	a.Strict = true
	a.Path = func(string, bool) string { return "/v1/responses" }
	a.OutputKey = "format" // text.format
	// gpt-5.6 takes only the default temperature, 1.
	a.FitParams = func(p llm.Params) llm.Params {
		if p.Temperature != nil {
			p.Temperature = adaptertest.Ptr(1.0)
		}
		return p
	}
	return a
}()

func TestConformance(t *testing.T) {
	t.Run("chat", func(t *testing.T) { adaptertest.Run(t, adapter) })
	t.Run("responses", func(t *testing.T) { adaptertest.Run(t, responsesAdapter) })
}

// BenchmarkGenerate measures one call against the fake server over
// loopback: the adapter's and the SDK's overhead, plain and streamed.
func BenchmarkGenerate(b *testing.B) {
	b.Run("chat", func(b *testing.B) { adaptertest.Bench(b, adapter) })
	b.Run("responses", func(b *testing.B) { adaptertest.Bench(b, responsesAdapter) })
}

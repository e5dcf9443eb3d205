package openai_test

import (
	"encoding/json"
	"testing"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest/adaptertest"
	"github.com/deputyhq/deputy/llm/openai"
)

// adapter describes the OpenAI adapter to the shared conformance suite.
var adapter = adaptertest.Adapter{
	New: func(tb testing.TB, o adaptertest.Options) llm.Provider {
		p, err := openai.New(openai.Options{
			// The SDK wants the API root, which ends in /v1.
			Name: o.Name, APIKey: o.APIKey, BaseURL: o.BaseURL + "/v1", HTTPClient: o.HTTPClient,
			IdleTimeout: o.IdleTimeout, ResponseTimeout: o.ResponseTimeout, Headers: o.Headers,
		})
		if err != nil {
			tb.Fatalf("openai.New: %v", err)
		}
		return p
	},
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

func TestConformance(t *testing.T) { adaptertest.Run(t, adapter) }

// BenchmarkGenerate measures one call against the fake server over
// loopback: the adapter's and the SDK's overhead, plain and streamed.
func BenchmarkGenerate(b *testing.B) { adaptertest.Bench(b, adapter) }

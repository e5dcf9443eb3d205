package providers

import (
	"net/http"
	"time"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/capability"
)

// Custom describes a named provider defined in the configuration, such as a
// vLLM server or OpenRouter.
type Custom struct {
	// Type is the wire format: "openai" (the chat completions API) is the
	// only one for now; "" means "openai".
	Type string
	// BaseURL is the API root, usually ending in "/v1/". Required.
	BaseURL string
	// APIKeyEnv names the environment variable holding the key; "" means
	// the server needs no key.
	APIKeyEnv string
	// WireAPI is the API the server speaks (openai.Options.WireAPI): ""
	// is chat completions, which every compatible server has, unless
	// BaseURL is OpenAI's own; "responses" for a server with OpenAI's
	// Responses API.
	WireAPI string
}

// Config configures a Registry.
type Config struct {
	// Custom maps a provider name to its definition. A name may not be one
	// of BuiltinNames.
	Custom map[string]Custom
	// BuiltinWireAPI is the API the built-in openai and ollama providers
	// speak, by name (openai.Options.WireAPI); a provider not named
	// chooses by its base URL and model: OpenAI's Responses API for
	// OpenAI's models at OpenAI's own host, chat completions otherwise.
	BuiltinWireAPI map[string]string
	// Retry is the policy every provider is wrapped in.
	Retry llm.RetryPolicy
	// IdleTimeout fails a stream silent this long; 0 means each adapter's
	// default (60s).
	IdleTimeout time.Duration
	// ResponseTimeout bounds a non-streaming call's wait for its answer; 0
	// means llm.DefaultResponseTimeout, negative means no bound.
	ResponseTimeout time.Duration
	// Dir is where a scripted model's relative path starts; "" means the
	// process's working directory.
	Dir string
	// Getenv reads environment variables; nil means os.Getenv.
	Getenv func(string) string
	// HTTPClient, when set, sends every provider's requests (tests point it
	// at a fake server).
	HTTPClient *http.Client
	// Capabilities is the capability table with config.yaml's overrides,
	// which the adapters read for what each model takes (output limit,
	// thinking control, effort); nil means the embedded table.
	Capabilities *capability.Table
	// OtherKeyEnv names variables holding other secrets deputy uses (a
	// search API's key): KeyEnvNames lists them, so that commands never
	// see them and Secrets redacts them, as the providers' keys.
	OtherKeyEnv []string
}

// TypeOpenAI is the Custom.Type of a server speaking the OpenAI chat
// completions API.
const TypeOpenAI = "openai"

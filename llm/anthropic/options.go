package anthropic

import (
	"net/http"
	"strings"
	"time"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/capability"
)

const (
	// DefaultName is the provider name used when Options.Name is empty.
	DefaultName = "anthropic"
	// DefaultMaxTokens is sent as max_tokens when a request leaves
	// Params.MaxTokens nil and the capability table does not know the
	// model's output limit (a model of another server that speaks this
	// wire): the Messages API refuses a request without max_tokens. For a
	// model the table knows, the default is its output limit.
	DefaultMaxTokens = 4096
	// DefaultIdleTimeout is how long a stream may stay silent before it fails.
	DefaultIdleTimeout = 60 * time.Second
)

// Options configure a Provider. The zero value (plus an API key) talks to
// api.anthropic.com.
type Options struct {
	// Name is the provider name used in errors and by Name(); default
	// "anthropic".
	Name string
	// APIKey is sent as the x-api-key header.
	APIKey string
	// BaseURL is the API root without "/v1" (the SDK posts to
	// BaseURL + "/v1/messages"); "" means the SDK's default. A trailing
	// "/v1" is tolerated and removed.
	BaseURL string
	// HTTPClient sends the requests; nil means a client whose transport is
	// an llm.IdleTransport. A given client's transport is wrapped in an
	// llm.IdleTransport unless it already is one, so IdleTimeout always
	// works.
	HTTPClient *http.Client
	// IdleTimeout fails a stream that sends nothing for this long; 0 means
	// DefaultIdleTimeout, a negative value turns the watch off.
	IdleTimeout time.Duration
	// ResponseTimeout bounds the wait for the answer of a non-streaming
	// call (its response headers); IdleTimeout then bounds each silence in
	// its body. 0 means llm.DefaultResponseTimeout, a negative value turns
	// the bound off.
	ResponseTimeout time.Duration
	// Headers are extra headers sent with every request.
	Headers map[string]string
	// Capabilities says what each model takes (output limit, thinking
	// control); nil means capability.Default, the embedded table.
	Capabilities *capability.Table
	// Secrets are redacted from every error, besides APIKey and the values
	// of Headers, which are always redacted. The providers registry passes
	// every configured key here, so no adapter can echo another's.
	Secrets *llm.Secrets
}

// FromEnv returns the Options that the environment asks for:
// ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL. It is the only place in this
// package that reads the environment; getenv is usually os.Getenv.
func FromEnv(getenv func(string) string) Options {
	return Options{
		APIKey:  strings.TrimSpace(getenv("ANTHROPIC_API_KEY")),
		BaseURL: strings.TrimSpace(getenv("ANTHROPIC_BASE_URL")),
	}
}

// normalizeBaseURL removes a trailing "/v1" (and slashes): users often copy
// the versioned URL, and the SDK appends "v1/messages" itself.
func normalizeBaseURL(u string) string {
	u = strings.TrimRight(strings.TrimSpace(u), "/")
	u = strings.TrimSuffix(u, "/v1")
	if u == "" {
		return ""
	}
	return u + "/"
}

package gemini

import (
	"net/http"
	"strings"
	"time"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/capability"
)

const (
	// DefaultName is the provider name used when Options.Name is empty.
	DefaultName = "gemini"
	// DefaultBaseURL is the Gemini API's root.
	DefaultBaseURL = "https://generativelanguage.googleapis.com/"
	// APIVersion is the API version the adapter speaks; the SDK puts it
	// between the base URL and the method path.
	APIVersion = "v1beta"
	// DefaultIdleTimeout is how long a stream may stay silent before it fails.
	DefaultIdleTimeout = 60 * time.Second
)

// Options configure a Provider.
type Options struct {
	// Name is the provider name used in errors and by Name(); default
	// "gemini".
	Name string
	// APIKey is sent as the x-goog-api-key header. Required.
	APIKey string
	// BaseURL is the API root without the version ("" = DefaultBaseURL);
	// a trailing "/v1beta" is tolerated and removed.
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
	// Secrets are redacted from every error, besides APIKey and the values
	// of Headers, which are always redacted. The providers registry passes
	// every configured key here, so no adapter can echo another's.
	Secrets *llm.Secrets
	// Capabilities says how each model thinks (level or budget, the
	// budget's range); nil means capability.Default, the embedded table.
	Capabilities *capability.Table
}

// FromEnv returns the Options that the environment asks for: the API key
// from GEMINI_API_KEY, else GOOGLE_API_KEY, and the base URL from
// GOOGLE_GEMINI_BASE_URL. It is the only place in this
// package that reads the environment; getenv is usually os.Getenv.
func FromEnv(getenv func(string) string) Options {
	key := strings.TrimSpace(getenv("GEMINI_API_KEY"))
	if key == "" {
		key = strings.TrimSpace(getenv("GOOGLE_API_KEY"))
	}
	// GOOGLE_GEMINI_BASE_URL is the variable genai itself honours; deputy
	// reads it here, once, because the SDK is never left to read the
	// environment on its own.
	return Options{APIKey: key, BaseURL: strings.TrimSpace(getenv("GOOGLE_GEMINI_BASE_URL"))}
}

// normalizeBaseURL returns the base URL the SDK wants: DefaultBaseURL for
// "", a trailing slash, and no version suffix (the SDK adds it).
func normalizeBaseURL(u string) string {
	u = strings.TrimRight(strings.TrimSpace(u), "/")
	u = strings.TrimSuffix(u, "/"+APIVersion)
	if u == "" {
		return DefaultBaseURL
	}
	return u + "/"
}

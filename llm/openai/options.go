package openai

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/capability"
)

// Defaults of Options.
const (
	// DefaultName is the provider name used when Options.Name is empty.
	DefaultName = "openai"
	// DefaultBaseURL is OpenAI's API.
	DefaultBaseURL = "https://api.openai.com/v1/"
	// DefaultIdleTimeout fails a stream that sends nothing for this long.
	DefaultIdleTimeout = 60 * time.Second
	// OllamaName is the provider name of a local Ollama server.
	OllamaName = "ollama"
	// DefaultOllamaHost is where Ollama listens unless OLLAMA_HOST says
	// otherwise.
	DefaultOllamaHost = "http://localhost:11434"
)

// Names of the request field that carries llm.Params.MaxTokens.
const (
	MaxTokensField           = "max_tokens"
	MaxCompletionTokensField = "max_completion_tokens"
)

// The wire APIs of Options.WireAPI. The names are Codex's (its
// wire_api), which users of OpenAI's tools already know.
const (
	// WireChat is the chat completions API (/chat/completions), which
	// OpenAI and every compatible server speak.
	WireChat = "chat"
	// WireResponses is OpenAI's Responses API (/responses), which keeps a
	// reasoning model's reasoning across tool calls. Only OpenAI serves it.
	WireResponses = "responses"
)

// Options configure a Provider. The zero value talks to OpenAI without a key.
type Options struct {
	// Name is the provider name used in errors and Name(): "openai" when
	// empty, "ollama" or a custom provider's name when the adapter is reused.
	Name string
	// APIKey is sent as a bearer token; empty sends no Authorization header
	// (Ollama needs none).
	APIKey string
	// BaseURL is the API root, ending in "/v1/" for OpenAI and most
	// compatible servers; a missing trailing slash is added. "" means
	// DefaultBaseURL.
	BaseURL string
	// HTTPClient sends the requests. nil means a client whose transport is
	// an llm.IdleTransport over llm.Transport(). A client given here
	// has its transport wrapped in an llm.IdleTransport (unless it already
	// is one) so that IdleTimeout works.
	HTTPClient *http.Client
	// IdleTimeout fails a streaming call whose server sends nothing for this
	// long: no headers, or no body bytes. 0 means DefaultIdleTimeout; a
	// negative value disables the watch.
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
	// Capabilities says which of OpenAI's models reason and take an
	// effort; nil means capability.Default, the embedded table.
	Capabilities *capability.Table
	// MaxTokensField is the request field that carries Params.MaxTokens:
	// MaxTokensField or MaxCompletionTokensField. "" picks
	// max_completion_tokens when Name is "openai" and max_tokens otherwise.
	// The Responses API has one field, max_output_tokens.
	MaxTokensField string
	// WireAPI is the API the provider speaks: WireChat, WireResponses, or
	// "" to choose per model: the Responses API for a model of OpenAI's
	// own families (gpt-4.x, gpt-5.x, the o-series; see OpenAIFamily)
	// when BaseURL is OpenAI's API, chat completions otherwise. Compatible
	// servers have no Responses API, so a base URL of their own is never
	// sent there unless WireAPI says so.
	WireAPI string
}

// FromEnv returns the Options of OpenAI as the ecosystem's environment
// variables describe it: OPENAI_API_KEY and OPENAI_BASE_URL. getenv is
// usually os.Getenv; tests pass their own.
func FromEnv(getenv func(string) string) Options {
	return Options{
		Name:    DefaultName,
		APIKey:  strings.TrimSpace(getenv("OPENAI_API_KEY")),
		BaseURL: strings.TrimSpace(getenv("OPENAI_BASE_URL")),
	}
}

// OllamaFromEnv returns the Options of a local Ollama server, found through
// OLLAMA_HOST (default DefaultOllamaHost). Ollama needs no key.
func OllamaFromEnv(getenv func(string) string) Options {
	return Options{
		Name:    OllamaName,
		BaseURL: OllamaBaseURL(getenv("OLLAMA_HOST")),
	}
}

// OllamaBaseURL turns an OLLAMA_HOST value into the base URL of Ollama's
// OpenAI-compatible API. Like Ollama's own client it accepts a bare host
// ("gpu-box"), a host and port ("0.0.0.0:11434") or a URL
// ("https://ollama.example.com"); a value without a scheme gets http and, when
// it names no port, 11434. The result ends in "/v1/".
func OllamaBaseURL(host string) string {
	host = strings.TrimSpace(host)
	if host == "" {
		host = DefaultOllamaHost
	}
	scheme, rest, ok := strings.Cut(host, "://")
	if !ok {
		scheme, rest = "http", host
		hostport, path, _ := strings.Cut(rest, "/")
		if _, _, err := net.SplitHostPort(hostport); err != nil {
			// No port given: Ollama's default. An IPv6 literal may come
			// with or without brackets.
			h := strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
			if h == "" {
				h = "localhost"
			}
			hostport = net.JoinHostPort(h, "11434")
		}
		rest = hostport
		if path != "" {
			rest += "/" + path
		}
	}
	rest = strings.TrimRight(rest, "/")
	if !strings.HasSuffix(rest, "/v1") {
		rest += "/v1"
	}
	return scheme + "://" + rest + "/"
}

// normalizeBaseURL checks that base is an absolute http(s) URL and makes it
// end in a slash, so that the SDK's relative "chat/completions" lands under
// it rather than replacing its last segment.
func normalizeBaseURL(base string) (string, error) {
	base = strings.TrimSpace(base)
	if base == "" {
		return DefaultBaseURL, nil
	}
	u, err := url.Parse(base)
	if err != nil {
		// The text is not echoed: a mistyped URL may carry credentials.
		return "", fmt.Errorf("base URL is not a valid URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("base URL %q must start with http:// or https://", u.Redacted())
	}
	if u.Host == "" {
		return "", fmt.Errorf("base URL %q names no host", u.Redacted())
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return u.String(), nil
}

package adaptertest

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest"
)

// Key is the API key the suite gives every provider it builds. It is long
// and distinctive, so finding it in an error text cannot be a coincidence.
const Key = "sk-adaptertest-secret-0123456789"

// Options are what the suite asks of a provider. A Factory maps them onto
// its adapter's own options; a zero field means the adapter's default.
type Options struct {
	// BaseURL is the server's root, "http://127.0.0.1:PORT" without a
	// trailing slash. The factory adds what its SDK wants after it (the
	// OpenAI SDK wants "/v1/").
	BaseURL string
	// Name is the provider name to use instead of the adapter's default.
	Name string
	// APIKey is the key to send; the suite always sets Key.
	APIKey string
	// HTTPClient, when set, must be the client the provider sends with.
	HTTPClient *http.Client
	// IdleTimeout is the stream idle timeout; 0 means the adapter's default.
	IdleTimeout time.Duration
	// ResponseTimeout bounds a plain call's wait for its answer; 0 means
	// the adapter's default.
	ResponseTimeout time.Duration
	// Headers are extra headers to send with every request.
	Headers map[string]string
}

// Factory builds the provider under test. It fails tb when the adapter
// refuses the options; the suite's options are always valid.
type Factory func(tb testing.TB, o Options) llm.Provider

// Adapter describes an adapter to the suite: how to build it and the few
// facts of its wire format that the shared checks depend on.
type Adapter struct {
	// New builds a provider. Required.
	New Factory
	// Name is the provider's name when Options say nothing else
	// ("openai"); it must show in every error's Provider field.
	Name string
	// Protocol is the fake server's name for the wire: "openai",
	// "openai-responses", "anthropic" or "gemini".
	Protocol string
	// FitParams, when set, turns the parameters a case sends into what
	// Model accepts (gpt-5.6 takes only the default temperature, 1); the
	// case then checks that those reach the server.
	FitParams func(llm.Params) llm.Params
	// Path returns the URL path of a call for model, plain or streamed.
	Path func(model string, stream bool) string
	// KeyHeader is the header that carries the API key, and KeyPrefix what
	// comes before the key in it ("Bearer " for OpenAI).
	KeyHeader string
	KeyPrefix string
	// DefaultMaxTokens is the max tokens the adapter sends when
	// Params.MaxTokens is nil; 0 means it sends none.
	DefaultMaxTokens int
	// ToolErrorFlag says that the wire marks failed tool results, so that
	// llm.Message.IsError reaches the server (OpenAI's has no such flag).
	ToolErrorFlag bool
	// WholeChunks says that every stream event is a whole response, as on
	// Gemini's wire: the first event of a text answer already carries
	// text, and an answer without text is one finished event. The suite
	// then expects one text delta before a stream stalls. And as the fake
	// strikes its stream faults after the first event of a faulting answer,
	// which has no text, it cannot drop such a stream midway: the suite
	// leaves that case to the adapter's own tests.
	WholeChunks bool
	// BaseURLSuffix, when set, is a suffix users copy along with the base
	// URL ("/v1/" for Anthropic); the adapter must still reach Path.
	BaseURLSuffix string
	// Env are environment variables the adapter's SDK would read on its
	// own, with junk values. The suite sets them and checks that the
	// explicit options still win: the request reaches the fake server with
	// Key, and no header carries a value that contains "junk".
	Env map[string]string
	// OutputKey is the member of the request body that carries a
	// structured-output schema ("response_format" for OpenAI).
	OutputKey string
	// Invalid are requests, besides the suite's own, that this adapter
	// must refuse as llm.KindBadRequest without sending anything.
	Invalid map[string]*llm.Request
	// Model is the model every suite request asks for; "" means Model
	// ("conformance-model"), on which the fake applies no model's rules.
	// A current model of the provider makes the fake emulate what the
	// provider documents for it (opaque state, refused parameters), so
	// the suite checks the adapter against today's protocol.
	Model string
	// Strict runs every case against a strict fake (llmtest's
	// Script.Strict), which refuses what the provider refuses of Model.
	Strict bool
	// ProgressAsReasoning says that the text Model writes with its tool
	// calls comes back as reasoning, not as answer text (Anthropic's 5.5
	// models return it in thinking blocks).
	ProgressAsReasoning bool
	// PlainStreamsAbove, when above 0, says that a call without a
	// StreamFunc whose max tokens (sent or default) pass it is streamed
	// without events: the Anthropic SDK wants a stream past 21,333, which
	// a current model's default passes.
	PlainStreamsAbove int
}

// plainRequest is request bounded so that a call without a StreamFunc
// stays a plain request (PlainStreamsAbove).
func (a Adapter) plainRequest(text string) *llm.Request {
	req := a.request(text)
	if a.PlainStreamsAbove > 0 {
		req.Params.MaxTokens = Ptr(a.PlainStreamsAbove)
	}
	return req
}

// streams reports whether a call streams: with a StreamFunc, or past
// PlainStreamsAbove.
func (a Adapter) streams(stream bool, params llm.Params) bool {
	n := a.DefaultMaxTokens
	if params.MaxTokens != nil {
		n = *params.MaxTokens
	}
	return stream || a.PlainStreamsAbove > 0 && n > a.PlainStreamsAbove
}

// model is the model the suite's requests name.
func (a Adapter) model() string {
	if a.Model != "" {
		return a.Model
	}
	return Model
}

// request is a request for a's model with one user message.
func (a Adapter) request(text string) *llm.Request {
	req := UserRequest(text)
	req.Model = a.model()
	return req
}

// Start runs a fake server answering from script (YAML, see llmtest),
// strict when a is, and returns a provider built by a.New that talks to
// it with Key, after mod changed the options. The server closes when the
// test ends.
func Start(tb testing.TB, a Adapter, script string, mod ...func(*Options)) (llm.Provider, *llmtest.Server) {
	tb.Helper()
	s := llmtest.MustParseScript(script)
	s.Strict = s.Strict || a.Strict
	srv := llmtest.StartServer(tb, s)
	o := Options{BaseURL: srv.URL(), APIKey: Key}
	for _, m := range mod {
		m(&o)
	}
	return a.New(tb, o), srv
}

// RawServer serves handler on loopback and returns a provider built by
// a.New that talks to it: for wire shapes the fake server does not produce
// (error pages, odd events, streams cut in a chosen place). The server
// closes when the test ends.
func RawServer(tb testing.TB, a Adapter, handler http.HandlerFunc, mod ...func(*Options)) llm.Provider {
	tb.Helper()
	srv := httptest.NewServer(handler) // binds 127.0.0.1
	tb.Cleanup(srv.Close)
	o := Options{BaseURL: srv.URL, APIKey: Key, HTTPClient: srv.Client()}
	for _, m := range mod {
		m(&o)
	}
	return a.New(tb, o)
}

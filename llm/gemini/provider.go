package gemini

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"google.golang.org/genai"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/capability"
)

// Provider is an llm.Provider over the Gemini API. It is safe for concurrent
// use.
type Provider struct {
	name    string
	client  *genai.Client
	idle    time.Duration
	respTO  time.Duration
	secrets *llm.Secrets
	// callPrefix and callSeq make the IDs of calls the server sent
	// without one.
	callPrefix string
	callSeq    atomic.Int64
	caps       *capability.Table
}

var _ llm.Provider = (*Provider)(nil)

// New returns a Provider configured by opts. It makes no network call.
func New(opts Options) (*Provider, error) {
	name := opts.Name
	if name == "" {
		name = DefaultName
	}
	if opts.APIKey == "" {
		// genai would quietly take GEMINI_API_KEY or GOOGLE_API_KEY from
		// the environment; deputy reads the environment in FromEnv only.
		return nil, fmt.Errorf("%s: no API key (set GEMINI_API_KEY or GOOGLE_API_KEY)", name)
	}
	base := normalizeBaseURL(opts.BaseURL)
	if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s: base URL %q must be an absolute http(s) URL", name, llm.RedactURL(opts.BaseURL))
	}
	headers := http.Header{}
	for k, v := range opts.Headers {
		headers.Set(k, v)
	}
	oneAttempt := int32(1)
	cfg := &genai.ClientConfig{
		APIKey:     opts.APIKey,
		Backend:    genai.BackendGeminiAPI,
		HTTPClient: httpClient(opts.HTTPClient),
		HTTPOptions: genai.HTTPOptions{
			// Explicit, so GOOGLE_GEMINI_BASE_URL in the environment
			// cannot redirect the calls.
			BaseURL:    base,
			APIVersion: APIVersion,
			Headers:    headers,
			// Retrying is llm.WithRetry's job, uniformly for every
			// provider.
			RetryOptions: &genai.HTTPRetryOptions{Attempts: &oneAttempt},
		},
	}
	client, err := genai.NewClient(context.Background(), cfg)
	if err != nil {
		// genai's construction errors print the whole config, API key
		// included, so its text is not passed on.
		return nil, fmt.Errorf("%s: cannot create the genai client (check the base URL and API key)", name)
	}
	idle := opts.IdleTimeout
	if idle == 0 {
		idle = DefaultIdleTimeout
	}
	return &Provider{name: name, client: client, idle: idle, respTO: llm.ResponseTimeoutOrDefault(opts.ResponseTimeout), secrets: opts.Secrets.WithCredentials(opts.APIKey, opts.Headers), callPrefix: newCallPrefix(), caps: opts.Capabilities}, nil
}

// Name returns the provider name given in Options (default "gemini").
func (p *Provider) Name() string { return p.name }

// Generate performs one generateContent call: plain when onEvent is nil,
// streamed otherwise, reporting text deltas and each complete tool call.
func (p *Provider) Generate(ctx context.Context, req *llm.Request, onEvent llm.StreamFunc) (_ *llm.Response, err error) {
	defer func() { err = p.secrets.Error(err) }()
	if req == nil {
		return nil, &llm.Error{Kind: llm.KindBadRequest, Provider: p.name, Message: "nil request"}
	}
	contents, cfg, err := p.buildRequest(req)
	if err != nil {
		return nil, &llm.Error{Kind: llm.KindBadRequest, Provider: p.name, Message: err.Error(), Err: err}
	}
	if onEvent == nil {
		return p.generate(ctx, req.Model, contents, cfg)
	}
	return p.stream(ctx, req.Model, contents, cfg, onEvent)
}

func (p *Provider) generate(ctx context.Context, model string, contents []*genai.Content, cfg *genai.GenerateContentConfig) (*llm.Response, error) {
	st := &callState{}
	cctx, stalled := llm.WithResponseTimeout(withState(ctx, st), p.respTO, p.idle)
	resp, err := p.client.Models.GenerateContent(cctx, model, contents, cfg)
	if err != nil {
		return nil, p.classify(ctx, err, st, func() *llm.Error {
			if stalled() {
				return llm.NoResponseError(p.name, p.respTO, p.idle)
			}
			return nil
		})
	}
	a := assembler{asked: model}
	a.add(p, resp, nil)
	return a.response(), nil
}

func (p *Provider) stream(ctx context.Context, model string, contents []*genai.Content, cfg *genai.GenerateContentConfig, onEvent llm.StreamFunc) (*llm.Response, error) {
	st := &callState{stream: true}
	sctx, stalledFn := llm.WithIdleTimeout(withState(ctx, st), p.idle)
	stalled := func() *llm.Error {
		if stalledFn() {
			return llm.StallError(p.name, p.idle)
		}
		return nil
	}
	a := assembler{asked: model}
	for chunk, err := range p.client.Models.GenerateContentStream(sctx, model, contents, cfg) {
		if err != nil {
			return nil, p.classify(ctx, err, st, stalled)
		}
		a.add(p, chunk, onEvent)
	}
	if !a.finished() {
		// genai ends the stream quietly when the body ends; without a
		// finish reason the answer is cut short.
		early := &llm.Error{Kind: llm.KindConnection, Message: "stream ended without a finish reason"}
		return nil, p.classify(ctx, early, st, stalled)
	}
	if list := groundingSources(a.grounding); list != "" && a.text.Len() > 0 {
		// The pages the answer cites end its text, as in Content.
		onEvent(llm.StreamEvent{Kind: llm.EventTextDelta, Text: list})
	}
	return a.response(), nil
}

package anthropic

import (
	"context"
	"fmt"
	"net/url"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/capability"
)

// Provider is an llm.Provider over Anthropic's Messages API. It is safe for
// concurrent use.
type Provider struct {
	name    string
	client  sdk.Client
	idle    time.Duration
	respTO  time.Duration
	secrets *llm.Secrets
	caps    *capability.Table
}

var _ llm.Provider = (*Provider)(nil)

// New returns a Provider configured by opts. It makes no network call. An
// empty APIKey is allowed (a proxy may add the credentials); the server then
// answers 401, surfaced as llm.KindAuth.
func New(opts Options) (*Provider, error) {
	name := opts.Name
	if name == "" {
		name = DefaultName
	}
	ro := []option.RequestOption{
		// The SDK would otherwise read ANTHROPIC_* variables and profile
		// files on its own; FromEnv is the one place that reads them.
		option.WithoutEnvironmentDefaults(),
		option.WithHTTPClient(llm.IdleClient(opts.HTTPClient)),
		// Retrying is llm.WithRetry's job, uniformly for every provider.
		option.WithMaxRetries(0),
	}
	if base := normalizeBaseURL(opts.BaseURL); base != "" {
		u, err := url.Parse(base)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%s: base URL %q must be an absolute http(s) URL", name, llm.RedactURL(opts.BaseURL))
		}
		ro = append(ro, option.WithBaseURL(base))
	}
	if opts.APIKey != "" {
		ro = append(ro, option.WithAPIKey(opts.APIKey))
	}
	for k, v := range opts.Headers {
		ro = append(ro, option.WithHeader(k, v))
	}
	idle := opts.IdleTimeout
	if idle == 0 {
		idle = DefaultIdleTimeout
	}
	return &Provider{name: name, client: sdk.NewClient(ro...), idle: idle, respTO: llm.ResponseTimeoutOrDefault(opts.ResponseTimeout), secrets: opts.Secrets.WithCredentials(opts.APIKey, opts.Headers), caps: opts.Capabilities}, nil
}

// Name returns the provider name given in Options (default "anthropic").
func (p *Provider) Name() string { return p.name }

// Generate performs one Messages API call. With a nil onEvent it sends a
// plain request, unless max_tokens is so large that the SDK insists on
// streaming, in which case it streams silently; otherwise it streams,
// reporting text deltas and each complete tool call. A turn the API
// paused (stop_reason pause_turn: its server-side tool loop ran long) is
// sent back as it is, and goes on, in up to maxPauses more calls; the
// response is the whole turn.
func (p *Provider) Generate(ctx context.Context, req *llm.Request, onEvent llm.StreamFunc) (_ *llm.Response, err error) {
	defer func() { err = p.secrets.Error(err) }()
	if req == nil {
		return nil, &llm.Error{Kind: llm.KindBadRequest, Provider: p.name, Message: "nil request"}
	}
	params, err := buildParams(req, p.caps)
	if err != nil {
		return nil, &llm.Error{Kind: llm.KindBadRequest, Provider: p.name, Message: err.Error(), Err: err}
	}
	prefix := prefixDigest(&params)
	// A structured answer is the JSON itself: nothing is added to it.
	cite := req.Output == nil
	var a answer
	var sent streamed
	if cite {
		sent.sources = &sources{}
	}
	for pauses := 0; ; pauses++ {
		msg, err := p.call(ctx, params, onEvent, &sent)
		if err != nil {
			return nil, err
		}
		a.add(msg)
		turn, ok := rawTurn(rawBlocks(msg.Content))
		if msg.StopReason != "pause_turn" || pauses == maxPauses || !ok {
			break
		}
		params.Messages = append(params.Messages, turn)
	}
	if list := sent.sources.String(); onEvent != nil && list != "" {
		onEvent(llm.StreamEvent{Kind: llm.EventTextDelta, Text: list})
	}
	return toResponse(&a, req.Model, prefix, cite), nil
}

// maxPauses bounds the calls that continue a paused turn; a turn still
// paused after them is returned as it stands (finish reason other).
const maxPauses = 8

// call performs one call of a turn: plain, unless onEvent wants a stream
// or max_tokens needs one.
func (p *Provider) call(ctx context.Context, params sdk.MessageNewParams, onEvent llm.StreamFunc, sent *streamed) (*sdk.Message, error) {
	if onEvent != nil || mustStream(params) {
		return p.stream(ctx, params, onEvent, sent)
	}
	cctx, stalled := llm.WithResponseTimeout(ctx, p.respTO, p.idle)
	msg, err := p.client.Messages.New(cctx, params)
	if err != nil {
		return nil, p.classify(ctx, err, func() *llm.Error {
			if stalled() {
				return llm.NoResponseError(p.name, p.respTO, p.idle)
			}
			return nil
		})
	}
	return msg, nil
}

// mustStream reports whether the SDK would refuse a non-streaming call
// because it expects it to run longer than ten minutes (large max_tokens).
func mustStream(params sdk.MessageNewParams) bool {
	_, err := sdk.CalculateNonStreamingTimeout(int(params.MaxTokens), params.Model, nil)
	return err != nil
}

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
// reporting text deltas and each complete tool call.
func (p *Provider) Generate(ctx context.Context, req *llm.Request, onEvent llm.StreamFunc) (_ *llm.Response, err error) {
	defer func() { err = p.secrets.Error(err) }()
	if req == nil {
		return nil, &llm.Error{Kind: llm.KindBadRequest, Provider: p.name, Message: "nil request"}
	}
	params, err := buildParams(req, p.caps)
	if err != nil {
		return nil, &llm.Error{Kind: llm.KindBadRequest, Provider: p.name, Message: err.Error(), Err: err}
	}
	if onEvent == nil && !mustStream(params) {
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
		return toResponse(msg, req.Model, prefixDigest(&params)), nil
	}
	return p.stream(ctx, params, onEvent)
}

// mustStream reports whether the SDK would refuse a non-streaming call
// because it expects it to run longer than ten minutes (large max_tokens).
func mustStream(params sdk.MessageNewParams) bool {
	_, err := sdk.CalculateNonStreamingTimeout(int(params.MaxTokens), params.Model, nil)
	return err != nil
}

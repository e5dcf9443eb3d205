package openai

import (
	"context"
	"fmt"
	"sort"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/deputyhq/deputy/llm"
)

// Provider is an llm.Provider over the chat completions API. It is safe for
// concurrent use.
type Provider struct {
	name           string
	secrets        *llm.Secrets
	idleTimeout    time.Duration
	respTimeout    time.Duration
	maxTokensField string
	chat           sdk.ChatCompletionService
}

var _ llm.Provider = (*Provider)(nil)

// New returns a Provider for opts. It does no network I/O; a bad base URL or
// option is reported here.
func New(opts Options) (*Provider, error) {
	name := opts.Name
	if name == "" {
		name = DefaultName
	}
	base, err := normalizeBaseURL(opts.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	field := opts.MaxTokensField
	switch field {
	case "":
		// OpenAI's reasoning models refuse max_tokens; Ollama, vLLM,
		// llama.cpp and older servers know only max_tokens.
		field = MaxTokensField
		if name == DefaultName {
			field = MaxCompletionTokensField
		}
	case MaxTokensField, MaxCompletionTokensField:
	default:
		return nil, fmt.Errorf("%s: max tokens field %q must be %q or %q", name, field, MaxTokensField, MaxCompletionTokensField)
	}
	idle := opts.IdleTimeout
	if idle == 0 {
		idle = DefaultIdleTimeout
	}

	// NewChatCompletionService, unlike sdk.NewClient, reads no environment
	// variables: every setting below is explicit, so OPENAI_BASE_URL or
	// OPENAI_ORG_ID in the environment cannot redirect or alter requests.
	reqOpts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithHTTPClient(llm.IdleClient(opts.HTTPClient)),
		option.WithMaxRetries(0),
	}
	if opts.APIKey != "" {
		reqOpts = append(reqOpts, option.WithAPIKey(opts.APIKey))
	}
	keys := make([]string, 0, len(opts.Headers))
	for k := range opts.Headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		reqOpts = append(reqOpts, option.WithHeader(k, opts.Headers[k]))
	}
	return &Provider{
		name:           name,
		secrets:        opts.Secrets.WithCredentials(opts.APIKey, opts.Headers),
		idleTimeout:    idle,
		respTimeout:    llm.ResponseTimeoutOrDefault(opts.ResponseTimeout),
		maxTokensField: field,
		chat:           sdk.NewChatCompletionService(reqOpts...),
	}, nil
}

// Name returns the provider name given in Options ("openai" by default).
func (p *Provider) Name() string { return p.name }

// Generate performs one chat completion. With onEvent nil it sends a plain
// request; otherwise it streams, reporting text deltas as they arrive and
// each tool call once its arguments are complete. Every error is an
// *llm.Error.
func (p *Provider) Generate(ctx context.Context, req *llm.Request, onEvent llm.StreamFunc) (_ *llm.Response, err error) {
	defer func() { err = p.secrets.Error(err) }()
	if req == nil {
		return nil, &llm.Error{Kind: llm.KindBadRequest, Provider: p.name, Message: "nil request"}
	}
	params, err := p.buildParams(req)
	if err != nil {
		return nil, &llm.Error{Kind: llm.KindBadRequest, Provider: p.name, Message: err.Error(), Err: err}
	}
	if onEvent == nil {
		return p.generate(ctx, params)
	}
	return p.stream(ctx, params, onEvent)
}

// generate is the non-streaming call.
func (p *Provider) generate(ctx context.Context, params sdk.ChatCompletionNewParams) (*llm.Response, error) {
	ex := p.newExchange()
	callCtx, stalled := llm.WithResponseTimeout(ctx, p.respTimeout, p.idleTimeout)
	ex.stalled = func() *llm.Error {
		if stalled() {
			return llm.NoResponseError(p.name, p.respTimeout, p.idleTimeout)
		}
		return nil
	}
	completion, err := p.chat.New(callCtx, params, ex.option())
	if err != nil {
		return nil, ex.classify(ctx, err)
	}
	resp, err := fromCompletion(completion)
	if err != nil {
		return nil, malformed(p.name, err)
	}
	return resp, nil
}

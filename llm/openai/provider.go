package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/capability"
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
	resp           responses.ResponseService
	// wire is Options.WireAPI; openAIHost says the base URL is OpenAI's.
	wire       string
	openAIHost bool
	// noSummary is set once OpenAI refused to summarise reasoning for
	// this key (an organization that is not verified): later requests
	// ask for none.
	noSummary atomic.Bool
	caps      *capability.Table
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
	switch opts.WireAPI {
	case "", WireChat, WireResponses:
	default:
		return nil, fmt.Errorf("%s: wire API %q must be %q or %q", name, opts.WireAPI, WireChat, WireResponses)
	}
	idle := opts.IdleTimeout
	if idle == 0 {
		idle = DefaultIdleTimeout
	}

	// NewChatCompletionService and NewResponseService, unlike
	// sdk.NewClient, read no environment variables: every setting below is
	// explicit, so OPENAI_BASE_URL or OPENAI_ORG_ID in the environment
	// cannot redirect or alter requests.
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
		caps:           opts.Capabilities,
		chat:           sdk.NewChatCompletionService(reqOpts...),
		resp:           responses.NewResponseService(reqOpts...),
		wire:           opts.WireAPI,
		openAIHost:     isOpenAIHost(base),
	}, nil
}

// Name returns the provider name given in Options ("openai" by default).
func (p *Provider) Name() string { return p.name }

// Generate performs one model call, on the Responses API or as a chat
// completion (see Options.WireAPI). With onEvent nil it sends a plain
// request; otherwise it streams, reporting text and reasoning deltas as
// they arrive and each tool call once its arguments are complete. Every
// error is an *llm.Error.
func (p *Provider) Generate(ctx context.Context, req *llm.Request, onEvent llm.StreamFunc) (_ *llm.Response, err error) {
	defer func() { err = p.secrets.Error(err) }()
	if req == nil {
		return nil, &llm.Error{Kind: llm.KindBadRequest, Provider: p.name, Message: "nil request"}
	}
	if p.usesResponses(req.Model) {
		return p.generateResponses(ctx, req, onEvent)
	}
	resp, err := p.generateChat(ctx, req, onEvent)
	return resp, chatHint(err)
}

// generateChat is one call on chat completions.
func (p *Provider) generateChat(ctx context.Context, req *llm.Request, onEvent llm.StreamFunc) (*llm.Response, error) {
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
	ex, callCtx := p.plainExchange(ctx)
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

// chatHint adds to OpenAI's refusal of a chat completion that only its
// Responses API serves (function tools on gpt-5.4 and later with
// reasoning) how to send the provider's requests there.
func chatHint(err error) error {
	var e *llm.Error
	if errors.As(err, &e) && e.Status == http.StatusBadRequest && strings.Contains(e.Message, "/v1/responses") {
		e.Message += " (deputy sends this provider's requests to chat completions; set wire_api: responses on the provider in config.yaml to use the Responses API)"
	}
	return err
}

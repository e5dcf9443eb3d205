package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/deputyhq/deputy/llm"
)

// maxErrorBody bounds how much of an error response is read: enough for any
// JSON error object, little enough that a misbehaving server cannot make us
// buffer a page of HTML.
const maxErrorBody = 64 << 10

// maxMessage bounds the server text kept in an error message.
const maxMessage = 500

// exchange watches the HTTP side of one call through an SDK middleware, so
// that an error can be classified by what actually happened on the wire:
// an error status (read here, with its Retry-After and message, whatever the
// body looks like), a transport failure while reading the body, or a 2xx
// body that did not decode.
type exchange struct {
	provider string
	secrets  *llm.Secrets
	// stalled returns the error of this call's idle watch when it fired;
	// nil when the call has none.
	stalled func() *llm.Error

	mu      sync.Mutex
	gotOK   bool  // a 2xx response arrived
	readErr error // the first failure reading a 2xx body (not io.EOF)
}

func (p *Provider) newExchange() *exchange {
	return &exchange{provider: p.name, secrets: p.secrets}
}

// plainExchange is the exchange of a non-streaming call, and the context
// that bounds its wait for the answer (Options.ResponseTimeout).
func (p *Provider) plainExchange(ctx context.Context) (*exchange, context.Context) {
	ex := p.newExchange()
	callCtx, stalled := llm.WithResponseTimeout(ctx, p.respTimeout, p.idleTimeout)
	ex.stalled = func() *llm.Error {
		if stalled() {
			return llm.NoResponseError(p.name, p.respTimeout, p.idleTimeout)
		}
		return nil
	}
	return ex, callCtx
}

// streamExchange is the exchange of a streaming call, and the context that
// ends it when the stream goes silent (Options.IdleTimeout).
func (p *Provider) streamExchange(ctx context.Context) (*exchange, context.Context) {
	ex := p.newExchange()
	if p.idleTimeout <= 0 {
		return ex, ctx
	}
	callCtx, stalled := llm.WithIdleTimeout(ctx, p.idleTimeout)
	ex.stalled = func() *llm.Error {
		if stalled() {
			return llm.StallError(p.name, p.idleTimeout)
		}
		return nil
	}
	return ex, callCtx
}

// option returns the per-call SDK option installing the middleware.
func (ex *exchange) option() option.RequestOption {
	return option.WithMiddleware(ex.middleware)
}

func (ex *exchange) middleware(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if err != nil || res == nil {
		return res, err
	}
	if res.StatusCode >= 400 {
		// Turning the status into an *llm.Error here, instead of relying on
		// the SDK's error, keeps the status and Retry-After even when the
		// body is not the JSON the SDK expects (a proxy's HTML page).
		return nil, ex.statusError(res)
	}
	if res.StatusCode >= 200 && res.StatusCode < 300 {
		ex.mu.Lock()
		ex.gotOK = true
		ex.mu.Unlock()
		res.Body = &watchedBody{ReadCloser: res.Body, ex: ex}
	}
	return res, nil
}

// statusError reads an error response and closes its body.
func (ex *exchange) statusError(res *http.Response) *llm.Error {
	body, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	_ = res.Body.Close()
	now := time.Now()
	retryAfter := llm.ParseRetryAfter(res.Header.Get("retry-after-ms"), true, now)
	if retryAfter == 0 {
		retryAfter = llm.ParseRetryAfter(res.Header.Get("retry-after"), false, now)
	}
	msg := errorMessage(body)
	if msg == "" {
		msg = http.StatusText(res.StatusCode)
	}
	kind := llm.KindForStatus(res.StatusCode)
	if res.StatusCode == http.StatusTooManyRequests && errorCode(body) == "insufficient_quota" {
		// OpenAI's 429 for an account out of credit: no wait cures it, so
		// it is neither retried nor taken for load (which would narrow
		// the endpoint's gate for every tree of the process).
		kind = llm.KindBadRequest
	}
	e := &llm.Error{
		Kind:       kind,
		Provider:   ex.provider,
		Status:     res.StatusCode,
		RetryAfter: retryAfter,
		Message:    ex.scrub(msg),
	}
	if res.StatusCode == http.StatusBadRequest && errorParam(body) == "reasoning.summary" {
		e.Err = errSummaryRefused
	}
	return e
}

// errorParam is the parameter an OpenAI error body names, "" when none.
func errorParam(body []byte) string {
	var v struct {
		Error struct {
			Param string `json:"param"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	return v.Error.Param
}

// watchedBody remembers the first transport failure while a 2xx body is read,
// which tells a dropped connection from a body that is merely malformed.
type watchedBody struct {
	io.ReadCloser
	ex *exchange
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.ex.mu.Lock()
		if b.ex.readErr == nil {
			b.ex.readErr = err
		}
		b.ex.mu.Unlock()
	}
	return n, err
}

// classify turns any failure of the call into an *llm.Error. The order
// matters: the caller's context first (a cancelled call is cancelled, whatever
// the transport said), then the idle watch, then what the wire showed.
func (ex *exchange) classify(ctx context.Context, err error) *llm.Error {
	if ctx.Err() != nil {
		return asLLMError(llm.Classify(ctx, ex.provider, err), ex.provider)
	}
	if ex.stalled != nil {
		if e := ex.stalled(); e != nil {
			e.Err = err
			return e
		}
	}
	var le *llm.Error
	if errors.As(err, &le) {
		if le.Provider == "" {
			le.Provider = ex.provider
		}
		return le
	}
	ex.mu.Lock()
	gotOK, readErr := ex.gotOK, ex.readErr
	ex.mu.Unlock()
	if readErr != nil {
		return &llm.Error{Kind: llm.KindConnection, Provider: ex.provider, Message: "connection failed while reading the response: " + readErr.Error(), Err: readErr}
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		// The server reported a failure inside an open stream.
		return &llm.Error{Kind: llm.KindServer, Provider: ex.provider, Message: ex.scrub(streamErrorMessage(se.Event.Data)), Err: err}
	}
	if gotOK {
		return malformed(ex.provider, err)
	}
	return asLLMError(llm.Classify(ctx, ex.provider, err), ex.provider)
}

// malformed is the error of a 2xx response that could not be understood.
func malformed(provider string, err error) *llm.Error {
	return &llm.Error{Kind: llm.KindBadRequest, Provider: provider, Message: "malformed response: " + err.Error(), Err: err}
}

func asLLMError(err error, provider string) *llm.Error {
	var le *llm.Error
	if errors.As(err, &le) {
		return le
	}
	return &llm.Error{Kind: llm.KindUnknown, Provider: provider, Err: err}
}

// scrub keeps secrets out of a server's message early (OpenAI echoes a
// masked key on 401, and a careless server might echo it whole); Generate
// redacts every error again on its way out.
func (ex *exchange) scrub(msg string) string {
	return ex.secrets.Redact(msg)
}

// errorMessage extracts the server's explanation from an error body:
// {"error": {"message": ...}} (OpenAI and most compatible servers),
// {"error": "..."} (Ollama's native style), {"message": ...}, or else the
// body's text when it is short plain text.
// errorCode is the code (else the type) of an OpenAI error body, "" when
// it has none.
func errorCode(body []byte) string {
	var v struct {
		Error struct {
			Code any    `json:"code"`
			Type string `json:"type"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	if c, ok := v.Error.Code.(string); ok && c != "" {
		return c
	}
	return v.Error.Type
}

func errorMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if err := json.Unmarshal(body, &v); err == nil {
		var obj struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &obj) == nil && obj.Message != "":
			return clip(obj.Message)
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return clip(s)
		case v.Message != "":
			return clip(v.Message)
		case obj.Type != "":
			return clip(obj.Type)
		}
		return ""
	}
	text := strings.TrimSpace(string(body))
	if text == "" || strings.HasPrefix(text, "<") {
		// Empty, or an HTML page: the status text says more.
		return ""
	}
	return clip(text)
}

// streamErrorMessage reads the error object of an in-stream error event.
func streamErrorMessage(data []byte) string {
	if msg := errorMessage(data); msg != "" {
		return msg
	}
	return "error event in stream"
}

// clip shortens s to maxMessage bytes on a rune boundary and keeps it on one
// line.
func clip(s string) string {
	return llm.ClipMessage(strings.Join(strings.Fields(s), " "), maxMessage)
}

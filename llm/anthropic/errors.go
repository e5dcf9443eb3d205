package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/deputyhq/deputy/llm"
)

// maxMessage bounds how much of a server's error text goes into an error.
const maxMessage = 500

// classify turns any error of a call into an *llm.Error. The order matters:
// the caller's context wins (cancelled or past its deadline), then a stall
// detected by the idle watch, then what the server said, then transport
// failures.
// stalled, when not nil, returns the error of an idle watch that fired.
func (p *Provider) classify(ctx context.Context, err error, stalled func() *llm.Error) error {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		// Replace the SDK's error before anything can wrap it: it holds
		// the request, auth header included.
		err = p.apiError(apiErr)
	}
	if ctx.Err() != nil {
		return llm.Classify(ctx, p.name, err)
	}
	if stalled != nil {
		if e := stalled(); e != nil {
			return e
		}
	}
	if apiErr != nil {
		return err
	}
	if isMalformed(err) {
		return malformed(p.name, err)
	}
	return llm.Classify(ctx, p.name, err)
}

// apiError classifies an error answer. The SDK's error value is not kept in
// the chain: it holds the request, auth header included, and nothing must
// let a caller print that by accident.
func (p *Provider) apiError(e *sdk.Error) *llm.Error {
	typ := string(e.Type())
	var kind llm.Kind
	status := e.StatusCode
	if status >= 400 {
		kind = llm.KindForStatus(status)
	} else {
		// An error event inside a stream arrives on a 200 response; only
		// its type says what happened.
		kind = kindForType(typ)
		status = 0
	}
	out := &llm.Error{Kind: kind, Provider: p.name, Status: status, Message: serverMessage(e.RawJSON(), status)}
	if e.Response != nil {
		out.RetryAfter = llm.RetryAfterHeader(e.Response.Header, time.Now())
	}
	return out
}

// kindForType maps an Anthropic error type to a Kind.
func kindForType(typ string) llm.Kind {
	switch typ {
	case "rate_limit_error":
		return llm.KindRateLimited
	case "overloaded_error", "api_error", "timeout_error":
		return llm.KindServer
	case "authentication_error", "permission_error":
		return llm.KindAuth
	case "invalid_request_error", "not_found_error", "request_too_large", "billing_error":
		return llm.KindBadRequest
	}
	return llm.KindServer
}

// serverMessage extracts "type: message" from an error body, falling back to
// the start of the body, then to the status text.
func serverMessage(body string, status int) string {
	var env struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	msg := ""
	if json.Unmarshal([]byte(body), &env) == nil && (env.Error.Type != "" || env.Error.Message != "") {
		msg = env.Error.Message
		if env.Error.Type != "" && msg != "" {
			msg = env.Error.Type + ": " + msg
		} else if msg == "" {
			msg = env.Error.Type
		}
	} else {
		msg = strings.TrimSpace(body)
	}
	if msg == "" && status != 0 {
		msg = http.StatusText(status)
	}
	return llm.ClipMessage(msg, maxMessage)
}

// isMalformed reports whether err says the response body was not the JSON
// it should have been.
func isMalformed(err error) bool {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "error parsing response json") ||
		strings.Contains(msg, "expected destination type")
}

// malformed is the error of a response that could not be understood. It is
// KindBadRequest, so it is not retried: the same request would most likely
// get the same answer.
func malformed(provider string, err error) *llm.Error {
	return &llm.Error{Kind: llm.KindBadRequest, Provider: provider, Message: llm.ClipMessage("malformed response: "+err.Error(), maxMessage), Err: err}
}

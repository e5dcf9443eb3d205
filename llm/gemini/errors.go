package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/deputyhq/deputy/llm"
)

// maxMessage bounds how much of a server's text goes into an error.
const maxMessage = 500

// classify turns any error of a call into an *llm.Error. The order matters:
// the caller's context wins (cancelled or past its deadline), then a stall
// detected by the idle watch, then a broken stream body, then what the
// server said, then transport failures.
// stalled, when not nil, returns the error of an idle watch that fired.
func (p *Provider) classify(ctx context.Context, err error, st *callState, stalled func() *llm.Error) error {
	if ctx.Err() != nil {
		return llm.Classify(ctx, p.name, err)
	}
	if stalled != nil {
		if e := stalled(); e != nil {
			return e
		}
	}
	if bodyErr := st.streamErr(); bodyErr != nil {
		// Whatever genai made of the truncated input, the cause is the
		// connection.
		kind := llm.KindOf(bodyErr)
		if kind == llm.KindUnknown {
			kind = llm.KindConnection
		}
		return &llm.Error{Kind: kind, Provider: p.name, Message: "stream broken: " + bodyErr.Error(), Err: bodyErr}
	}
	if apiErr, ok := asAPIError(err); ok {
		return p.apiError(apiErr, st.responseHeader())
	}
	if isMalformed(err) {
		return &llm.Error{Kind: llm.KindBadRequest, Provider: p.name, Message: llm.ClipMessage("malformed response: "+err.Error(), maxMessage), Err: err}
	}
	return llm.Classify(ctx, p.name, err)
}

func asAPIError(err error) (genai.APIError, bool) {
	var v genai.APIError
	if errors.As(err, &v) {
		return v, true
	}
	var ptr *genai.APIError
	if errors.As(err, &ptr) && ptr != nil {
		return *ptr, true
	}
	return genai.APIError{}, false
}

// apiError classifies an error answer by its HTTP code, or by its status
// name when the code is missing (an error inside a stream).
func (p *Provider) apiError(e genai.APIError, h http.Header) *llm.Error {
	status := e.Code
	kind := llm.KindForStatus(status)
	if status < 400 {
		status = 0
		kind = kindForStatusName(e.Status)
	}
	out := &llm.Error{Kind: kind, Provider: p.name, Status: status, Message: serverMessage(e), Err: e}
	if status != 0 && h != nil {
		out.RetryAfter = llm.RetryAfterHeader(h, time.Now())
	}
	if out.RetryAfter == 0 {
		out.RetryAfter = retryInfo(e.Details)
	}
	return out
}

// kindForStatusName maps a google.rpc status name to a Kind.
func kindForStatusName(name string) llm.Kind {
	switch name {
	case "RESOURCE_EXHAUSTED":
		return llm.KindRateLimited
	case "UNAUTHENTICATED", "PERMISSION_DENIED":
		return llm.KindAuth
	case "INVALID_ARGUMENT", "NOT_FOUND", "FAILED_PRECONDITION", "OUT_OF_RANGE", "ALREADY_EXISTS", "UNIMPLEMENTED":
		return llm.KindBadRequest
	case "CANCELLED":
		return llm.KindCanceled
	}
	// INTERNAL, UNAVAILABLE, DEADLINE_EXCEEDED, UNKNOWN, ...: the server's
	// trouble.
	return llm.KindServer
}

// serverMessage is "STATUS: message" from the error body.
func serverMessage(e genai.APIError) string {
	msg := strings.TrimSpace(e.Message)
	// Status is a name like RESOURCE_EXHAUSTED, or, for a body that was not
	// JSON, the HTTP status line, which says nothing the code does not.
	isName := e.Status != "" && e.Status[0] >= 'A' && e.Status[0] <= 'Z'
	switch {
	case isName && msg != "":
		msg = e.Status + ": " + msg
	case isName:
		msg = e.Status
	case msg == "" && e.Code != 0:
		msg = http.StatusText(e.Code)
	}
	return llm.ClipMessage(msg, maxMessage)
}

// retryInfo reads the retryDelay of a google.rpc.RetryInfo error detail
// ("37s"), which the Gemini API sends with RESOURCE_EXHAUSTED.
func retryInfo(details []map[string]any) time.Duration {
	for _, d := range details {
		t, _ := d["@type"].(string)
		if !strings.HasSuffix(t, "google.rpc.RetryInfo") {
			continue
		}
		s, _ := d["retryDelay"].(string)
		if v, err := time.ParseDuration(s); err == nil && v > 0 {
			return v
		}
	}
	return 0
}

// isMalformed reports whether err says the response was not the JSON it
// should have been.
func isMalformed(err error) bool {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "error unmarshalling") || strings.Contains(msg, "invalid stream chunk")
}

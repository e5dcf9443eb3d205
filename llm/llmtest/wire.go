package llmtest

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/deputyhq/deputy/llm"
)

// wire is one provider's HTTP dialect: how its requests read and how its
// answers, stream events and errors are written. The Server does the rest
// (logging, latency, faults) the same way for every dialect.
type wire interface {
	// protocol names the dialect in the request log: "openai", ...
	protocol() string
	// idPrefix starts generated tool call IDs ("call_", "toolu_").
	idPrefix() string
	// parse reads a request. An error becomes a 400 answer.
	parse(r *http.Request, body []byte) (*call, error)
	// response is the body of a non-streamed answer.
	response(c *call, a *Answer, id string) []byte
	// events are the stream events of an answer, in order.
	events(c *call, a *Answer, id string) []sseEvent
	// brokenEvent is a stream event whose data is not valid JSON.
	brokenEvent() sseEvent
	// writeError writes an error answer in the dialect's shape.
	writeError(w http.ResponseWriter, e *httpError)
}

// call is a parsed request.
type call struct {
	req    *llm.Request
	stream bool
	// includeUsage is OpenAI's stream_options.include_usage.
	includeUsage bool
	// thoughts is Gemini's thinkingConfig.includeThoughts: the answer
	// carries its reasoning as thought parts; invocations its
	// toolConfig.includeServerSideToolInvocations: the answer carries its
	// searches as toolCall and toolResponse parts.
	thoughts, invocations bool
	// cacheHit is what OpenAI's automatic prompt cache had of the prompt,
	// in tokens (openai_cache.go).
	cacheHit int64
	// thinks says the model reasons at the request's effort, and summary
	// that the request asked for a summary of its reasoning (OpenAI's
	// Responses API).
	thinks, summary bool
	// sources is the Responses API's include
	// web_search_call.action.sources.
	sources bool
	// strict, set by parse, is the error a strict server (Script.Strict)
	// answers instead: what the provider refuses that a lenient fake
	// lets pass, such as a reasoning model's history without its
	// reasoning.
	strict *httpError
	// an is what the Anthropic wire keeps of the request for its answer.
	an *anCall
	// resumed, set by parse, is the rest of an answer the provider
	// paused, which this request continues: the server answers it
	// instead of asking the script.
	resumed *Answer
}

// sseEvent is one server-sent event. An empty name writes no "event:" line,
// as OpenAI and Gemini streams have none.
type sseEvent struct {
	name string
	data []byte
}

// errClass is what an error answer means, independent of dialect.
type errClass int

const (
	errBadRequest errClass = iota
	errAuth
	errRateLimit
	errServer
	errOverloaded
	errNotFound
)

// httpError is an error answer before a dialect shapes it.
type httpError struct {
	class      errClass
	status     int
	message    string
	retryAfter time.Duration
	// code and param, when set, are OpenAI's error code and the parameter
	// it names ("unsupported_value", "temperature").
	code, param string
}

func newHTTPError(class errClass, format string, args ...any) *httpError {
	status := map[errClass]int{
		errBadRequest: http.StatusBadRequest,
		errAuth:       http.StatusUnauthorized,
		errRateLimit:  http.StatusTooManyRequests,
		errServer:     http.StatusInternalServerError,
		errOverloaded: 529, // Anthropic's "overloaded"; Gemini and OpenAI use 503
		errNotFound:   http.StatusNotFound,
	}[class]
	return &httpError{class: class, status: status, message: fmt.Sprintf(format, args...)}
}

// faultHTTPError is the error answer of a scripted fault, or nil for the
// faults that are not plain error answers (malformed, stall, drop).
func faultHTTPError(a *Answer) *httpError {
	msg := fmt.Sprintf("llmtest: %s: scripted %s", a.Rule, a.Fault)
	var e *httpError
	switch a.Fault {
	case FaultRateLimit:
		e = newHTTPError(errRateLimit, "%s", msg)
		e.retryAfter = a.RetryAfter
	case FaultServerError:
		e = newHTTPError(errServer, "%s", msg)
	case FaultOverloaded:
		e = newHTTPError(errOverloaded, "%s", msg)
	case FaultAuth:
		e = newHTTPError(errAuth, "%s", msg)
	case FaultBadRequest:
		e = newHTTPError(errBadRequest, "%s", msg)
	}
	return e
}

// answerHTTPError turns an error of Script.answer into an error answer:
// no rule matched is a 400, a broken template a 500.
func answerHTTPError(err error) *httpError {
	class := errServer
	if llm.KindOf(err) == llm.KindBadRequest {
		class = errBadRequest
	}
	msg := err.Error()
	if e, ok := err.(*llm.Error); ok && e.Message != "" {
		msg = e.Message
	}
	return newHTTPError(class, "%s", msg)
}

// setRetryAfter sets the Retry-After header in whole seconds, rounded up,
// as servers send it; ms adds OpenAI's precise retry-after-ms.
func setRetryAfter(h http.Header, d time.Duration, ms bool) {
	if d <= 0 {
		return
	}
	secs := int64((d + time.Second - 1) / time.Second)
	h.Set("Retry-After", strconv.FormatInt(secs, 10))
	if ms {
		h.Set("Retry-After-Ms", strconv.FormatInt(d.Milliseconds(), 10))
	}
}

// finishOr returns a.Finish, or stop when it is empty (an Answer built by
// hand).
func finishOr(a *Answer) llm.FinishReason {
	if a.Finish == "" {
		if len(a.ToolCalls) > 0 {
			return llm.FinishToolCalls
		}
		return llm.FinishStop
	}
	return a.Finish
}

// toolNames remembers the names of tool calls by ID while a conversation
// is read, so tool results (which carry only the ID on some wires) can be
// given their tool's name.
type toolNames map[string]string

func (t toolNames) add(calls []llm.ToolCall) {
	for _, c := range calls {
		if c.ID != "" {
			t[c.ID] = c.Name
		}
	}
}

// Error lets a parser return an *httpError to choose its status.
func (e *httpError) Error() string { return e.message }

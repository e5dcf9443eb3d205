package llm

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"time"
)

// Kind classifies a provider error so callers can decide what to do.
type Kind int

const (
	KindUnknown Kind = iota
	// KindAuth: the key is missing, wrong or not allowed (401, 403).
	KindAuth
	// KindRateLimited: the server said slow down (429); RetryAfter may be set.
	KindRateLimited
	// KindServer: the server failed (5xx, overloaded).
	KindServer
	// KindTimeout: a deadline passed, or a stream went silent for longer
	// than its idle timeout.
	KindTimeout
	// KindBadRequest: the request was refused as invalid (400, 404, 422) or
	// the response could not be understood.
	KindBadRequest
	// KindCanceled: the caller's context was cancelled.
	KindCanceled
	// KindConnection: the connection failed or dropped before a complete
	// response arrived.
	KindConnection
)

var kindNames = map[Kind]string{
	KindUnknown:     "unknown",
	KindAuth:        "authentication",
	KindRateLimited: "rate limited",
	KindServer:      "server error",
	KindTimeout:     "timeout",
	KindBadRequest:  "bad request",
	KindCanceled:    "cancelled",
	KindConnection:  "connection",
}

func (k Kind) String() string { return kindNames[k] }

// Retryable reports whether a call that failed this way may succeed when
// repeated unchanged.
func (k Kind) Retryable() bool {
	switch k {
	case KindRateLimited, KindServer, KindConnection:
		return true
	}
	return false
}

// Error is a classified provider error. Its message never contains an API
// key or an auth header: adapters build it from the status and the
// server's error text only.
type Error struct {
	Kind     Kind
	Provider string
	// Status is the HTTP status code, 0 when there was no response.
	Status int
	// RetryAfter is the delay the server asked for, 0 when it named none.
	RetryAfter time.Duration
	Message    string
	Err        error
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Provider != "" {
		b.WriteString(e.Provider)
		b.WriteString(": ")
	}
	b.WriteString(e.Kind.String())
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	} else if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Is lets errors.Is(err, llm.ErrRateLimited) and friends match by kind.
func (e *Error) Is(target error) bool {
	k, ok := target.(kindSentinel)
	return ok && Kind(k) == e.Kind
}

type kindSentinel Kind

func (k kindSentinel) Error() string { return Kind(k).String() }

// Sentinels for errors.Is. They match any *Error of that kind.
var (
	ErrAuth        error = kindSentinel(KindAuth)
	ErrRateLimited error = kindSentinel(KindRateLimited)
	ErrServer      error = kindSentinel(KindServer)
	ErrTimeout     error = kindSentinel(KindTimeout)
	ErrBadRequest  error = kindSentinel(KindBadRequest)
	ErrCanceled    error = kindSentinel(KindCanceled)
	ErrConnection  error = kindSentinel(KindConnection)
)

// KindOf returns the kind of err: the Kind of an *Error in its chain, or a
// kind derived from well-known errors (context, net), or KindUnknown.
func KindOf(err error) Kind {
	if err == nil {
		return KindUnknown
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	switch {
	case errors.Is(err, context.Canceled):
		return KindCanceled
	case errors.Is(err, context.DeadlineExceeded):
		return KindTimeout
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return KindTimeout
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return KindConnection
	}
	msg := err.Error()
	for _, s := range []string{"connection reset", "connection refused", "broken pipe", "unexpected EOF", "EOF", "server closed"} {
		if strings.Contains(msg, s) {
			return KindConnection
		}
	}
	return KindUnknown
}

// KindForStatus maps an HTTP status code to a Kind.
func KindForStatus(status int) Kind {
	switch {
	case status == 401 || status == 403:
		return KindAuth
	case status == 429:
		return KindRateLimited
	case status == 408:
		return KindTimeout
	case status >= 500:
		return KindServer
	case status >= 400:
		return KindBadRequest
	}
	return KindUnknown
}

// maxRetryAfter caps the delay a server may ask for; a retry policy's own
// limits usually cut it much shorter.
const maxRetryAfter = 24 * time.Hour

// ParseRetryAfter reads a Retry-After header value: delay seconds or an HTTP
// date. It also accepts the millisecond form some servers send in
// retry-after-ms, when ms is true. It returns 0 when the value is absent or
// unreadable.
func ParseRetryAfter(value string, ms bool, now time.Time) time.Duration {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0
	}
	if f, err := strconv.ParseFloat(value, 64); err == nil {
		if f < 0 || math.IsNaN(f) {
			return 0
		}
		unit := float64(time.Second)
		if ms {
			unit = float64(time.Millisecond)
		}
		if f*unit >= float64(maxRetryAfter) {
			// Also keeps a huge value from overflowing Duration.
			return maxRetryAfter
		}
		return time.Duration(f * unit)
	}
	if t, err := time.Parse(time.RFC1123, value); err == nil {
		if d := t.Sub(now); d > 0 {
			return min(d, maxRetryAfter)
		}
	}
	return 0
}

// Classify wraps err as an *Error of provider, keeping an existing
// classification. Context errors of ctx win: a call cut short by the caller
// is KindCanceled or KindTimeout, whatever the transport said.
func Classify(ctx context.Context, provider string, err error) error {
	if err == nil {
		return nil
	}
	if ctx != nil && ctx.Err() != nil {
		kind := KindCanceled
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			kind = KindTimeout
		}
		var e *Error
		if errors.As(err, &e) && e.Kind == KindTimeout {
			kind = KindTimeout
		}
		return &Error{Kind: kind, Provider: provider, Err: err, Message: ctxMessage(ctx)}
	}
	var e *Error
	if errors.As(err, &e) {
		if e.Provider == "" {
			e.Provider = provider
		}
		return e
	}
	return &Error{Kind: KindOf(err), Provider: provider, Err: err}
}

func ctxMessage(ctx context.Context) string {
	if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
		return cause.Error()
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return "deadline exceeded"
	}
	return "request cancelled"
}

package llm

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// RetryPolicy bounds how a failed model call is repeated. Only retryable
// kinds (rate limited, server error, dropped connection) are retried, and
// only while nothing of the response has been streamed to the caller yet, so
// a caller never sees a text delta twice.
type RetryPolicy struct {
	// MaxAttempts counts every attempt, the first included. 0 means 4;
	// 1 disables retrying. A call refused for load with a Retry-After
	// (429, 503, 529) does not count: it is waited out within MaxElapsed.
	MaxAttempts int `yaml:"max_attempts" json:"max_attempts"`
	// BaseDelay is the first backoff; each further one doubles, with jitter.
	// 0 means 500ms.
	BaseDelay time.Duration `yaml:"base_delay" json:"base_delay"`
	// MaxDelay caps one backoff (not a server's Retry-After). 0 means 30s.
	MaxDelay time.Duration `yaml:"max_delay" json:"max_delay"`
	// MaxElapsed is the total time after which no new attempt starts,
	// including a wait the server asked for. 0 means 2m.
	MaxElapsed time.Duration `yaml:"max_elapsed" json:"max_elapsed"`
	// OnRetry, when set, is told about every retry before its wait.
	OnRetry func(attempt int, err error, wait time.Duration) `yaml:"-" json:"-"`
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = 4
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = 500 * time.Millisecond
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = 30 * time.Second
	}
	if p.MaxElapsed <= 0 {
		p.MaxElapsed = 2 * time.Minute
	}
	return p
}

// Backoff returns the wait before attempt n+1 after n failed attempts
// (n >= 1): exponential from BaseDelay, capped at MaxDelay, with "equal
// jitter" (a random point in the upper half) so that many children retrying
// at once spread out. A server's Retry-After, when longer, wins.
func (p RetryPolicy) Backoff(n int, retryAfter time.Duration) time.Duration {
	p = p.withDefaults()
	d := p.BaseDelay
	for i := 1; i < n && d < p.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, p.MaxDelay)
	half := d / 2
	d = half + time.Duration(rand.Int64N(int64(half)+1))
	return max(d, retryAfter)
}

// RetryObserver is told about a retry of one call before its wait:
// the failed attempt's number, its error and how long the wait will be.
type RetryObserver func(attempt int, err error, wait time.Duration)

type retryObserverKey struct{}

// WithRetryObserver returns a context whose model calls report their
// retries to obs (the policy's OnRetry still runs). It lets the caller of
// one call, not only the owner of the provider, see that call wait.
func WithRetryObserver(ctx context.Context, obs RetryObserver) context.Context {
	return context.WithValue(ctx, retryObserverKey{}, obs)
}

// WithRetry wraps p so that Generate retries as the policy says.
func WithRetry(p Provider, policy RetryPolicy) Provider {
	return &retrying{next: p, policy: policy.withDefaults()}
}

type retrying struct {
	next   Provider
	policy RetryPolicy
}

func (r *retrying) Name() string { return r.next.Name() }

// Unwrap returns the wrapped provider.
func (r *retrying) Unwrap() Provider { return r.next }

func (r *retrying) Generate(ctx context.Context, req *Request, onEvent StreamFunc) (*Response, error) {
	start := time.Now()
	// counted is the attempts that count against MaxAttempts: a call the
	// server turned away for load, naming when to come back, is waited
	// out (within MaxElapsed) rather than given up.
	counted := 0
	for attempt := 1; ; attempt++ {
		streamed := false
		var fn StreamFunc
		if onEvent != nil {
			fn = func(ev StreamEvent) { streamed = true; onEvent(ev) }
		}
		resp, err := r.next.Generate(ctx, req, fn)
		if err == nil {
			return resp, nil
		}
		var retryAfter time.Duration
		var e *Error
		if errors.As(err, &e) {
			retryAfter = e.RetryAfter
		}
		if retryAfter <= 0 || !Overloaded(err) || r.policy.MaxAttempts == 1 {
			counted++
		}
		kind := KindOf(err)
		if !kind.Retryable() || streamed || counted >= r.policy.MaxAttempts || ctx.Err() != nil {
			return nil, err
		}
		wait := r.policy.Backoff(counted, 0)
		if retryAfter > 0 {
			// The server said when; earlier is pointless, later wastes time.
			wait = retryAfter
		}
		if elapsed := time.Since(start); elapsed+wait > r.policy.MaxElapsed {
			if retryAfter > 0 {
				return nil, notRetried(err, wait, r.policy.MaxElapsed-elapsed)
			}
			return nil, err
		}
		if r.policy.OnRetry != nil {
			r.policy.OnRetry(attempt, err, wait)
		}
		if obs, ok := ctx.Value(retryObserverKey{}).(RetryObserver); ok {
			obs(attempt, err, wait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, Classify(ctx, r.next.Name(), ctx.Err())
		case <-t.C:
		}
	}
}

// notRetried is err, a refusal whose Retry-After (wait) is longer than the
// retry policy has left (left), saying so: otherwise a user sees a rate
// limit that was never retried and cannot tell why. The error keeps its
// kind, status and Retry-After.
func notRetried(err error, wait, left time.Duration) error {
	if left = left.Round(time.Millisecond); left >= time.Second {
		left = left.Round(time.Second)
	}
	why := fmt.Sprintf("not retried: the server asked to wait %s, longer than the %s the retry policy allows (retry.max_elapsed)", wait, max(left, 0))
	e, ok := err.(*Error)
	if !ok {
		return fmt.Errorf("%w; %s", err, why)
	}
	cp := *e
	switch {
	case cp.Message != "":
		cp.Message += "; " + why
	case cp.Err != nil:
		cp.Message = cp.Err.Error() + "; " + why
	default:
		cp.Message = why
	}
	return &cp
}

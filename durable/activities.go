//go:build temporal

package durable

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm"
)

// Activities are the model and tool calls of every run, made by the engine
// of the worker that picks them up. The engine's providers should make one
// attempt per call (retry_policy max_attempts 1): Temporal retries the
// activity, so a retry survives the worker.
type Activities struct {
	Engine *delegate.Engine
}

// ModelCall makes one model call.
func (a *Activities) ModelCall(ctx context.Context, in ModelInput) (*llm.Response, error) {
	defer heartbeat(ctx)()
	resp, err := a.Engine.ModelStep(ctx, in.Spec, in.Messages, in.NoTools)
	if err != nil {
		return nil, retryable(ctx, err)
	}
	return resp, nil
}

// ToolCall runs one tool call, or hands a delegation tool's child over.
func (a *Activities) ToolCall(ctx context.Context, in ToolInput) (delegate.ToolOutcome, error) {
	defer heartbeat(ctx)()
	out, err := a.Engine.ToolStep(ctx, in.Spec, in.Call, in.Answer)
	if err != nil {
		return out, retryable(ctx, err)
	}
	return out, nil
}

// retryable says how Temporal should treat err: a rate limit waits at
// least what the server's Retry-After asked for (deputy's own rule), other
// transient provider errors follow the retry policy's backoff, and what
// another attempt cannot fix (a bad key, a bad request, the configuration)
// is not retried.
func retryable(ctx context.Context, err error) error {
	var le *llm.Error
	switch {
	case errors.Is(err, delegate.ErrConfig):
		return temporal.NewNonRetryableApplicationError(err.Error(), "config", nil)
	case !errors.As(err, &le):
		return err
	case !le.Kind.Retryable():
		return temporal.NewNonRetryableApplicationError(err.Error(), le.Kind.String(), nil)
	}
	opts := temporal.ApplicationErrorOptions{}
	if le.RetryAfter > 0 {
		attempt := 1
		if activity.IsActivity(ctx) {
			attempt = int(activity.GetInfo(ctx).Attempt)
		}
		opts.NextRetryDelay = max(le.RetryAfter, llm.RetryPolicy{}.Backoff(attempt, 0))
	}
	return temporal.NewApplicationErrorWithOptions(err.Error(), le.Kind.String(), opts)
}

// heartbeat tells Temporal the activity's worker is alive while a call
// runs, so that a call on a worker that died is retried elsewhere after
// HeartbeatTimeout instead of after the call's whole time limit. It
// returns the function that stops it.
func heartbeat(ctx context.Context) func() {
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(HeartbeatTimeout / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return func() { close(done) }
}

//go:build temporal

package durable

import (
	"context"
	"fmt"

	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/ledger"
)

// Record writes a tree that ran on Temporal into the ledger of the process
// that started it, once it has ended: one run row per envelope, root
// first, with the same kinds, depths, statuses, usage and outputs a local
// run records, so that 'deputy runs list/show/tree' show it. The
// conversations stay in Temporal's history.
//
// Nothing is recorded while the tree runs: a row left "running" by a
// process that stopped waiting would be marked interrupted, and 'deputy
// runs resume' would then run locally a tree Temporal is still running.
func Record(ctx context.Context, l delegate.Ledger, spec delegate.RunSpec, env *delegate.Envelope) error {
	root := &ledger.Run{ID: spec.RunID, RootID: spec.RunID, Agent: spec.Label, Kind: string(spec.Kind), Model: spec.Model,
		Status: ledger.StatusRunning, StartedAt: env.StartedAt, Task: spec.Task, SessionID: spec.SessionID, Workdir: spec.Workdir}
	if err := l.CreateRun(ctx, root); err != nil {
		return fmt.Errorf("recording run %s: %w", env.RunID, err)
	}
	if err := l.FinishRun(ctx, finishedRow(env)); err != nil {
		return fmt.Errorf("recording run %s: %w", env.RunID, err)
	}
	var walk func(parent *delegate.Envelope) error
	walk = func(parent *delegate.Envelope) error {
		for _, c := range parent.Children {
			row := &ledger.Run{ID: c.RunID, ParentID: parent.RunID, RootID: spec.RootID, Agent: c.Label, Kind: string(c.Kind),
				Depth: c.Depth, Model: c.Model, Status: ledger.StatusRunning, StartedAt: c.StartedAt, Workdir: spec.Workdir}
			if err := l.CreateRun(ctx, row); err != nil {
				return fmt.Errorf("recording run %s: %w", c.RunID, err)
			}
			if err := l.FinishRun(ctx, finishedRow(c)); err != nil {
				return fmt.Errorf("recording run %s: %w", c.RunID, err)
			}
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(env)
}

func finishedRow(env *delegate.Envelope) *ledger.Run {
	return &ledger.Run{ID: env.RunID, Status: string(env.Status), Error: env.Error, Output: env.Output,
		InputTokens: env.Usage.InputTokens, OutputTokens: env.Usage.OutputTokens,
		TreeInputTokens: env.TreeUsage.InputTokens, TreeOutputTokens: env.TreeUsage.OutputTokens,
		Turns: env.Turns, FinishedAt: env.StartedAt.Add(env.Duration), Model: env.Model}
}

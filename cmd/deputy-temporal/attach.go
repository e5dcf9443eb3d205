//go:build temporal

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/store"
)

// newRuns is 'runs resume' for a run on Temporal: deputy hands 'deputy
// runs resume ID' over when the ledger says the run lives there.
func newRuns(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "Attach to runs on Temporal recorded in the ledger",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	var asJSON bool
	resume := &cobra.Command{
		Use:   "resume <id>",
		Short: "Wait for a run on Temporal and record it, as 'deputy run --temporal' would have",
		Long: `Attach to a root run that lives on Temporal — submitted with --detach, or
whose submitting process stopped waiting (killed, Ctrl-C) — wait for its end,
record its tree in the ledger as 'deputy run --temporal' records it, and print
its answer. The run goes on on Temporal whatever happens to the processes that
wait for it. The id is as 'deputy runs' takes it: whole, a unique prefix, the
random tail, or "last".`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, name := range []string{"retry-failed", "timeout", "verbose"} {
				if cmd.Flags().Changed(name) {
					return usage(fmt.Errorf("--%s is not supported for a run on Temporal: it goes on there by itself (docs/durable.md)", name))
				}
			}
			for _, name := range []string{"max-tokens", "max-usd"} {
				if cmd.Flags().Changed(name) {
					return usage(fmt.Errorf("--%s is not supported for a run on Temporal: it goes on there with the budget it was submitted with (docs/durable.md)", name))
				}
			}
			return attach(cmd, g, args[0], asJSON)
		},
	}
	fl := resume.Flags()
	fl.BoolVar(&asJSON, "json", false, "print the root's envelope, with its tree, as JSON")
	// deputy runs resume's flags for local runs, refused with a reason.
	fl.Bool("retry-failed", false, "not supported on Temporal")
	fl.String("timeout", "", "not supported on Temporal")
	fl.BoolP("verbose", "v", false, "not supported on Temporal")
	fl.String("max-tokens", "", "not supported on Temporal")
	fl.String("max-usd", "", "not supported on Temporal")
	for _, name := range []string{"retry-failed", "timeout", "verbose", "max-tokens", "max-usd"} {
		_ = fl.MarkHidden(name)
	}
	cmd.AddCommand(resume)
	return cmd
}

// attach waits for the run id names on Temporal and records it.
func attach(cmd *cobra.Command, g *globals, id string, asJSON bool) error {
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	w, err := g.load(cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	l, err := w.OpenLedger(ctx)
	if err != nil {
		return err
	}
	defer l.Close()
	root, err := findRoot(ctx, l, id)
	if err != nil {
		return err
	}
	switch {
	case root.Executor != store.ExecutorTemporal:
		return &exitError{code: 1, err: fmt.Errorf("run %s did not run on Temporal: 'deputy runs resume' resumes it", root.ID)}
	case root.ParentID != "":
		return &exitError{code: 1, err: fmt.Errorf("run %s is a child of run %s; attach to the root run %s", root.ID, root.ParentID, root.RootID)}
	case root.Status != store.StatusRunning:
		return &exitError{code: 1, err: fmt.Errorf("run %s on Temporal has ended (%s) and is recorded: 'deputy runs show %s'", root.ID, root.Status, root.ID)}
	}
	c := &conn{hostPort: root.Temporal.Address, namespace: root.Temporal.Namespace, queue: root.Temporal.TaskQueue}
	cl, err := c.dial()
	if err != nil {
		return err
	}
	defer cl.Close()
	spec := delegate.RunSpec{RunID: root.ID, RootID: root.ID, Label: root.Agent, Model: root.Model, Task: root.Task,
		Workdir: root.Workdir, SessionID: root.SessionID}
	if a, _, err := w.Agent(root.Agent); err == nil {
		spec.Budget.Time = a.Budget.Time // a root its time budget ended is recorded as such
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "deputy-temporal: waiting for run %s on Temporal (%s, namespace %s)\n", root.ID, c.hostPort, c.namespace)
	return await(ctx, cmd, w.Engine(l), cl, spec, root.StartedAt, asJSON)
}

// findRoot looks a run up as deputy's runs commands do.
func findRoot(ctx context.Context, l *store.Store, id string) (*store.Run, error) {
	if strings.EqualFold(id, "last") {
		rs, err := l.ListRuns(ctx, store.RunFilter{RootsOnly: true, Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(rs) == 0 {
			return nil, &exitError{code: 1, err: errors.New("no runs recorded yet")}
		}
		return &rs[0], nil
	}
	if i := strings.LastIndex(id, "#"); i >= 0 {
		id = id[i+1:]
	}
	r, err := l.GetRun(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, &exitError{code: 1, err: fmt.Errorf("no run with id %q (see 'deputy runs list --all')", id)}
	case errors.Is(err, store.ErrAmbiguous):
		return nil, usage(fmt.Errorf("run id %q matches more than one run; give more of it", id))
	}
	return r, err
}

// await waits for the root workflow of spec, records the ended tree in the
// ledger (RecordEnded: its root is recorded already) and prints its answer
// as deputy run does. A workflow that ended without an answer (failed,
// terminated, timed out, or gone from Temporal) is recorded as such. When
// the waiting stops first — Ctrl-C, a lost connection — nothing is
// recorded: the run goes on on Temporal, and 'deputy runs resume' waits
// for it again.
func await(ctx context.Context, cmd *cobra.Command, eng *delegate.Engine, cl client.Client, spec delegate.RunSpec, started time.Time, asJSON bool) error {
	var env delegate.Envelope
	err := cl.GetWorkflow(ctx, spec.RunID, "").Get(ctx, &env)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return &exitError{code: 130, err: fmt.Errorf("stopped waiting; run %s goes on on Temporal: 'deputy runs resume %s' waits for it again", spec.RunID, spec.RunID)}
	case endedWithout(err):
		// The tree's runs are not known: only the root is recorded.
		env = delegate.Envelope{RunID: spec.RunID, Kind: delegate.KindRoot, Label: spec.Label, Model: spec.Model,
			StartedAt: started, Status: delegate.StatusError, Error: "on Temporal: " + err.Error()}
		switch {
		case temporal.IsTimeoutError(err):
			// --timeout: the root workflow's execution timeout.
			env.Status, env.Error = delegate.StatusTimeout, "timed out (the run's --timeout); Temporal ended its workflows"
			if stop := delegate.ChainOf(nil, spec.Label, spec.Budget, started).TimeStop(time.Now()); stop != nil {
				// The root's [budget] time ended it.
				env.Status, env.Error = delegate.StatusBudget, stop.Error()
			}
		case temporal.IsCanceledError(err):
			env.Status, env.Error = delegate.StatusCancelled, "cancelled on Temporal"
		case temporal.IsTerminatedError(err):
			env.Error = "terminated on Temporal"
		}
		env.DurationMS = time.Since(started).Milliseconds()
	default:
		return fmt.Errorf("waiting for run %s on Temporal: %w ('deputy runs resume %s' waits for it again)", spec.RunID, err, spec.RunID)
	}
	eng.RecordEnded(context.WithoutCancel(ctx), spec, &env)
	if asJSON {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		if err := enc.Encode(&env); err != nil {
			return err
		}
	} else if env.OK() {
		fmt.Fprintln(cmd.OutOrStdout(), strings.TrimRight(env.Output, "\n"))
	}
	if !env.OK() {
		// deputy run's exit codes: 3 a timeout, 130 cancelled, 1 a failure.
		code := map[delegate.Status]int{delegate.StatusTimeout: 3, delegate.StatusCancelled: 130}[env.Status]
		if code == 0 {
			code = 1
		}
		return &exitError{code: code, err: fmt.Errorf("agent %q failed: %s", env.Label, env.Error)}
	}
	return nil
}

// endedWithout reports whether err says the workflow ended without a
// result, or is not on Temporal at all (never started, or deleted after
// its namespace's retention): waiting again would not change it.
func endedWithout(err error) bool {
	var wf *temporal.WorkflowExecutionError
	var nf *serviceerror.NotFound
	return errors.As(err, &wf) || errors.As(err, &nf)
}

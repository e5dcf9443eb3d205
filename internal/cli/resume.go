package cli

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/internal/cli/live"
	"github.com/deputyhq/deputy/store"
)

type resumeFlags struct {
	retryFailed bool
	timeout     time.Duration
	json        bool
	verbose     bool
	budget      budgetFlags
}

func newRunsResumeCmd(g *globalFlags) *cobra.Command {
	f := &resumeFlags{}
	cmd := &cobra.Command{
		Use:   "resume <id>",
		Short: "Continue an interrupted run and its tree from the ledger",
		Long: `Continue a root run that was interrupted (its process was killed, the machine
went down) from what the ledger holds, and print its answer as 'deputy run'
would.

Every child that had finished keeps its result and is not run again. A run
that was in flight continues from its last recorded message: a model call
whose answer was not recorded is made again, and tool calls whose results were
not recorded are run again (see docs/durable.md for which tools are safe to
repeat). The tree's quotas and budgets continue from what was spent; the
run's budget is the one it started with, which --max-tokens and --max-usd
can only narrow. The run keeps its id; 'deputy runs show' lists its earlier
attempts. A person's answers to approvals are kept: a call that was
approved is not asked about again, and what was allowed for the rest of the
run stays allowed; a request that was waiting for an answer is asked again
(at the terminal when stdin is one; otherwise nobody is there, and it is
refused).

The agent's current definition is used, with the run's recorded model, effort
(run --effort) and working directory; an isolated child goes on in its
worktree, as it left it, and is merged when it ends. --retry-failed also continues a run that ended with an
error, a timeout, a cancellation or a spent budget.

A run on Temporal ('deputy run --temporal', with --detach or whose process
stopped waiting) is attached to instead: the deputy-temporal binary waits for
it to end on Temporal, records its tree here and prints its answer
(docs/durable.md).`,
		Example: `  deputy runs resume last
  deputy runs resume 2A3YCB --json
  deputy runs resume 2A3YCB --retry-failed`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return resumeRun(cmd, g, f, args[0]) },
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.retryFailed, "retry-failed", false, "also continue a run that failed (error, timeout, cancelled, budget, max_turns)")
	fl.DurationVar(&f.timeout, "timeout", 0, "time limit of this attempt, e.g. 90s or 5m (default none)")
	f.budget.add(cmd, "the run, narrowing the one it started with (never widening it); what it spent before counts")
	fl.BoolVar(&f.json, "json", false, "print one JSON object, as 'deputy run --json' does")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "show what each agent does on stderr, one line per step")
	return cmd
}

func resumeRun(cmd *cobra.Command, g *globalFlags, f *resumeFlags, id string) error {
	budget, err := f.budget.get()
	if err != nil {
		return err
	}
	if err := checkTimeout(f.timeout); err != nil {
		return err
	}
	w, err := loadWorkspace(cmd, g)
	if err != nil {
		return err
	}
	ctx, stop := interruptible(cmd.Context())
	defer stop()
	flushTraces, err := w.startTracing(ctx)
	if err != nil {
		return err
	}
	defer flushTraces()
	ledger, err := w.OpenLedger(ctx)
	if err != nil {
		return err
	}
	defer closeLedger(ledger, cmd.ErrOrStderr())
	root, err := getRun(ctx, ledger, id, store.RunFilter{RootsOnly: true})
	if err != nil {
		return err
	}
	if root.ParentID != "" {
		return configErrf("run %s is a child of run %s; resume the root run %s", root.ID, root.ParentID, root.RootID)
	}
	if root.Executor == store.ExecutorTemporal {
		// It lives on Temporal: deputy-temporal attaches to it.
		ledger.Close()
		return handOverToTemporal(cmd)
	}
	a, err := w.agent(root.Agent)
	if err != nil {
		return err
	}
	if tty := terminalOf(cmd.InOrStdin()); tty != nil {
		// Approvals and questions, asked again or anew, come here.
		w.Person = personAt(tty, cmd.ErrOrStderr())
	}
	req := delegate.ResumeRequest{RunID: root.ID, Agent: a, RetryFailed: f.retryFailed, Budget: budget, Hooks: w.AgentHooks(a)}
	if root.SessionID != "" {
		exs, err := ledger.Window(ctx, root.SessionID, 0)
		if err != nil {
			return failed(err)
		}
		// The exchange of this run is added when it ends ok: the window is
		// the history it started with.
		req.History = delegate.SessionHistory(exs)
	}
	var listeners []delegate.Listener
	if f.verbose {
		listeners = append(listeners, live.NewPlain(cmd.ErrOrStderr()).Listen)
	}
	if f.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.timeout)
		defer cancel()
	}
	env := w.Engine(ledger, listeners...).Resume(ctx, req)
	if errors.Is(env.Err, delegate.ErrNotResumable) {
		return failed(env.Err)
	}
	if root.SessionID != "" && env.OK() {
		saveExchange(ctx, ledger, cmd.ErrOrStderr(), root.SessionID, env.Exchange(root.Task))
	}
	if err := printResult(cmd.OutOrStdout(), env, f.json); err != nil {
		return err
	}
	return runExit(env, f.json)
}

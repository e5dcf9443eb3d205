//go:build temporal

// Command deputy-temporal runs deputy's delegation trees on Temporal
// (docs/durable.md): 'worker' runs workers, 'run' submits a root run. It is
// a binary of its own so that the Temporal SDK stays out of deputy's;
// deputy hands its 'worker' and 'run --temporal' command lines over to it
// unchanged.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/claude"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/durable"
	"github.com/deputyhq/deputy/internal/stdin"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/store"
	"github.com/deputyhq/deputy/telemetry"
	"github.com/deputyhq/deputy/tool/builtin/sandbox"
	"github.com/deputyhq/deputy/workspace"
)

func main() {
	// A worker runs the terminal tool's commands: under the sandbox
	// helper, which is this binary re-executed (and hides its environment).
	sandbox.Main(os.Args)
	if err := newRoot().Execute(); err != nil {
		var x *exitError
		if !errors.As(err, &x) {
			x = &exitError{code: 1, err: err}
		}
		if !x.quiet {
			fmt.Fprintln(os.Stderr, "deputy-temporal:", err)
		}
		os.Exit(x.code)
	}
}

// exitError carries an exit code, deputy's: 1 the agent failed, 2 a
// configuration or usage error. Its message was printed already when
// quiet is set.
type exitError struct {
	code  int
	err   error
	quiet bool
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// globals are deputy's global flags: deputy hands its whole command line
// over (deputy worker, deputy run --temporal), so they mean what they mean
// there.
type globals struct {
	agentsDirs            []string
	db, logLevel          string
	subqueries, config    string
	allowTools, denyTools []string
}

func (g *globals) flags(cmd *cobra.Command) {
	pf := cmd.PersistentFlags()
	pf.StringArrayVar(&g.agentsDirs, "agents-dir", nil, "extra agent directory, winning over the user and project directories (repeatable)")
	pf.StringVar(&g.db, "db", "", "ledger database file (default as deputy: $DEPUTY_DB, store.path, the data directory)")
	pf.StringVar(&g.logLevel, "log-level", "", "log level on stderr: debug, info, warn, error (default $DEPUTY_LOG, else warn)")
	pf.StringSliceVar(&g.allowTools, "allow-tool", nil, "grant only these tools to every agent (narrows permissions.tools in config.yaml)")
	pf.StringSliceVar(&g.denyTools, "deny-tool", nil, "refuse this tool to every agent")
	pf.StringVar(&g.subqueries, "subqueries", "", "INI file of [llm_tool_<name>] specializations, besides the user and project subqueries.ini")
	pf.StringVar(&g.config, "config", os.Getenv("DEPUTY_CONFIG"), "settings file read after the user's and the project's config.yaml (default $DEPUTY_CONFIG)")
}

// load loads the workspace of the current directory as deputy does.
func (g *globals) load(stderr io.Writer) (*workspace.Workspace, error) {
	level := g.logLevel
	if level == "" {
		level = os.Getenv("DEPUTY_LOG")
	}
	lvl, err := telemetry.ParseLevel(level)
	if err != nil {
		return nil, usage(err)
	}
	w, err := workspace.Load(workspace.Options{AgentsDirs: g.agentsDirs, DB: g.db, Subqueries: g.subqueries,
		ConfigFile: g.config, Logger: telemetry.NewLogger(stderr, lvl)})
	if err != nil {
		return nil, usage(err)
	}
	for _, d := range w.Warnings {
		fmt.Fprintln(stderr, "deputy-temporal: warning:", d)
	}
	w.Grant = w.Grant.Restrict(g.allowTools, g.denyTools)
	return w, nil
}

// usage marks a configuration or usage error: exit 2, as deputy.
func usage(err error) error { return &exitError{code: 2, err: err} }

type conn struct {
	hostPort, namespace, queue string
}

func (c *conn) flags(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&c.hostPort, "temporal", "", "Temporal frontend address HOST:PORT (required)")
	fl.StringVar(&c.namespace, "namespace", "default", "Temporal namespace")
	fl.StringVar(&c.queue, "task-queue", durable.DefaultTaskQueue, "task queue the workers poll")
	_ = cmd.MarkFlagRequired("temporal")
}

func (c *conn) dial() (client.Client, error) {
	return client.Dial(client.Options{HostPort: c.hostPort, Namespace: c.namespace, Logger: quietLogger()})
}

func newRoot() *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:           "deputy-temporal",
		Short:         "Run deputy's delegation trees on Temporal",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	g.flags(root)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usage(fmt.Errorf("%w\nRun '%s --help' for usage.", err, c.CommandPath()))
	})
	root.AddCommand(newWorker(g), newRun(g), newRuns(g))
	return root
}

func newWorker(g *globals) *cobra.Command {
	c := &conn{}
	cmd := &cobra.Command{
		Use:   "worker --temporal HOST:PORT",
		Short: "Run a worker: it makes the model and tool calls of the runs on its task queue",
		Long: `Run a worker until interrupted. It loads the configuration of the current
directory as deputy does (agents, settings, providers, tools) and makes the model
calls and tool calls of every run on its task queue. Start as many as you like,
on as many machines: a tree's children spread across them. Every worker must see
the same agent definitions and working directories.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w, eng, err := workerEngine(g, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			// The MCP servers the worker's runs started (lazily, shared
			// by every run it makes calls for) stop with it.
			defer w.Close()
			cl, err := c.dial()
			if err != nil {
				return err
			}
			defer cl.Close()
			wk := worker.New(cl, c.queue, worker.Options{})
			durable.Register(wk, eng)
			fmt.Fprintf(cmd.ErrOrStderr(), "deputy-temporal: worker polling %s (namespace %s, task queue %s)\n", c.hostPort, c.namespace, c.queue)
			return wk.Run(worker.InterruptCh())
		},
	}
	c.flags(cmd)
	return cmd
}

// workerEngine is the workspace's engine with providers that make one
// attempt per call: Temporal retries the activity instead.
func workerEngine(g *globals, stderr io.Writer) (*workspace.Workspace, *delegate.Engine, error) {
	w, err := g.load(stderr)
	if err != nil {
		return nil, nil, err
	}
	s := *w.Settings
	s.Retry.MaxAttempts = 1
	w.Models = workspace.NewModels(&s, w.Dir)
	return w, w.Engine(nil), nil
}

type runFlags struct {
	model, skill, workdir string
	detach, json          bool
	timeout               time.Duration
	maxTokens             int64
	maxUSD                float64
}

// unsupported are deputy run's flags that a run on Temporal does not have
// (docs/durable.md, "What differs from a local run"). deputy-temporal
// accepts them so that it can say so, rather than call them unknown.
var unsupported = []struct {
	name, short string
	bool        bool
	why         string
}{
	{name: "session", why: "sessions are local"},
	{name: "dry-run", bool: true, why: "use deputy run --dry-run without --temporal: it shows the same request"},
	{name: "verbose", short: "v", bool: true, why: "steps are not streamed from Temporal"},
	{name: "progress", why: "steps are not streamed from Temporal"},
	{name: "stream-json", bool: true, why: "events are not streamed from Temporal"},
}

func newRun(g *globals) *cobra.Command {
	c := &conn{}
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run --temporal HOST:PORT <agent> [task words...]",
		Short: "Run an agent's tree on Temporal and print its answer",
		Long: `Submit a root run to Temporal and print its final answer, as 'deputy run'
would. The root is recorded in this process's ledger at once, as running on
Temporal, and its whole tree when it ends. --detach prints the run's id (its
workflow id) and returns at once; 'deputy runs resume ID' waits for it later,
records the tree and prints the answer, as it does for a run whose submitting
process stopped waiting.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, u := range unsupported {
				if cmd.Flags().Changed(u.name) {
					return usage(fmt.Errorf("--%s is not supported for a run on Temporal: %s (docs/durable.md)", u.name, u.why))
				}
			}
			return submit(cmd, g, c, f, args[0], strings.Join(args[1:], " "))
		},
	}
	c.flags(cmd)
	fl := cmd.Flags()
	fl.BoolVar(&f.detach, "detach", false, "print the workflow id and return without waiting")
	fl.BoolVar(&f.json, "json", false, "print the root's envelope, with its tree, as JSON")
	fl.StringVar(&f.workdir, "workdir", "", "working directory of the root agent (default: the agent's, else the current directory)")
	fl.StringVar(&f.model, "model", "", "model for the root agent, as provider/model (overrides the agent's)")
	fl.StringVar(&f.skill, "skill", "", "skill for the root agent: a SKILL.md path or a skill name (overrides the agent's)")
	fl.Int64Var(&f.maxTokens, "max-tokens", 0, "token budget of the run, sub-agents included; the run stops with status budget after the model call that reaches it (default none)")
	fl.Float64Var(&f.maxUSD, "max-usd", 0, "the same budget in dollars, by this process's price table; not enforced for a model without a price (default none)")
	fl.DurationVar(&f.timeout, "timeout", 0, "time limit of the whole run, e.g. 90s or 5m (default none): the root workflow's execution timeout")
	for _, u := range unsupported {
		if u.bool {
			fl.BoolP(u.name, u.short, false, "not supported on Temporal")
		} else {
			fl.StringP(u.name, u.short, "", "not supported on Temporal")
		}
		_ = fl.MarkHidden(u.name)
	}
	return cmd
}

func submit(cmd *cobra.Command, g *globals, c *conn, f *runFlags, name, task string) error {
	if err := checkLimits(f); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	w, err := g.load(cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	// Describing the root lists its MCP tools, starting their servers
	// here: they stop with this process; the workers run their own.
	defer w.Close()
	a, workdir, err := rootAgent(w, f, name)
	if err != nil {
		return err
	}
	if f.model != "" {
		if m, _, ok := claude.ResolveModel(f.model); ok && m != "" {
			f.model = m // a Claude Code alias, as deputy run takes it
		}
		if _, err := llm.ParseModel(f.model); err != nil {
			return usage(fmt.Errorf("--model: %w", err))
		}
	}
	// Piped stdin is context after the task, as deputy run reads it.
	piped, err := stdin.ReadPiped(cmd.InOrStdin(), w.Settings.Limits.StdinMaxBytes)
	if err != nil {
		return usage(err)
	}
	if strings.TrimSpace(task) == "" && strings.TrimSpace(piped) == "" {
		task = a.DefaultTask
	}
	if strings.TrimSpace(task) == "" && strings.TrimSpace(piped) == "" {
		return usage(errors.New("no task: give it after the agent's name, or pipe it on stdin"))
	}
	// The ledger first: a run that cannot be recorded is not started.
	l, err := w.OpenLedger(ctx)
	if err != nil {
		return err
	}
	defer l.Close()
	eng := w.Engine(l)
	spec, err := eng.Describe(delegate.RunRequest{Agent: a, Task: task, Context: piped, Model: f.model, Workdir: workdir,
		Budget: config.Budget{Tokens: f.maxTokens, USD: f.maxUSD}})
	if err != nil {
		return usage(err)
	}
	cl, err := c.dial()
	if err != nil {
		return err
	}
	defer cl.Close()
	start := time.Now()
	// The whole tree's limit: when it passes, Temporal ends the root
	// workflow and, with it, the children still running.
	opts := client.StartWorkflowOptions{ID: spec.RunID, TaskQueue: c.queue, WorkflowExecutionTimeout: f.timeout}
	if t := spec.Budget.Time; t > 0 && (opts.WorkflowExecutionTimeout == 0 || t < opts.WorkflowExecutionTimeout) {
		// The root's [budget] time bounds the tree as --timeout does.
		opts.WorkflowExecutionTimeout = t
	}
	run, err := cl.ExecuteWorkflow(ctx, opts, durable.WorkflowName, spec)
	if err != nil {
		return err
	}
	ref := store.TemporalRef{Address: c.hostPort, Namespace: c.namespace, TaskQueue: c.queue}
	if err := eng.RecordSubmitted(ctx, spec, store.ExecutorTemporal, ref, start); err != nil {
		fmt.Fprintln(cmd.ErrOrStderr(), "deputy-temporal: warning: recording the run in the ledger:", err)
	}
	if f.detach {
		fmt.Fprintln(cmd.OutOrStdout(), run.GetID())
		return nil
	}
	return await(ctx, cmd, eng, cl, spec, start, f.json)
}

// checkLimits checks the budget and time flags by the engine's rules,
// here to name the flag before any work.
func checkLimits(f *runFlags) error {
	if err := delegate.CheckBudget(config.Budget{Tokens: f.maxTokens}); err != nil {
		return usage(fmt.Errorf("--max-tokens: %w", err))
	}
	if err := delegate.CheckBudget(config.Budget{USD: f.maxUSD}); err != nil {
		return usage(fmt.Errorf("--max-usd: %w", err))
	}
	if f.timeout < 0 {
		return usage(fmt.Errorf("--timeout must not be negative (got %s)", f.timeout))
	}
	return nil
}

// rootAgent is the root's agent as the flags make it (--skill), and its
// working directory (--workdir), checked before anything is submitted.
func rootAgent(w *workspace.Workspace, f *runFlags, name string) (*config.Agent, string, error) {
	a, _, err := w.Agent(name)
	if err != nil {
		return nil, "", usage(err)
	}
	if w.AgentHooks(a) != nil {
		// Hooks are callbacks of the process that runs the tree, and the
		// workers run none: a hook that refuses a command would not.
		return nil, "", usage(fmt.Errorf("agent %q, or an agent it calls, has hooks (PreToolUse, PostToolUse), which do not run on Temporal: run it without --temporal", a.Name))
	}
	if f.skill != "" {
		sk, err := config.ResolveSkill(f.skill, w.Dir, workspace.SkillDirs(w.Dir))
		if err != nil {
			return nil, "", usage(fmt.Errorf("--skill: %w", err))
		}
		cp := *a
		cp.Skill, cp.SkillDoc = f.skill, sk
		a = &cp
	}
	workdir := a.ResolveWorkdir(w.Dir)
	if f.workdir != "" {
		if workdir, err = filepath.Abs(f.workdir); err != nil {
			return nil, "", usage(err)
		}
	}
	if fi, err := os.Stat(workdir); err != nil || !fi.IsDir() {
		return nil, "", usage(fmt.Errorf("working directory %s does not exist", workdir))
	}
	return a, workdir, nil
}

//go:build temporal

// Command deputy-temporal runs deputy's delegation trees on Temporal
// (docs/durable.md): 'worker' runs workers, 'run' submits a root run. It is
// a binary of its own so that the Temporal SDK stays out of deputy's.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/durable"
	"github.com/deputyhq/deputy/workspace"
)

func main() {
	if err := newRoot().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "deputy-temporal:", err)
		var x exitCode
		if errors.As(err, &x) {
			os.Exit(int(x))
		}
		os.Exit(1)
	}
}

type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit %d", int(c)) }

type conn struct {
	hostPort, namespace, queue string
	agentsDirs                 []string
	db                         string
}

func (c *conn) flags(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&c.hostPort, "temporal", "", "Temporal frontend address HOST:PORT (required)")
	fl.StringVar(&c.namespace, "namespace", "default", "Temporal namespace")
	fl.StringVar(&c.queue, "task-queue", durable.DefaultTaskQueue, "task queue the workers poll")
	fl.StringArrayVar(&c.agentsDirs, "agents-dir", nil, "extra directory of agent definitions (repeatable)")
	_ = cmd.MarkFlagRequired("temporal")
}

func (c *conn) dial() (client.Client, error) {
	return client.Dial(client.Options{HostPort: c.hostPort, Namespace: c.namespace, Logger: quietLogger()})
}

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "deputy-temporal",
		Short:         "Run deputy's delegation trees on Temporal",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newWorker(), newRun())
	return root
}

func newWorker() *cobra.Command {
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
			eng, err := workerEngine(c)
			if err != nil {
				return err
			}
			cl, err := c.dial()
			if err != nil {
				return err
			}
			defer cl.Close()
			w := worker.New(cl, c.queue, worker.Options{})
			durable.Register(w, eng)
			fmt.Fprintf(cmd.ErrOrStderr(), "deputy-temporal: worker polling %s (namespace %s, task queue %s)\n", c.hostPort, c.namespace, c.queue)
			return w.Run(worker.InterruptCh())
		},
	}
	c.flags(cmd)
	return cmd
}

// workerEngine is the workspace's engine with providers that make one
// attempt per call: Temporal retries the activity instead.
func workerEngine(c *conn) (*delegate.Engine, error) {
	w, err := workspace.Load(workspace.Options{AgentsDirs: c.agentsDirs})
	if err != nil {
		return nil, err
	}
	s := *w.Settings
	s.Retry.MaxAttempts = 1
	w.Models = workspace.NewModels(&s, w.Dir)
	return w.Engine(nil), nil
}

func newRun() *cobra.Command {
	c := &conn{}
	var detach, asJSON bool
	var workdir string
	cmd := &cobra.Command{
		Use:   "run --temporal HOST:PORT <agent> [task words...]",
		Short: "Run an agent's tree on Temporal and print its answer",
		Long: `Submit a root run to Temporal and print its final answer, as 'deputy run'
would. The run and its children are recorded in this process's ledger when the
tree ends. --detach prints the workflow id (the root run's id) and returns at
once, recording nothing; 'temporal workflow result --workflow-id ID' gives the
answer later.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			w, err := workspace.Load(workspace.Options{AgentsDirs: c.agentsDirs, DB: c.db})
			if err != nil {
				return err
			}
			a, _, err := w.Agent(args[0])
			if err != nil {
				return err
			}
			if workdir == "" {
				workdir = a.ResolveWorkdir(w.Dir)
			} else if workdir, err = filepath.Abs(workdir); err != nil {
				return err
			}
			spec, err := w.Engine(nil).Describe(delegate.RunRequest{Agent: a, Task: strings.Join(args[1:], " "), Workdir: workdir})
			if err != nil {
				return err
			}
			cl, err := c.dial()
			if err != nil {
				return err
			}
			defer cl.Close()
			run, err := cl.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: spec.RunID, TaskQueue: c.queue}, durable.WorkflowName, spec)
			if err != nil {
				return err
			}
			if detach {
				fmt.Fprintln(cmd.OutOrStdout(), run.GetID())
				return nil
			}
			var env delegate.Envelope
			if err := run.Get(ctx, &env); err != nil {
				return err
			}
			if err := record(context.WithoutCancel(ctx), w, spec, &env); err != nil {
				fmt.Fprintln(cmd.ErrOrStderr(), "deputy-temporal: warning: recording the run in the ledger:", err)
			}
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
				return fmt.Errorf("agent %q failed: %s: %w", env.Label, env.Error, exitCode(1))
			}
			return nil
		},
	}
	c.flags(cmd)
	fl := cmd.Flags()
	fl.BoolVar(&detach, "detach", false, "print the workflow id and return without waiting")
	fl.BoolVar(&asJSON, "json", false, "print the root's envelope, with its tree, as JSON")
	fl.StringVar(&workdir, "workdir", "", "working directory of the root agent (default: the agent's, else the current directory)")
	fl.StringVar(&c.db, "db", "", "ledger path (default: as deputy: $DEPUTY_DB, store.path, the data directory)")
	return cmd
}

// record writes the ended tree into the workspace's ledger.
func record(ctx context.Context, w *workspace.Workspace, spec delegate.RunSpec, env *delegate.Envelope) error {
	l, err := w.OpenLedger(ctx)
	if err != nil {
		return err
	}
	defer l.Close()
	w.Engine(l).RecordTree(ctx, spec, env)
	return nil
}

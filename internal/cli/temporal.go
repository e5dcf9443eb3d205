package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// Trees on Temporal run in a binary of their own, deputy-temporal, so that
// the Temporal SDK stays out of this one (docs/durable.md, with the
// measured start-up times). deputy's commands for Temporal — worker, run
// --temporal, runs resume of a run on Temporal — hand the whole command
// line over to it: the same arguments, executed in this process's place.

// temporalBinary is the name of the binary trees on Temporal run with.
const temporalBinary = "deputy-temporal"

type argvKey struct{}

// withArgv keeps the command line deputy was started with, for handing it
// over to deputy-temporal.
func withArgv(ctx context.Context, args []string) context.Context {
	return context.WithValue(ctx, argvKey{}, args)
}

// temporalFlags are the flags deputy accepts for deputy-temporal's sake:
// deputy parses them (so its help shows them and a typo is caught here)
// and deputy-temporal acts on them.
type temporalFlags struct {
	hostPort, namespace, queue string
	detach                     bool
}

// add adds the connection flags; withDetach adds --detach
// (deputy run's).
func (t *temporalFlags) add(cmd *cobra.Command, withDetach bool) {
	fl := cmd.Flags()
	fl.StringVar(&t.hostPort, "temporal", "", "HOST:PORT of a Temporal server: run on Temporal, through the deputy-temporal binary (docs/durable.md)")
	fl.StringVar(&t.namespace, "namespace", "default", "Temporal namespace (with --temporal)")
	fl.StringVar(&t.queue, "task-queue", "deputy", "Temporal task queue the workers poll (with --temporal)")
	if withDetach {
		fl.BoolVar(&t.detach, "detach", false, "with --temporal: print the run's id (its workflow id) and return without waiting; 'deputy runs resume ID' waits for it later")
	}
}

// check refuses the Temporal-only flags without --temporal.
func (t *temporalFlags) check(cmd *cobra.Command) error {
	if t.hostPort != "" {
		return nil
	}
	for _, name := range []string{"namespace", "task-queue", "detach"} {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			return configErrf("--%s is for runs on Temporal: give --temporal HOST:PORT too", name)
		}
	}
	return nil
}

func newWorkerCmd() *cobra.Command {
	t := &temporalFlags{}
	cmd := &cobra.Command{
		Use:   "worker --temporal HOST:PORT",
		Short: "Run a Temporal worker for trees on Temporal (through deputy-temporal)",
		Long: `Run a worker until interrupted: it makes the model calls and tool calls of the
runs on its Temporal task queue ('deputy run --temporal' submits them). Start as
many as you like, on as many machines: a tree's children spread across them.
Each worker loads the configuration of its current directory as deputy does
(agents, settings, providers and keys, tools), so every worker must see the
same agent definitions and working directories.

The Temporal SDK is kept out of deputy: this command is run by the
deputy-temporal binary, found next to deputy's executable or on PATH, with
the same arguments. Build it in a checkout of deputy's source, next to deputy:
  go build -tags temporal -o "$(dirname "$(command -v deputy)")/deputy-temporal" ./cmd/deputy-temporal
or, when deputy was installed with go install:
  go install -tags temporal ./cmd/deputy-temporal

A development server: temporal server start-dev --headless --ip 127.0.0.1
(see docs/durable.md).`,
		Example: `  deputy worker --temporal 127.0.0.1:7233
  deputy worker --temporal temporal.internal:7233 --namespace prod --task-queue deputy`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if t.hostPort == "" {
				return configErrf("worker: --temporal HOST:PORT is required")
			}
			return handOverToTemporal(cmd)
		},
	}
	t.add(cmd, false)
	return cmd
}

// handOverToTemporal runs deputy-temporal with deputy's own arguments in
// this process's place. It returns only when it cannot.
func handOverToTemporal(cmd *cobra.Command) error {
	args, _ := cmd.Context().Value(argvKey{}).([]string)
	path, dir, looked := findTemporal()
	if path == "" {
		return configErrf("%s is needed for trees on Temporal and was not found (looked %s); build it in a checkout of deputy's source with 'go build -tags temporal -o %s ./cmd/deputy-temporal'; see docs/durable.md",
			temporalBinary, strings.Join(looked, " and "), filepath.Join(dir, temporalBinary))
	}
	code, err := execTemporal(path, args)
	if err != nil {
		return &exitError{code: ExitConfig, err: fmt.Errorf("running %s: %w", path, err)}
	}
	if code == 0 {
		return nil
	}
	return &exitError{code: code, err: errors.New(temporalBinary + " failed"), quiet: true}
}

// findTemporal looks for deputy-temporal next to deputy's own executable
// (resolving links, so that a link to deputy finds its real directory),
// then on PATH. When it is in neither, it returns "", deputy's directory
// (where to put it) and where it looked.
func findTemporal() (path, dir string, looked []string) {
	dir = "."
	if self, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(self); err == nil {
			self = real
		}
		dir = filepath.Dir(self)
		p := filepath.Join(dir, temporalBinary)
		if isExecutable(p) {
			return p, dir, nil
		}
		looked = append(looked, "next to deputy in "+dir)
	}
	if p, err := exec.LookPath(temporalBinary); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		return p, dir, nil
	}
	return "", dir, append(looked, "on PATH")
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

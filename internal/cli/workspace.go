package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/telemetry"
	"github.com/deputyhq/deputy/workspace"
)

// cliWorkspace is the user's configuration as package workspace loads it
// for every program, plus what only the command needs: its flags and
// where warnings go.
type cliWorkspace struct {
	*workspace.Workspace
	flags  *globalFlags
	stderr io.Writer
}

// options turns the global flags into the workspace's options.
func (g *globalFlags) options(cwd string) workspace.Options {
	return workspace.Options{Dir: cwd, AgentsDirs: g.agentsDirs, Subqueries: g.subqueries, DB: g.db}
}

func loadWorkspace(cmd *cobra.Command, g *globalFlags) (*cliWorkspace, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	level := g.logLevel
	if level == "" {
		level = os.Getenv("DEPUTY_LOG")
	}
	lvl, err := telemetry.ParseLevel(level)
	if err != nil {
		return nil, configErr(err)
	}
	opts := g.options(cwd)
	opts.Logger = telemetry.NewLogger(cmd.ErrOrStderr(), lvl)
	w, err := workspace.Load(opts)
	if err != nil {
		return nil, configErr(err)
	}
	for _, d := range w.Warnings {
		fmt.Fprintln(cmd.ErrOrStderr(), "deputy: warning:", d)
	}
	return &cliWorkspace{Workspace: w, flags: g, stderr: cmd.ErrOrStderr()}, nil
}

// agent returns a runnable agent and prints the warnings of the agents it
// may run.
func (w *cliWorkspace) agent(name string) (*config.Agent, error) {
	a, warnings, err := w.Agent(name)
	for _, d := range warnings {
		fmt.Fprintln(w.stderr, "deputy: warning:", d)
	}
	if err != nil {
		return nil, configErr(err)
	}
	return a, nil
}

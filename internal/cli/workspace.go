package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/otel"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/claude"
	"github.com/deputyhq/deputy/permission"
	"github.com/deputyhq/deputy/telemetry"
	"github.com/deputyhq/deputy/telemetry/otelenv"
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

// startTracing turns on OpenTelemetry tracing when the OTEL_* variables
// ask for it, and returns what sends the last spans before the command
// exits. Without them it does nothing and costs nothing.
func (w *cliWorkspace) startTracing(ctx context.Context) (func(), error) {
	if !otelenv.Enabled() {
		return func() {}, nil
	}
	tp, err := otelenv.Provider(ctx)
	if err != nil {
		return nil, configErr(fmt.Errorf("OpenTelemetry: %w", err))
	}
	// The exporters report a failed export to OpenTelemetry's error
	// handler, whose default prints it with the standard logger, the
	// collector's answer included; a collector may echo the request's
	// headers, and OTEL_EXPORTER_OTLP_HEADERS holds credentials. The
	// providers' keys are redacted too, as from every other message.
	secrets := w.Models.Secrets().With(otelenv.HeaderValues()...)
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		fmt.Fprintln(w.stderr, "deputy: warning: OpenTelemetry:", secrets.Error(err))
	}))
	w.TracerProvider = tp
	return func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := tp.Shutdown(ctx); err != nil {
			fmt.Fprintln(w.stderr, "deputy: warning: sending traces:", secrets.Error(err))
		}
	}, nil
}

// options turns the global flags into the workspace's options.
func (g *globalFlags) options(cwd string) workspace.Options {
	return workspace.Options{Dir: cwd, AgentsDirs: g.agentsDirs, Subqueries: g.subqueries, DB: g.db, ConfigFile: g.configFile}
}

func loadWorkspace(cmd *cobra.Command, g *globalFlags) (*cliWorkspace, error) {
	return openWorkspace(cmd, g, false)
}

// openWorkspace loads the workspace; lazy loads an agent's file only when
// a run asks for the agent (workspace.Options.Lazy), which is what run and
// chat need.
func openWorkspace(cmd *cobra.Command, g *globalFlags, lazy bool) (*cliWorkspace, error) {
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
	opts.Lazy = lazy
	w, err := workspace.Load(opts)
	if err != nil {
		return nil, configErr(err)
	}
	for _, d := range w.Warnings {
		fmt.Fprintln(cmd.ErrOrStderr(), "deputy: warning:", d)
	}
	if err := g.applyToolFlags(w, cwd); err != nil {
		return nil, err
	}
	return &cliWorkspace{Workspace: w, flags: g, stderr: cmd.ErrOrStderr()}, nil
}

// closeLedger closes the ledger of a command that records runs, and warns
// when what it recorded did not reach the file (store.Store.Close).
func closeLedger(st io.Closer, stderr io.Writer) {
	if err := st.Close(); err != nil {
		fmt.Fprintln(stderr, "deputy: warning:", err)
	}
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

// settingsPaths are the settings files read, lowest precedence first: the
// user's and the project's config.yaml, then --config.
func (g *globalFlags) settingsPaths(cwd string) []string {
	return workspace.SettingsPaths(workspace.Options{Dir: cwd, ConfigFile: g.configFile})
}

// applyToolFlags applies --allow-tool, --deny-tool and --ask-tool: a name
// grants or refuses a tool (Workspace.Grant), and a rule with a pattern
// (deputy's syntax or Claude Code's) joins the run's permission rules:
// --allow-tool's grant their tool and let the calls they match run without
// asking, --deny-tool's refuse those calls, and every --ask-tool rule asks
// before the calls it matches.
func (g *globalFlags) applyToolFlags(w *workspace.Workspace, cwd string) error {
	var allow, deny []string
	var extra permission.Rules
	read := func(flag, v string) ([]permission.Rule, error) {
		rules, err := claude.ReadRule(v, cwd) // deputy's syntax or Claude Code's
		if err != nil {
			return nil, configErrf("%s: %s", flag, err)
		}
		for i := range rules {
			rules[i].Source = flag
		}
		return rules, nil
	}
	for _, v := range g.allowTools {
		rules, err := read("--allow-tool", v)
		if err != nil {
			return err
		}
		for _, r := range rules {
			allow = append(allow, r.Tool)
			if r.Pattern != "" {
				extra.Allow = append(extra.Allow, r)
			}
		}
	}
	for _, v := range g.denyTools {
		rules, err := read("--deny-tool", v)
		if err != nil {
			return err
		}
		for _, r := range rules {
			if r.Pattern == "" {
				deny = append(deny, r.Tool)
			} else {
				extra.Deny = append(extra.Deny, r)
			}
		}
	}
	for _, v := range g.askTools {
		rules, err := read("--ask-tool", v)
		if err != nil {
			return err
		}
		extra.Ask = append(extra.Ask, rules...)
	}
	if g.allowTools == nil {
		allow = nil // not given: no narrowing
	}
	w.Grant = w.Grant.Restrict(allow, deny)
	w.Permissions = workspace.MergeRules(w.Permissions, extra)
	return nil
}

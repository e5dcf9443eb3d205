package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm/providers"
	"github.com/deputyhq/deputy/store"
	"github.com/deputyhq/deputy/telemetry"
	"github.com/deputyhq/deputy/tool"
	"github.com/deputyhq/deputy/tool/builtin"
)

// workspace is everything a command loads from the user's configuration:
// settings, agents, specializations, providers and a logger. Loading
// contacts no provider.
type workspace struct {
	cwd      string
	flags    *globalFlags
	settings *config.Settings
	agents   *config.AgentSet
	// diags are the agent files' diagnostics (load and lint).
	diags  config.Diagnostics
	specs  []config.Specialization
	models *providers.Registry
	logger *slog.Logger
	stderr io.Writer

	// askUser is set by commands that have a person at a terminal.
	askUser func(ctx context.Context, question string) (string, error)
	tools   sync.Map // workdir -> *tool.Registry
}

func loadWorkspace(cmd *cobra.Command, g *globalFlags) (*workspace, error) {
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
	w := &workspace{cwd: cwd, flags: g, stderr: cmd.ErrOrStderr()}
	w.logger = telemetry.NewLogger(w.stderr, lvl)

	w.settings, err = config.LoadSettings(config.SettingsPaths(cwd))
	if err != nil {
		return nil, configErr(err)
	}
	for _, d := range g.agentsDirs {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			return nil, configErrf("--agents-dir %s: not a directory", d)
		}
	}
	var diags config.Diagnostics
	w.agents, diags = config.LoadAgents(config.Dirs(cwd, g.agentsDirs), config.LoadOptions{SkillDirs: config.SkillDirs(cwd)})
	w.diags = append(diags, config.Lint(w.agents, w.lintOptions())...)

	if w.specs, err = w.loadSpecializations(); err != nil {
		return nil, configErr(err)
	}
	idle := w.settings.StreamIdleTimeout
	if idle == 0 {
		idle = -1 // stream_idle_timeout: 0 means never; to the adapters 0 means their default
	}
	w.models = providers.NewRegistry(providers.Config{
		Custom:      customProviders(w.settings),
		Retry:       w.settings.Retry,
		IdleTimeout: idle,
	})
	return w, nil
}

func customProviders(s *config.Settings) map[string]providers.Custom {
	m := map[string]providers.Custom{}
	for name, p := range s.Providers {
		m[name] = providers.Custom{Type: p.Type, BaseURL: p.BaseURL, APIKeyEnv: p.APIKeyEnv}
	}
	return m
}

func (w *workspace) lintOptions() config.LintOptions {
	return config.LintOptions{KnownProvider: w.settings.KnownProvider, KnownTool: w.knownTool, Cwd: w.cwd}
}

// knownTool says whether an agent's tools entry names something deputy
// has: a built-in tool or group, a delegation tool or a specialization.
func (w *workspace) knownTool(name string) bool {
	switch name {
	case tool.FileOps, delegate.ToolCallAgent, delegate.ToolSubagent, delegate.ToolLLMQuery:
		return true
	}
	if slices.Contains(builtin.Names(), name) {
		return true
	}
	return slices.ContainsFunc(w.specs, func(s config.Specialization) bool { return s.ToolName == name })
}

// specFiles are the subqueries.ini files read, lowest precedence first.
func (w *workspace) specFiles() ([]string, error) {
	var files []string
	for _, p := range []string{filepath.Join(config.ConfigDir(), "subqueries.ini"), filepath.Join(w.cwd, ".deputy", "subqueries.ini")} {
		if _, err := os.Stat(p); err == nil {
			files = append(files, p)
		}
	}
	if f := w.flags.subqueries; f != "" {
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("--subqueries %s: %w", f, err)
		}
		files = append(files, f)
	}
	return files, nil
}

// loadSpecializations reads every subqueries.ini; a later file's section
// replaces an earlier one of the same tool name (project over user, the
// flag over both).
func (w *workspace) loadSpecializations() ([]config.Specialization, error) {
	files, err := w.specFiles()
	if err != nil {
		return nil, err
	}
	reserved := func(name string) bool { return name == tool.FileOps || slices.Contains(builtin.Names(), name) }
	var out []config.Specialization
	for _, f := range files {
		specs, err := config.LoadSpecializations(f, config.SpecOptions{Reserved: reserved, SkillDirs: config.SkillDirs(w.cwd)})
		if err != nil {
			return nil, err
		}
		for _, s := range specs {
			out = slices.DeleteFunc(out, func(o config.Specialization) bool { return o.ToolName == s.ToolName })
			out = append(out, s)
		}
	}
	return out, nil
}

// agent returns a runnable agent: it exists, and neither it nor any agent
// it can delegate to has an error. Warnings for those agents are printed.
func (w *workspace) agent(name string) (*config.Agent, error) {
	a, ok := w.agents.Get(name)
	if !ok {
		var names []string
		for _, a := range w.agents.List() {
			names = append(names, a.Name)
		}
		known := "no agents are defined (see 'deputy agents init')"
		if len(names) > 0 {
			known = "known agents: " + strings.Join(names, ", ")
		}
		return nil, configErrf("no agent named %q; %s", name, known)
	}
	var relevant config.Diagnostics
	for _, t := range w.closure(a) {
		relevant = append(relevant, w.diags.ForFile(t.Path)...)
	}
	for _, d := range relevant.Sorted().Warnings() {
		fmt.Fprintln(w.stderr, "deputy: warning:", d)
	}
	if errs := relevant.Sorted().Errors(); len(errs) > 0 {
		return nil, configErr(fmt.Errorf("agent %q cannot run:\n%s", name, errs))
	}
	return a, nil
}

// closure is a and every agent it can reach through sub_agents.
func (w *workspace) closure(a *config.Agent) []*config.Agent {
	seen := map[string]bool{a.Name: true}
	out := []*config.Agent{a}
	for i := 0; i < len(out); i++ {
		for _, n := range out[i].SubAgents {
			if c, ok := w.agents.Get(n); ok && !seen[n] {
				seen[n] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// storePath is where the ledger lives: --db, $DEPUTY_DB, config.yaml's
// store.path, or the data directory.
func (w *workspace) storePath() string {
	if w.flags.db != "" {
		return w.flags.db
	}
	if p := os.Getenv("DEPUTY_DB"); p != "" {
		return p
	}
	return w.settings.StorePath()
}

func (w *workspace) openStore(ctx context.Context) (*store.Store, error) {
	st, err := store.Open(ctx, w.storePath())
	if err != nil {
		return nil, fmt.Errorf("opening the ledger: %w", err)
	}
	return st, nil
}

// builtinTools returns the built-in tools for a workdir, built once.
func (w *workspace) builtinTools(workdir string) *tool.Registry {
	if r, ok := w.tools.Load(workdir); ok {
		return r.(*tool.Registry)
	}
	r := builtin.New(builtin.Options{Workdir: workdir, AskUser: w.askUser, FetchAllowHosts: w.settings.Fetch.AllowHosts})
	actual, _ := w.tools.LoadOrStore(workdir, r)
	return actual.(*tool.Registry)
}

// engine builds the delegation engine from the settings.
func (w *workspace) engine(ledger *store.Store, listeners ...delegate.Listener) *delegate.Engine {
	s := w.settings
	sub := s.Agent.Subagent
	listeners = append([]delegate.Listener{telemetry.Listener(w.logger, sub.TelemetryEnabled)}, listeners...)
	return &delegate.Engine{
		Agents:    w.agents,
		Models:    w.models,
		Tools:     w.builtinTools,
		Ledger:    ledger,
		Listeners: listeners,
		Logger:    w.logger,
		Options: delegate.Options{
			Concurrency:  s.Concurrency,
			MaxTurns:     s.MaxTurns,
			DefaultModel: s.DefaultModel,
			Subagent: delegate.SubagentOptions{MaxDepth: sub.MaxDepth, DefaultMaxTurns: sub.DefaultMaxTurns,
				OutputMaxSize: sub.OutputMaxSize, Persist: sub.PersistenceEnabled, Model: s.SubagentModel()},
			Quotas: delegate.Quotas{MaxExecutions: sub.MaxExecutions, MaxTotalTokens: sub.MaxTotalTokens,
				MaxTotalTime: sub.MaxTotalTime},
			Specializations: w.specs,
			DefaultTools:    builtin.DefaultToolNames(),
		},
	}
}

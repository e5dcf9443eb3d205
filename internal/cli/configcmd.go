package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"deputy/config"
	"deputy/tool"
	"deputy/tool/builtin"
)

func newConfigCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show, create and check deputy's configuration files",
		Long: `Work with deputy's configuration: the settings file config.yaml (the user's,
then the project's .deputy/config.yaml, which overrides it key by key), the
agent directories, and the subqueries.ini files that define [llm_tool_<name>]
specializations.`,
		Example: `  deputy config path
  deputy config init
  deputy config validate`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newConfigPathCmd(g), newConfigInitCmd(), newConfigValidateCmd(g))
	return cmd
}

func newConfigPathCmd(g *globalFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "path",
		Short: "Print where deputy reads its configuration and keeps its ledger",
		Long: `Print every place deputy reads configuration from, in precedence order and
whether each exists: the settings files, the agent directories, the skill
directories, the subqueries.ini files; then the data directory and the ledger
(the SQLite file of runs and sessions) with what chose it: --db, $DEPUTY_DB,
store.path in config.yaml, or the default.`,
		Example: `  deputy config path
  deputy config path --json | jq -r .ledger.path`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := configPaths(cmd, g)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), p)
			}
			printConfigPaths(cmd.OutOrStdout(), p)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the paths as JSON")
	return cmd
}

// pathEntry is one place deputy looks.
type pathEntry struct {
	Scope  string `json:"scope"`
	Path   string `json:"path"`
	Exists bool   `json:"exists"`
}

// ledgerEntry is the ledger file and what chose it.
type ledgerEntry struct {
	Path   string `json:"path"`
	From   string `json:"from"`
	Exists bool   `json:"exists"`
}

type pathsView struct {
	Settings   []pathEntry `json:"settings"`
	AgentDirs  []pathEntry `json:"agent_dirs"`
	SkillDirs  []pathEntry `json:"skill_dirs"`
	Subqueries []pathEntry `json:"subqueries"`
	DataDir    string      `json:"data_dir"`
	Ledger     ledgerEntry `json:"ledger"`
	// SettingsError is set when the settings do not load; the ledger is
	// then where it would be without them.
	SettingsError string `json:"settings_error,omitempty"`
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func configPaths(cmd *cobra.Command, g *globalFlags) (*pathsView, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	v := &pathsView{DataDir: config.DataDir()}
	settingsPaths := config.SettingsPaths(cwd)
	for i, p := range settingsPaths {
		// SettingsPaths lists the user file first and the project's last.
		scope := config.SourceUser
		if i == len(settingsPaths)-1 && len(settingsPaths) > 1 {
			scope = config.SourceProject
		}
		v.Settings = append(v.Settings, pathEntry{Scope: scope, Path: p, Exists: exists(p)})
	}
	for _, d := range config.Dirs(cwd, g.agentsDirs) {
		v.AgentDirs = append(v.AgentDirs, pathEntry{Scope: d.Source, Path: d.Path, Exists: exists(d.Path)})
	}
	for i, d := range config.SkillDirs(cwd) {
		scope := config.SourceProject
		if i > 0 {
			scope = config.SourceUser
		}
		p := filepath.Join(d, "skills")
		v.SkillDirs = append(v.SkillDirs, pathEntry{Scope: scope, Path: p, Exists: exists(p)})
	}
	if c := config.ConfigDir(); c != "" {
		p := filepath.Join(c, "subqueries.ini")
		v.Subqueries = append(v.Subqueries, pathEntry{Scope: config.SourceUser, Path: p, Exists: exists(p)})
	}
	p := filepath.Join(cwd, config.ProjectDirName, "subqueries.ini")
	v.Subqueries = append(v.Subqueries, pathEntry{Scope: config.SourceProject, Path: p, Exists: exists(p)})
	if g.subqueries != "" {
		abs, _ := filepath.Abs(g.subqueries)
		v.Subqueries = append(v.Subqueries, pathEntry{Scope: config.SourceFlag, Path: abs, Exists: exists(abs)})
	}

	s, err := config.LoadSettings(settingsPaths)
	if err != nil {
		// The paths are most wanted when something is broken, so a bad
		// settings file is reported but does not stop the listing.
		v.SettingsError = err.Error()
		s = config.DefaultSettings()
	}
	w := &workspace{cwd: cwd, flags: g, settings: s}
	v.Ledger = ledgerEntry{Path: w.storePath(), From: ledgerSource(g, s)}
	v.Ledger.Exists = exists(v.Ledger.Path)
	return v, nil
}

// ledgerSource says what chose the ledger path, in workspace.storePath's
// order.
func ledgerSource(g *globalFlags, s *config.Settings) string {
	switch {
	case g.db != "":
		return "--db"
	case os.Getenv("DEPUTY_DB") != "":
		return "$DEPUTY_DB"
	case s.Store.Path != "":
		return "store.path"
	}
	return "default"
}

func printConfigPaths(out io.Writer, v *pathsView) {
	section := func(title string, entries []pathEntry) {
		fmt.Fprintln(out, title)
		tw := newTable(out)
		for _, e := range entries {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", e.Scope, e.Path, existsWord(e.Exists))
		}
		tw.Flush()
	}
	section("settings (a later file overrides an earlier one key by key):", v.Settings)
	section("agent directories (a later directory shadows an earlier one):", v.AgentDirs)
	section("skill directories (the first match wins):", v.SkillDirs)
	section("subqueries.ini (a later file replaces an earlier one's sections):", v.Subqueries)
	fmt.Fprintf(out, "data directory: %s\n", v.DataDir)
	fmt.Fprintf(out, "ledger: %s (%s, %s)\n", v.Ledger.Path, v.Ledger.From, existsWord(v.Ledger.Exists))
	if v.SettingsError != "" {
		fmt.Fprintf(out, "\nThe settings do not load (see 'deputy config validate'):\n%s\n", indent(v.SettingsError, "  "))
	}
}

func existsWord(ok bool) string {
	if ok {
		return "exists"
	}
	return "missing"
}

func newConfigInitCmd() *cobra.Command {
	var project bool
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write a commented config.yaml to start from",
		Long: `Write a commented config.yaml holding every setting at its default value, so
it changes nothing until edited. It goes to the user's configuration directory
($XDG_CONFIG_HOME/deputy/, default ~/.config/deputy/), or with --project to
.deputy/config.yaml under the current directory. An existing file is never
overwritten.`,
		Example: `  deputy config init
  deputy config init --project`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var path string
			if project {
				path = filepath.Join(config.ProjectDirName, "config.yaml")
			} else {
				dir := config.ConfigDir()
				if dir == "" {
					return configErrf("cannot find the user configuration directory: set HOME or XDG_CONFIG_HOME, or use --project")
				}
				path = filepath.Join(dir, "config.yaml")
			}
			if err := writeNewFile(path, config.InitSettingsYAML()); err != nil {
				return configErr(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "created %s\n", path)
			return nil
		},
	}
	cmd.Flags().BoolVar(&project, "project", false, "write .deputy/config.yaml in the current directory instead")
	return cmd
}

func newConfigValidateCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Check the settings, agents and subqueries.ini files",
		Long: `Load everything deputy reads before a run and report every problem at once:
the settings files (unknown keys, values out of range such as
agent.subagent.max_depth outside 1-10), every agent file (as 'deputy agents
lint'), and the subqueries.ini files. No model is called.

It prints the files it checked and the effective settings, the defaults
included (agent.subagent.max_depth: 3, ...), then "ok", or the problems and
exit code 2. Custom providers are shown with the name of the environment
variable holding their key and whether it is set, never the key.`,
		Example: `  deputy config validate
  deputy config validate --subqueries ./team.ini`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return validateConfig(cmd, g) },
	}
	return cmd
}

// validation is what 'config validate' found.
type validation struct {
	settings *config.Settings // nil when the settings do not load
	checked  []pathEntry      // files read, by kind
	diags    config.Diagnostics
	specs    int
}

func validateConfig(cmd *cobra.Command, g *globalFlags) error {
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	v := collectValidation(cwd, g)
	out := cmd.OutOrStdout()
	fmt.Fprintln(out, "checked:")
	tw := newTable(out)
	for _, c := range v.checked {
		fmt.Fprintf(tw, "  %s\t%s\n", c.Scope, displayPath(cwd, c.Path))
	}
	if len(v.checked) == 0 {
		fmt.Fprintln(tw, "  (no configuration files; every setting is at its default)")
	}
	tw.Flush()
	if v.settings != nil {
		fmt.Fprintln(out, "\neffective settings:")
		printEffectiveSettings(out, v.settings)
	}
	diags := v.diags
	if len(diags) > 0 {
		fmt.Fprintln(out)
		printDiagnostics(out, cwd, diags)
	}
	if n := len(diags.Errors()); n > 0 {
		return configErrf("config validate: %s", plural(n, "error"))
	}
	fmt.Fprintln(out, "ok")
	return nil
}

// collectValidation loads what loadWorkspace loads, but keeps going past
// each failure so that every problem is reported in one pass.
func collectValidation(cwd string, g *globalFlags) *validation {
	v := &validation{}
	var diags config.Diagnostics
	addErr := func(err error) {
		var ve *config.ValidationError
		if errors.As(err, &ve) {
			diags = append(diags, ve.Diagnostics...)
			return
		}
		diags = append(diags, config.Diagnostic{Severity: config.Error, Message: err.Error()})
	}

	s, err := config.LoadSettings(config.SettingsPaths(cwd))
	lintSettings := s
	if err != nil {
		addErr(err)
		lintSettings = config.DefaultSettings()
	} else {
		v.settings = s
		for _, f := range s.Files {
			v.checked = append(v.checked, pathEntry{Scope: "settings", Path: f, Exists: true})
		}
	}
	w := &workspace{cwd: cwd, flags: g, settings: lintSettings}

	for _, d := range g.agentsDirs {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			addErr(fmt.Errorf("--agents-dir %s: not a directory", d))
		}
	}

	specFiles, err := w.specFiles()
	if err != nil {
		addErr(err)
	}
	specsOK := err == nil
	for _, f := range specFiles {
		v.checked = append(v.checked, pathEntry{Scope: "subqueries", Path: f, Exists: true})
		if _, err := config.LoadSpecializations(f, config.SpecOptions{Reserved: reservedToolName, SkillDirs: config.SkillDirs(cwd)}); err != nil {
			addErr(err)
			specsOK = false
		}
	}
	if specsOK {
		// Loaded once more through the workspace, for the reserved tool
		// names and the merging rules a run applies.
		if w.specs, err = w.loadSpecializations(); err != nil {
			addErr(err)
		}
		v.specs = len(w.specs)
	}

	agents, agentDiags := config.LoadAgents(config.Dirs(cwd, g.agentsDirs), config.LoadOptions{SkillDirs: config.SkillDirs(cwd)})
	opts := w.lintOptions()
	if v.settings == nil {
		// Without settings the custom providers are unknown; flagging every
		// model that names one would bury the real error.
		opts.KnownProvider = func(string) bool { return true }
	}
	agentDiags = append(agentDiags, config.Lint(agents, opts)...)
	diags = append(diags, agentDiags...)
	for _, a := range agents.List() {
		for _, h := range agents.Shadowed(a.Name) {
			v.checked = append(v.checked, pathEntry{Scope: "agent", Path: h.Path, Exists: true})
		}
		v.checked = append(v.checked, pathEntry{Scope: "agent", Path: a.Path, Exists: true})
	}
	v.diags = diags.Sorted()
	return v
}

// printEffectiveSettings prints the merged settings as dotted keys, so a
// user sees the defaults as well as what the files set. Custom providers
// show the name of their key's variable and whether it is set, never its
// value.
func printEffectiveSettings(out io.Writer, s *config.Settings) {
	kv := func(key string, value any, note string) {
		if note != "" {
			fmt.Fprintf(out, "  %s: %v  # %s\n", key, value, note)
			return
		}
		fmt.Fprintf(out, "  %s: %v\n", key, value)
	}
	dm := s.DefaultModel
	kv("default_model", fmt.Sprintf("%q", dm), noteIf(dm == "", "not set: agents must name a model"))
	for _, name := range s.ProviderNames() {
		p := s.Providers[name]
		key := "no key"
		if p.APIKeyEnv != "" {
			state := "not set"
			if os.Getenv(p.APIKeyEnv) != "" {
				state = "set"
			}
			key = fmt.Sprintf("key in $%s (%s)", p.APIKeyEnv, state)
		}
		kv("providers."+name, p.BaseURL, p.Type+", "+key)
	}
	kv("concurrency", s.Concurrency, "")
	kv("max_turns", s.MaxTurns, "")
	kv("retry.max_attempts", s.Retry.MaxAttempts, "")
	kv("retry.base_delay", s.Retry.BaseDelay, "")
	kv("retry.max_delay", s.Retry.MaxDelay, "")
	kv("retry.max_elapsed", s.Retry.MaxElapsed, "")
	kv("stream_idle_timeout", s.StreamIdleTimeout, noteIf(s.StreamIdleTimeout == 0, "never"))
	kv("fetch.allow_hosts", s.Fetch.AllowHosts, "")
	kv("store.path", fmt.Sprintf("%q", s.Store.Path), noteIf(s.Store.Path == "", "the default"))
	sa := s.Agent.Subagent
	kv("agent.subagent.max_depth", sa.MaxDepth, "")
	kv("agent.subagent.default_max_turns", sa.DefaultMaxTurns, "")
	kv("agent.subagent.output_max_size", sa.OutputMaxSize, "")
	kv("agent.subagent.telemetry_enabled", sa.TelemetryEnabled, "")
	kv("agent.subagent.persistence_enabled", sa.PersistenceEnabled, "")
	kv("agent.subagent.max_executions", sa.MaxExecutions, noteIf(sa.MaxExecutions == 0, "unlimited"))
	kv("agent.subagent.max_total_tokens", sa.MaxTotalTokens, noteIf(sa.MaxTotalTokens == 0, "unlimited"))
	kv("agent.subagent.max_total_time", sa.MaxTotalTime, noteIf(sa.MaxTotalTime == 0, "unlimited"))
	kv("agent.subagent.provider", fmt.Sprintf("%q", sa.Provider), "")
	kv("agent.subagent.model", fmt.Sprintf("%q", sa.Model), noteIf(s.SubagentModel() == "", "the parent's model"))
}

// noteIf returns note when cond holds, else "".
func noteIf(cond bool, note string) string {
	if cond {
		return note
	}
	return ""
}

// reservedToolName reports whether a specialization may not take name
// because a built-in tool has it (as the workspace loader decides).
func reservedToolName(name string) bool {
	return name == tool.FileOps || slices.Contains(builtin.Names(), name)
}

package cli

// deputy config validate: every configuration file checked in one pass.

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/claude"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/capability"
	"github.com/deputyhq/deputy/llm/price"
	"github.com/deputyhq/deputy/permission"
	"github.com/deputyhq/deputy/workspace"
)

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
exit code 2. Custom providers (with the OpenAI API each speaks, wire_api)
and the search API are shown with the name of the environment variable
holding their key and whether it is set, never the key.`,
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

	s, err := workspace.LoadSettings(g.settingsPaths(cwd))
	lintSettings := s
	if err != nil {
		addErr(err)
		lintSettings = config.DefaultSettings()
	} else {
		claude.ApplySessionModel(s, cwd)
		v.settings = s
		// What the files hold that deputy accepts but does not honour
		// (an xzatoma section, a key in the file): said here as a run says it.
		diags = append(diags, s.Warnings...)
		for _, f := range s.Files {
			v.checked = append(v.checked, pathEntry{Scope: "settings", Path: f, Exists: true})
		}
	}
	w := &workspace.Workspace{Dir: cwd, Settings: lintSettings}

	for _, d := range g.agentsDirs {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			addErr(fmt.Errorf("--agents-dir %s: not a directory", d))
		}
	}

	specFiles, err := workspace.SpecializationFiles(g.options(cwd))
	if err != nil {
		addErr(err)
	}
	specsOK := err == nil
	for _, f := range specFiles {
		v.checked = append(v.checked, pathEntry{Scope: "subqueries", Path: f, Exists: true})
		warn := func(d config.Diagnostic) { diags = append(diags, d) }
		if _, err := workspace.LoadSpecializationsFile(f, cwd, warn); err != nil {
			addErr(err)
			specsOK = false
		}
	}
	if specsOK {
		// Loaded once more through the workspace, for the reserved tool
		// names and the merging rules a run applies.
		if w.Specializations, err = workspace.LoadSpecializations(g.options(cwd)); err != nil {
			addErr(err)
		}
		v.specs = len(w.Specializations)
	}

	agents, agentDiags := workspace.LoadAgents(cwd, g.agentsDirs)
	opts := w.LintOptions()
	if v.settings == nil {
		// Without settings the custom providers are unknown; flagging every
		// model that names one would bury the real error.
		opts.KnownProvider = func(string) bool { return true }
	}
	agentDiags = append(agentDiags, config.Lint(agents, opts)...)
	if v.settings != nil {
		agentDiags = append(agentDiags, config.LintRootModels(agents, v.settings.DefaultModel)...)
	}
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
	kv := settingLine(out)
	dm := s.DefaultModel
	note := noteIf(dm == "", "not set: agents must name a model")
	if s.DefaultModelFrom != "" {
		note = s.DefaultModelFrom
	}
	kv("default_model", fmt.Sprintf("%q", dm), note)
	printProviders(kv, s)
	kv("concurrency", s.Concurrency, noteIf(s.Concurrency == 0, "no cap: each provider's adaptive limit"))
	kv("max_turns", s.MaxTurns, "")
	printPrices(kv, s)
	caps := overlaid(capability.AsOf, len(s.Capabilities))
	kv("capabilities", caps, "")
	kv("retry.max_attempts", s.Retry.MaxAttempts, "")
	kv("retry.base_delay", s.Retry.BaseDelay, "")
	kv("retry.max_delay", s.Retry.MaxDelay, "")
	kv("retry.max_elapsed", s.Retry.MaxElapsed, "")
	kv("stream_idle_timeout", s.StreamIdleTimeout, noteIf(s.StreamIdleTimeout == 0, "never"))
	kv("response_timeout", s.ResponseTimeout, noteIf(s.ResponseTimeout == 0, "never"))
	kv("approval_timeout", s.ApprovalTimeout, "")
	kv("fetch.allow_hosts", s.Fetch.AllowHosts, "")
	printSearch(kv, s.Search)
	kv("terminal.env", s.Terminal.Env, "")
	kv("terminal.network", s.Terminal.Network, "")
	kv("terminal.read_paths", s.Terminal.ReadPaths, "")
	kv("terminal.write_paths", s.Terminal.WritePaths, "")
	kv("terminal.sandbox", s.Terminal.Sandbox, "")
	printPermissions(kv, s.Permissions)
	kv("limits.stdin_max_bytes", s.Limits.StdinMaxBytes, "")
	kv("limits.tool_output_max_bytes", s.Limits.ToolOutputMaxBytes, "")
	kv("limits.read_file_max_bytes", s.Limits.ReadFileMaxBytes, "")
	kv("limits.fetch_max_bytes", s.Limits.FetchMaxBytes, "")
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

// settingPrinter prints one effective setting: its key, its value and,
// when there is one, a note saying what the value means.
type settingPrinter func(key string, value any, note string)

func settingLine(out io.Writer) settingPrinter {
	return func(key string, value any, note string) {
		if note != "" {
			fmt.Fprintf(out, "  %s: %v  # %s\n", key, value, note)
			return
		}
		fmt.Fprintf(out, "  %s: %v\n", key, value)
	}
}

// printProviders prints the custom providers, with their key's variable
// (never the key) and the OpenAI API each speaks when wire_api says, and
// the wire_api of the built-in providers that set it.
func printProviders(kv settingPrinter, s *config.Settings) {
	for _, name := range s.ProviderNames() {
		p := s.Providers[name]
		note := p.Type + ", no key"
		if p.APIKeyEnv != "" {
			state := "not set"
			if os.Getenv(p.APIKeyEnv) != "" {
				state = "set"
			}
			note = fmt.Sprintf("%s, key in $%s (%s)", p.Type, p.APIKeyEnv, state)
		}
		if p.WireAPI != "" {
			note += ", wire_api " + p.WireAPI
		}
		kv("providers."+name, llm.RedactURL(p.BaseURL), note)
	}
	for _, name := range slices.Sorted(maps.Keys(s.BuiltinWireAPI)) {
		kv("providers."+name+".wire_api", s.BuiltinWireAPI[name], "")
	}
}

// printPrices prints the price table's date and each entry the files set.
func printPrices(kv settingPrinter, s *config.Settings) {
	kv("prices", overlaid(price.AsOf, len(s.Prices)), "")
	for _, model := range slices.Sorted(maps.Keys(s.Prices)) {
		p := s.Prices[model]
		v := fmt.Sprintf("{input: %g, output: %g", p.Input, p.Output)
		if p.CacheRead != 0 {
			v += fmt.Sprintf(", cache_read: %g", p.CacheRead)
		}
		if p.CacheWrite != 0 {
			v += fmt.Sprintf(", cache_write: %g", p.CacheWrite)
		}
		if p.WebSearch != 0 {
			v += fmt.Sprintf(", web_search: %g", p.WebSearch)
		}
		kv("prices."+model, v+"}", "")
	}
}

// printSearch prints the search section: which search web_search uses.
func printSearch(kv settingPrinter, q config.SearchSettings) {
	kv("search.mode", q.Mode, "")
	kv("search.api", fmt.Sprintf("%q", q.API), noteIf(q.API == "", "none: only the providers' own searches"))
	if q.URL != "" {
		kv("search.url", llm.RedactURL(q.URL), "")
	}
	if q.API == "brave" {
		env := cmp.Or(q.APIKeyEnv, config.DefaultBraveKeyEnv)
		state := "not set"
		if os.Getenv(env) != "" {
			state = "set"
		}
		kv("search.api_key_env", env, "Brave's key, "+state)
	}
	kv("search.max_results", q.MaxResults, "")
}

// printPermissions prints the grant (a list not set permits everything)
// and config.yaml's permission rules and mode.
func printPermissions(kv settingPrinter, p config.PermissionSettings) {
	kv("permissions.tools", listOrAll(p.Tools), noteIf(p.Tools == nil, "not set: every tool"))
	kv("permissions.deny_tools", orEmpty(p.DenyTools), "")
	kv("permissions.paths", listOrAll(p.Paths), noteIf(p.Paths == nil, "not set: anywhere"))
	kv("permissions.hosts", listOrAll(p.Hosts), noteIf(p.Hosts == nil, "not set: as fetch.allow_hosts"))
	rules := p.Rules
	kv("permissions.allow", ruleTexts(rules.Allow), "")
	kv("permissions.ask", ruleTexts(rules.Ask), "")
	kv("permissions.deny", ruleTexts(rules.Deny), "")
	kv("permissions.mode", fmt.Sprintf("%q", rules.Mode), noteIf(rules.Mode == "", "none: what no rule matches runs"))
}

// listOrAll is a grant's list as printed: "-" when it is not set.
func listOrAll(xs []string) any {
	if xs == nil {
		return "-"
	}
	return xs
}

// noteIf returns note when cond holds, else "".
func noteIf(cond bool, note string) string {
	if cond {
		return note
	}
	return ""
}

// overlaid describes an embedded table of the given date with n entries
// of config.yaml laid over it.
func overlaid(asOf string, n int) string {
	switch n {
	case 0:
		return "the embedded table of " + asOf
	case 1:
		return "the embedded table of " + asOf + ", with 1 entry laid over it"
	}
	return fmt.Sprintf("the embedded table of %s, with %d entries laid over it", asOf, n)
}

// ruleTexts are permission rules as written in deputy's syntax.
func ruleTexts(rules []permission.Rule) []string {
	out := []string{}
	for _, r := range rules {
		out = append(out, r.String())
	}
	return out
}

package cli

// deputy agents show: an agent's resolved definition.

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/llm/price"
	"github.com/deputyhq/deputy/permission"
	"github.com/deputyhq/deputy/tool/builtin"
)

func newAgentsShowCmd(g *globalFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show <name>",
		Short: "Show an agent's resolved definition",
		Long: `Show an agent as deputy will run it: its model, system prompt, skill (name and
the SKILL.md it resolved to), file globs, working directory, sub-agents and
their limits (sub_agents_config, with the defaults filled in), model
parameters, its budget ([budget]: tokens, usd, time, turns), tools and turn
limit, its isolation and permission rules when it sets them, the file it came
from and any definitions it shadows. Problems found in
its file are listed at the end.`,
		Example: `  deputy agents show reviewer
  deputy agents show reviewer --json | jq .sub_agents_config`,
		Args: cobra.ExactArgs(1),
		ValidArgsFunction: func(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
			return agentNames(cmd, g), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			w, err := loadWorkspace(cmd, g)
			if err != nil {
				return err
			}
			a, ok := w.Agents.Get(args[0])
			if !ok {
				return configErr(unknownAgentError(w, args[0]))
			}
			v := detailAgent(w, a)
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), v)
			}
			printAgentDetail(cmd.OutOrStdout(), w, v)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the definition as JSON")
	return cmd
}

// agentNames lists the visible agents for shell completion; it stays
// silent when the workspace does not load.
func agentNames(cmd *cobra.Command, g *globalFlags) []string {
	w, err := loadWorkspace(cmd, g)
	if err != nil {
		return nil
	}
	var names []string
	for _, a := range w.Agents.List() {
		names = append(names, a.Name)
	}
	return names
}

// unknownAgentError says why there is no agent called name: its file did
// not load (the file's errors, as run gives them), or no file defines it.
func unknownAgentError(w *cliWorkspace, name string) error {
	if b, ok := w.Agents.BrokenFile(name); ok {
		return fmt.Errorf("agent %q cannot be loaded from %s:\n%s", name, b.Path, b.Diagnostics.Errors())
	}
	var names []string
	for _, a := range w.Agents.List() {
		names = append(names, a.Name)
	}
	if len(names) == 0 {
		return fmt.Errorf("no agent named %q; no agents are defined (see 'deputy agents init')", name)
	}
	return fmt.Errorf("no agent named %q; known agents: %s", name, strings.Join(names, ", "))
}

// agentDetail is the resolved definition 'agents show' prints.
type agentDetail struct {
	Name        string     `json:"name"`
	Description string     `json:"description"`
	Source      string     `json:"source"`
	Path        string     `json:"path"`
	Shadows     []agentRef `json:"shadows"`
	Model       string     `json:"model"`
	// RootModel is what an agent that inherits runs on as a root without
	// a default_model (Claude Code's default for its files); "" for none.
	RootModel       string        `json:"root_model,omitempty"`
	SystemPrompt    string        `json:"system_prompt"`
	Skill           *skillView    `json:"skill"`
	Files           []string      `json:"files"`
	Workdir         string        `json:"workdir"`
	WorkdirResolved string        `json:"workdir_resolved"`
	Subagents       []string      `json:"sub_agents"`
	SubagentsConfig subAgentsView `json:"sub_agents_config"`
	Params          paramsView    `json:"params"`
	// Budget is the agent's own [budget] (nil when it sets none); a run
	// may narrow it further (--max-tokens, an ancestor's budget).
	Budget *budgetView `json:"budget"`
	// budgetUnpriced: the agent caps dollars on a model the price table
	// does not know, so that cap is not enforced.
	budgetUnpriced bool
	Tools          []string `json:"tools"`
	ToolsDefault   bool     `json:"tools_default"`
	// DisallowedTools are taken out of Tools (Claude Code's
	// disallowedTools, an opencode permission that denies).
	DisallowedTools []string `json:"disallowed_tools,omitempty"`
	// MCPServers are the MCP servers the agent declares (see docs/mcp.md).
	MCPServers []string `json:"mcp_servers,omitempty"`
	// Isolation is the agent's isolation ("worktree" or "none"), "" when
	// it sets none and its tree decides (run --isolation).
	Isolation string `json:"isolation,omitempty"`
	// Permissions are the agent's own permission rules and mode, which
	// decide its calls and its subtree's; nil when it has none.
	Permissions     *permission.Rules `json:"permissions,omitempty"`
	MaxTurns        int               `json:"max_turns"`
	MaxTurnsDefault bool              `json:"max_turns_default"`
	Diagnostics     []diagnosticRow   `json:"diagnostics"`
}

type skillView struct {
	Ref      string `json:"ref"`
	Name     string `json:"name,omitempty"`
	Path     string `json:"path,omitempty"`
	Resolved bool   `json:"resolved"`
}

type subAgentsView struct {
	MaxDepth       int  `json:"max_depth"`
	Parallel       bool `json:"parallel"`
	TimeoutSeconds int  `json:"timeout_seconds"`
}

// budgetView is an agent's [budget]; an unset cap is null.
type budgetView struct {
	Tokens      *int64   `json:"tokens"`
	USD         *float64 `json:"usd"`
	TimeSeconds *float64 `json:"time_seconds"`
	Turns       *int     `json:"turns"`
}

// budgetOf is the view of b, nil when b caps nothing.
func budgetOf(b config.Budget) *budgetView {
	if b == (config.Budget{}) {
		return nil
	}
	var v budgetView
	if b.Tokens > 0 {
		v.Tokens = &b.Tokens
	}
	if b.USD > 0 {
		v.USD = &b.USD
	}
	if b.Time > 0 {
		secs := b.Time.Seconds()
		v.TimeSeconds = &secs
	}
	if b.Turns > 0 {
		v.Turns = &b.Turns
	}
	return &v
}

type paramsView struct {
	Temperature *float64 `json:"temperature"`
	MaxTokens   *int     `json:"max_tokens"`
	Effort      *string  `json:"effort"`
}

func detailAgent(w *cliWorkspace, a *config.Agent) agentDetail {
	s := summarizeAgent(w, a)
	d := agentDetail{Name: a.Name, Description: a.Description, Source: a.Source, Path: a.Path, Shadows: s.Shadows,
		Model: modelOrInherit(a.Model), RootModel: a.RootModel, SystemPrompt: a.SystemPrompt, Files: orEmpty(a.Files),
		Workdir: a.Workdir, WorkdirResolved: a.ResolveWorkdir(w.Dir), Subagents: orEmpty(a.Subagents),
		SubagentsConfig: subAgentsView{MaxDepth: a.SubagentsConfig.MaxDepth, Parallel: a.SubagentsConfig.Parallel,
			TimeoutSeconds: int(a.SubagentsConfig.Timeout.Seconds())},
		Params: paramsView{Temperature: a.Params.Temperature, MaxTokens: a.Params.MaxTokens, Effort: nonEmpty(a.Params.Effort)},
		Tools:  a.Tools, MaxTurns: a.MaxTurns, Diagnostics: diagnosticRows(w.Diagnostics.ForFile(a.Path).Sorted())}
	d.Budget = budgetOf(a.Budget)
	d.Isolation, d.DisallowedTools = a.Isolation, a.DisallowedTools
	if !a.Permissions.Empty() {
		d.Permissions = &a.Permissions
	}
	if a.Budget.USD > 0 && a.Model != "" && a.Model != config.ModelInherit {
		_, priced := price.NewTable(w.Settings.Prices).Lookup(a.Model)
		d.budgetUnpriced = !priced
	}
	if a.Skill != "" {
		d.Skill = &skillView{Ref: a.Skill}
		if sk := a.SkillDoc; sk != nil {
			d.Skill.Name, d.Skill.Path, d.Skill.Resolved = sk.Name, sk.Path, true
		}
	}
	// nil tools means "not set": the engine then gives the built-in
	// defaults, which is what a user needs to see here.
	if a.Tools == nil {
		d.Tools, d.ToolsDefault = builtin.DefaultToolNames(), true
	}
	if a.MaxTurns == 0 {
		d.MaxTurns, d.MaxTurnsDefault = w.Settings.MaxTurns, true
	}
	for _, m := range a.MCPServers {
		desc := m.Name + " (" + m.Transport + ")"
		if m.Ref {
			desc = m.Name + " (configured elsewhere)"
		}
		d.MCPServers = append(d.MCPServers, desc)
	}
	return d
}

// budgetText is d's budget on one line, "" when it has none.
func budgetText(d agentDetail) string {
	b := d.Budget
	if b == nil {
		return ""
	}
	var parts []string
	if b.Tokens != nil {
		parts = append(parts, fmt.Sprintf("tokens %d", *b.Tokens))
	}
	if b.USD != nil {
		usd := fmt.Sprintf("usd $%g", *b.USD)
		if d.budgetUnpriced {
			usd += fmt.Sprintf(" (not enforced: %s has no price)", d.Model)
		}
		parts = append(parts, usd)
	}
	if b.TimeSeconds != nil {
		parts = append(parts, "time "+time.Duration(*b.TimeSeconds*float64(time.Second)).String())
	}
	if b.Turns != nil {
		parts = append(parts, fmt.Sprintf("turns %d", *b.Turns))
	}
	return strings.Join(parts, ", ")
}

func printAgentDetail(out io.Writer, w *cliWorkspace, d agentDetail) {
	tw := newTable(out)
	row := func(k, v string) { fmt.Fprintf(tw, "%s:\t%s\n", k, v) }
	row("name", d.Name)
	row("description", orDash(d.Description))
	row("file", fmt.Sprintf("%s (%s)", d.Path, d.Source))
	for _, s := range d.Shadows {
		row("shadows", fmt.Sprintf("%s (%s)", s.Path, s.Source))
	}
	row("model", modelText(w.Settings, d))
	maxTurns := fmt.Sprint(d.MaxTurns)
	if d.MaxTurnsDefault {
		maxTurns += " (default)"
	}
	row("max_turns", maxTurns)
	row("workdir", workdirText(d))
	row("skill", skillText(d.Skill))
	row("files", orDash(strings.Join(d.Files, ", ")))
	row("tools", toolsText(d))
	if len(d.MCPServers) > 0 {
		row("mcp_servers", strings.Join(d.MCPServers, ", "))
	}
	row("sub_agents", orDash(strings.Join(d.Subagents, ", ")))
	row("sub_agents_config", fmt.Sprintf("max_depth %d, parallel %v, timeout %ds",
		d.SubagentsConfig.MaxDepth, d.SubagentsConfig.Parallel, d.SubagentsConfig.TimeoutSeconds))
	row("params", orDash(paramsText(d.Params)))
	row("budget", orDash(budgetText(d)))
	if d.Isolation != "" {
		row("isolation", d.Isolation)
	}
	if d.Permissions != nil {
		row("permissions", strings.Join(d.Permissions.Lines(), ", "))
	}
	tw.Flush()
	fmt.Fprintln(out, "\nsystem prompt:")
	if strings.TrimSpace(d.SystemPrompt) == "" {
		fmt.Fprintln(out, "  (empty)")
	} else {
		fmt.Fprintln(out, indent(strings.TrimRight(d.SystemPrompt, "\n"), "  "))
	}
	if len(d.Diagnostics) > 0 {
		fmt.Fprintln(out, "\nproblems:")
		for _, r := range d.Diagnostics {
			fmt.Fprintf(out, "  %s: %s\n", r.Severity, config.Diagnostic{File: r.File, Line: r.Line, Key: r.Key, Message: r.Message})
		}
	}
}

// modelText is the agent's model; for inherit, what that means at the
// root with these settings.
func modelText(s *config.Settings, d agentDetail) string {
	if d.Model != config.ModelInherit {
		return d.Model
	}
	model := "inherit (the parent's model; at the root, default_model"
	switch dm := s.DefaultModel; {
	case dm != "" && dm != config.ModelInherit:
		model += " " + dm
		if from := s.DefaultModelFrom; from != "" {
			model += ": " + from
		}
		return model + ")"
	case d.RootModel != "":
		return model + ", which is not set, so " + d.RootModel + ", its origin's default)"
	}
	return model + ", which is not set)"
}

func workdirText(d agentDetail) string {
	if d.Workdir == "" {
		return "(the current directory)"
	}
	if d.WorkdirResolved != d.Workdir {
		return d.Workdir + " → " + d.WorkdirResolved
	}
	return d.Workdir
}

func skillText(sk *skillView) string {
	switch {
	case sk == nil:
		return "-"
	case sk.Resolved:
		return fmt.Sprintf("%s (%s)", sk.Name, sk.Path)
	}
	return sk.Ref + " (not found)"
}

func toolsText(d agentDetail) string {
	text := toolsListText(d)
	if len(d.DisallowedTools) > 0 {
		text += ", except " + strings.Join(d.DisallowedTools, ", ")
	}
	return text
}

func toolsListText(d agentDetail) string {
	switch {
	case d.ToolsDefault:
		return "default: " + strings.Join(d.Tools, ", ")
	case len(d.Tools) == 0:
		return "(none)"
	case len(d.Tools) == 1 && d.Tools[0] == "*":
		return "* (every tool the run allows)"
	}
	return strings.Join(d.Tools, ", ")
}

func paramsText(p paramsView) string {
	var parts []string
	if t := p.Temperature; t != nil {
		parts = append(parts, fmt.Sprintf("temperature %g", *t))
	}
	if m := p.MaxTokens; m != nil {
		parts = append(parts, fmt.Sprintf("max_tokens %d", *m))
	}
	if e := p.Effort; e != nil {
		parts = append(parts, "effort "+*e)
	}
	return strings.Join(parts, ", ")
}

// nonEmpty is &s, or nil for "": null in JSON.
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

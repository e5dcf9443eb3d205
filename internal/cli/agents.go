package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"deputy/config"
	"deputy/tool/builtin"
)

func newAgentsCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "agents",
		Short: "List, show, create and check agent definitions",
		Long: `Work with agent definitions: TOML files in axe's format or Markdown files in
Claude Code's format.

Agents are looked up in three places, lowest precedence first:

  user      $XDG_CONFIG_HOME/deputy/agents/ (default ~/.config/deputy/agents/)
  project   .deputy/agents/ under the current directory
  flag      each --agents-dir, in the order given

An agent of the same name found later shadows the earlier one: 'agents list'
shows which definition wins and what it hides.`,
		Example: `  deputy agents list
  deputy agents show reviewer
  deputy agents init reviewer --format md
  deputy agents lint`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newAgentsListCmd(g), newAgentsShowCmd(g), newAgentsInitCmd(), newAgentsLintCmd(g))
	return cmd
}

func newAgentsListCmd(g *globalFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List every agent and where it was found",
		Long: `List every visible agent: its name, where its file was found (user, project
or flag) and its description. An agent that hides definitions of the same name
from lower-precedence directories is marked "shadows SOURCE/FILE"; an agent
whose file has problems is marked with their count (see 'deputy agents lint').`,
		Example: `  deputy agents list
  deputy agents list --agents-dir ./team
  deputy agents list --json | jq '.[].name'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w, err := loadWorkspace(cmd, g)
			if err != nil {
				return err
			}
			views := make([]agentSummary, 0, w.agents.Len())
			for _, a := range w.agents.List() {
				views = append(views, summarizeAgent(w, a))
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), views)
			}
			printAgentList(cmd.OutOrStdout(), w, views)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of agents")
	return cmd
}

// agentRef names one agent file.
type agentRef struct {
	Source string `json:"source"`
	Path   string `json:"path"`
}

// agentSummary is one row of 'agents list'.
type agentSummary struct {
	Name        string     `json:"name"`
	Description string     `json:"description"`
	Model       string     `json:"model"`
	Source      string     `json:"source"`
	Path        string     `json:"path"`
	Shadows     []agentRef `json:"shadows"`
	Errors      int        `json:"errors"`
	Warnings    int        `json:"warnings"`
}

func summarizeAgent(w *workspace, a *config.Agent) agentSummary {
	diags := w.diags.ForFile(a.Path)
	s := agentSummary{Name: a.Name, Description: a.Description, Model: modelOrInherit(a.Model), Source: a.Source, Path: a.Path,
		Shadows: []agentRef{}, Errors: len(diags.Errors()), Warnings: len(diags.Warnings())}
	// Shadowed lists lowest precedence first; the nearest hidden definition
	// is the one a user most likely meant to override, so it comes first.
	hidden := w.agents.Shadowed(a.Name)
	for i := len(hidden) - 1; i >= 0; i-- {
		s.Shadows = append(s.Shadows, agentRef{Source: hidden[i].Source, Path: hidden[i].Path})
	}
	return s
}

func printAgentList(out io.Writer, w *workspace, views []agentSummary) {
	if len(views) == 0 {
		fmt.Fprintln(out, "No agents found. Looked in:")
		for _, d := range config.Dirs(w.cwd, w.flags.agentsDirs) {
			fmt.Fprintf(out, "  %-8s %s\n", d.Source, d.Path)
		}
		fmt.Fprintln(out, "Create one with: deputy agents init NAME")
		return
	}
	tw := newTable(out)
	fmt.Fprintln(tw, "NAME\tSOURCE\tFILE\tDESCRIPTION\tNOTES")
	for _, v := range views {
		var notes, hidden []string
		for _, s := range v.Shadows {
			hidden = append(hidden, s.Source+"/"+filepath.Base(s.Path))
		}
		if len(hidden) > 0 {
			notes = append(notes, "shadows "+strings.Join(hidden, ", "))
		}
		var problems []string
		if v.Errors > 0 {
			problems = append(problems, plural(v.Errors, "error"))
		}
		if v.Warnings > 0 {
			problems = append(problems, plural(v.Warnings, "warning"))
		}
		if len(problems) > 0 {
			notes = append(notes, strings.Join(problems, ", "))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", v.Name, v.Source, displayPath(w.cwd, v.Path),
			orDash(clip(v.Description, 60)), orDash(strings.Join(notes, "; ")))
	}
	tw.Flush()
}

func newAgentsShowCmd(g *globalFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show <name>",
		Short: "Show an agent's resolved definition",
		Long: `Show an agent as deputy will run it: its model, system prompt, skill (name and
the SKILL.md it resolved to), file globs, working directory, sub-agents and
their limits (sub_agents_config, with the defaults filled in), model
parameters, tools and turn limit, the file it came from and any definitions it
shadows. Problems found in its file are listed at the end.`,
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
			a, ok := w.agents.Get(args[0])
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
	for _, a := range w.agents.List() {
		names = append(names, a.Name)
	}
	return names
}

func unknownAgentError(w *workspace, name string) error {
	var names []string
	for _, a := range w.agents.List() {
		names = append(names, a.Name)
	}
	if len(names) == 0 {
		return fmt.Errorf("no agent named %q; no agents are defined (see 'deputy agents init')", name)
	}
	return fmt.Errorf("no agent named %q; known agents: %s", name, strings.Join(names, ", "))
}

// agentDetail is the resolved definition 'agents show' prints.
type agentDetail struct {
	Name            string          `json:"name"`
	Description     string          `json:"description"`
	Source          string          `json:"source"`
	Path            string          `json:"path"`
	Shadows         []agentRef      `json:"shadows"`
	Model           string          `json:"model"`
	SystemPrompt    string          `json:"system_prompt"`
	Skill           *skillView      `json:"skill"`
	Files           []string        `json:"files"`
	Workdir         string          `json:"workdir"`
	WorkdirResolved string          `json:"workdir_resolved"`
	SubAgents       []string        `json:"sub_agents"`
	SubAgentsConfig subAgentsView   `json:"sub_agents_config"`
	Params          paramsView      `json:"params"`
	Tools           []string        `json:"tools"`
	ToolsDefault    bool            `json:"tools_default"`
	MaxTurns        int             `json:"max_turns"`
	MaxTurnsDefault bool            `json:"max_turns_default"`
	Diagnostics     []diagnosticRow `json:"diagnostics"`
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

type paramsView struct {
	Temperature *float64 `json:"temperature"`
	MaxTokens   *int     `json:"max_tokens"`
}

// diagnosticRow is a config.Diagnostic with its severity spelled out, for
// JSON output.
type diagnosticRow struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Key      string `json:"key"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

func diagnosticRows(ds config.Diagnostics) []diagnosticRow {
	rows := make([]diagnosticRow, 0, len(ds))
	for _, d := range ds {
		rows = append(rows, diagnosticRow{File: d.File, Line: d.Line, Key: d.Key, Severity: d.Severity.String(), Message: d.Message})
	}
	return rows
}

func detailAgent(w *workspace, a *config.Agent) agentDetail {
	s := summarizeAgent(w, a)
	d := agentDetail{Name: a.Name, Description: a.Description, Source: a.Source, Path: a.Path, Shadows: s.Shadows,
		Model: modelOrInherit(a.Model), SystemPrompt: a.SystemPrompt, Files: orEmpty(a.Files),
		Workdir: a.Workdir, WorkdirResolved: a.ResolveWorkdir(w.cwd), SubAgents: orEmpty(a.SubAgents),
		SubAgentsConfig: subAgentsView{MaxDepth: a.SubAgentsConfig.MaxDepth, Parallel: a.SubAgentsConfig.Parallel,
			TimeoutSeconds: int(a.SubAgentsConfig.Timeout.Seconds())},
		Params: paramsView{Temperature: a.Params.Temperature, MaxTokens: a.Params.MaxTokens},
		Tools:  a.Tools, MaxTurns: a.MaxTurns, Diagnostics: diagnosticRows(w.diags.ForFile(a.Path).Sorted())}
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
		d.MaxTurns, d.MaxTurnsDefault = w.settings.MaxTurns, true
	}
	return d
}

func printAgentDetail(out io.Writer, w *workspace, d agentDetail) {
	tw := newTable(out)
	row := func(k, v string) { fmt.Fprintf(tw, "%s:\t%s\n", k, v) }
	row("name", d.Name)
	row("description", orDash(d.Description))
	row("file", fmt.Sprintf("%s (%s)", d.Path, d.Source))
	for _, s := range d.Shadows {
		row("shadows", fmt.Sprintf("%s (%s)", s.Path, s.Source))
	}
	model := d.Model
	if model == config.ModelInherit {
		model = "inherit (the parent's model; at the root, default_model"
		if dm := w.settings.DefaultModel; dm != "" && dm != config.ModelInherit {
			model += " " + dm + ")"
		} else {
			model += ", which is not set)"
		}
	}
	row("model", model)
	maxTurns := fmt.Sprint(d.MaxTurns)
	if d.MaxTurnsDefault {
		maxTurns += " (default)"
	}
	row("max_turns", maxTurns)
	workdir := "(the current directory)"
	if d.Workdir != "" {
		workdir = d.Workdir
		if d.WorkdirResolved != d.Workdir {
			workdir += " → " + d.WorkdirResolved
		}
	}
	row("workdir", workdir)
	skill := "-"
	if sk := d.Skill; sk != nil {
		skill = sk.Ref + " (not found)"
		if sk.Resolved {
			skill = fmt.Sprintf("%s (%s)", sk.Name, sk.Path)
		}
	}
	row("skill", skill)
	row("files", orDash(strings.Join(d.Files, ", ")))
	tools := strings.Join(d.Tools, ", ")
	switch {
	case d.ToolsDefault:
		tools = "default: " + tools
	case len(d.Tools) == 0:
		tools = "(none)"
	}
	row("tools", tools)
	row("sub_agents", orDash(strings.Join(d.SubAgents, ", ")))
	row("sub_agents_config", fmt.Sprintf("max_depth %d, parallel %v, timeout %ds",
		d.SubAgentsConfig.MaxDepth, d.SubAgentsConfig.Parallel, d.SubAgentsConfig.TimeoutSeconds))
	params := []string{}
	if t := d.Params.Temperature; t != nil {
		params = append(params, fmt.Sprintf("temperature %g", *t))
	}
	if m := d.Params.MaxTokens; m != nil {
		params = append(params, fmt.Sprintf("max_tokens %d", *m))
	}
	row("params", orDash(strings.Join(params, ", ")))
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

func newAgentsInitCmd() *cobra.Command {
	var format, dir string
	cmd := &cobra.Command{
		Use:   "init <name>",
		Short: "Create a commented agent file to start from",
		Long: `Create a commented agent file named after the agent, in .deputy/agents/ under
the current directory (the project's agents) or in --dir. --format toml writes
axe's format, --format md Claude Code's (YAML front matter, then the system
prompt). The file loads and lints clean as written: its model is "inherit"
until you choose one.

An existing file is never overwritten.`,
		Example: `  deputy agents init reviewer
  deputy agents init researcher --format md
  deputy agents init helper --dir ~/.config/deputy/agents`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return initAgent(cmd, args[0], format, dir)
		},
	}
	cmd.Flags().StringVar(&format, "format", "toml", "file format: toml or md")
	cmd.Flags().StringVar(&dir, "dir", "", "directory to write into (default .deputy/agents under the current directory)")
	return cmd
}

func initAgent(cmd *cobra.Command, name, format, dir string) error {
	if err := config.ValidAgentName(name); err != nil {
		return configErr(fmt.Errorf("agent name %q: %w", name, err))
	}
	var data []byte
	switch format {
	case "toml":
		data = config.InitAgentTOML(name)
	case "md", "markdown":
		format, data = "md", config.InitAgentMarkdown(name)
	default:
		return configErrf("--format %q: must be toml or md", format)
	}
	if dir == "" {
		dir = filepath.Join(config.ProjectDirName, "agents")
	}
	// An agent of this name in the other format would be a duplicate in
	// the same directory, which the loader refuses; catch it here.
	for _, ext := range []string{".toml", ".md"} {
		p := filepath.Join(dir, name+ext)
		if _, err := os.Stat(p); err == nil {
			return configErrf("%s already exists; not overwriting it", p)
		}
	}
	path := filepath.Join(dir, name+"."+format)
	if err := writeNewFile(path, data); err != nil {
		return configErr(err)
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "created %s\n", path)
	fmt.Fprintf(out, "Edit its model and prompt, then: deputy agents lint && deputy run %s \"a task\"\n", name)
	return nil
}

// writeNewFile creates path (and its directory) with data, failing when
// the file exists: O_EXCL makes the check and the creation one step.
func writeNewFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s already exists; not overwriting it", path)
	}
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

func newAgentsLintCmd(g *globalFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "lint",
		Short: "Check every agent definition without calling a model",
		Long: `Check every agent file: unknown keys, missing or empty required keys, values
out of range, unknown model providers and tools, sub_agents that name no agent,
cycles among sub_agents (a warning), skills that cannot be found, working
directories that do not exist and file globs that match nothing (a warning).

Each problem is printed as SEVERITY: FILE:LINE: KEY: MESSAGE. The exit code is
2 when there is any error and 0 otherwise; warnings are printed but do not
fail.`,
		Example: `  deputy agents lint
  deputy agents lint --agents-dir ./team
  deputy agents lint --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w, err := loadWorkspace(cmd, g)
			if err != nil {
				return err
			}
			diags := w.diags.Sorted()
			out := cmd.OutOrStdout()
			if asJSON {
				if err := writeJSON(out, diagnosticRows(diags)); err != nil {
					return err
				}
			} else {
				printDiagnostics(out, w.cwd, diags)
				fmt.Fprintf(out, "%s checked: %s, %s\n", plural(w.agents.Len(), "agent"),
					plural(len(diags.Errors()), "error"), plural(len(diags.Warnings()), "warning"))
			}
			if n := len(diags.Errors()); n > 0 {
				return configErrf("agents lint: %s", plural(n, "error"))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the diagnostics as a JSON array")
	return cmd
}

// printDiagnostics prints one line per diagnostic, its severity first and
// its file relative to cwd when inside it.
func printDiagnostics(out io.Writer, cwd string, diags config.Diagnostics) {
	for _, d := range diags {
		d.File = displayPath(cwd, d.File)
		fmt.Fprintf(out, "%s: %s\n", d.Severity, d)
	}
}

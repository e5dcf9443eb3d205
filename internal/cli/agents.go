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

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/internal/cli/live"
	"github.com/deputyhq/deputy/llm/capability"
	"github.com/deputyhq/deputy/workspace"
)

func newAgentsCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "agents",
		Short: "List, show, create and check agent definitions",
		Long: `Work with agent definitions: deputy's TOML and Markdown files, and the agent
files of axe, Claude Code, opencode, Gemini CLI and Codex, as they are.

Agents are looked up in these places, lowest precedence first:

  axe       ~/.config/axe/agents/, then $XDG_CONFIG_HOME/axe/agents/
  claude    the agents/ of installed Claude Code plugins, ~/.claude/agents/,
            then .claude/agents/ in each directory from the repository root
            down to the current directory (with their subdirectories)
  opencode  agent/ and agents/ of ~/.config/opencode/ and of .opencode/ from
            the repository root down, and the agent section of opencode.json
  gemini    ~/.gemini/agents/, then .gemini/agents/
  codex     agents/ of ~/.codex/ and of .codex/ from the repository root
            down, and the roles config.toml declares
  user      $XDG_CONFIG_HOME/deputy/agents/ (default ~/.config/deputy/agents/)
  project   .deputy/agents/ under the current directory
  flag      each --agents-dir, in the order given

An agent of the same name found later shadows the earlier one: 'agents list'
shows which definition wins and what it hides. An agent is found by its name
and, as in axe, by its file's name. Agents from axe's directory keep axe's
ways: no tools key means no tools, and a run without a task sends axe's
default task.`,
		Example: `  deputy agents list
  deputy agents show reviewer
  deputy agents init reviewer --format md
  deputy agents lint`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newAgentsListCmd(g), newAgentsShowCmd(g), newAgentsInitCmd(g), newAgentsLintCmd(g))
	return cmd
}

func newAgentsListCmd(g *globalFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List every agent and where it was found",
		Long: `List every visible agent: its name, where its file was found (axe, claude,
opencode, gemini, codex, user, project or flag) and its description. An agent that hides definitions of
the same name from lower-precedence directories is marked "shadows
SOURCE/FILE"; an agent whose file has problems is marked with their count (see
'deputy agents lint'); a file that cannot be loaded at all is listed under its
file name with "cannot load:" and the first error.`,
		Example: `  deputy agents list
  deputy agents list --agents-dir ./team
  deputy agents list --json | jq '.[].name'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w, err := loadWorkspace(cmd, g)
			if err != nil {
				return err
			}
			views := make([]agentSummary, 0, w.Agents.Len())
			for _, a := range w.Agents.List() {
				views = append(views, summarizeAgent(w, a))
			}
			for _, b := range w.Agents.Broken() {
				views = append(views, summarizeBroken(b))
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
	Name        string `json:"name"`
	Description string `json:"description"`
	Model       string `json:"model"`
	// Origin is the tool whose directory the file is in: deputy, axe or
	// claude.
	Origin   string     `json:"origin"`
	Source   string     `json:"source"`
	Path     string     `json:"path"`
	Shadows  []agentRef `json:"shadows"`
	Errors   int        `json:"errors"`
	Warnings int        `json:"warnings"`
	// LoadError is set for a file that could not be loaded at all; Name
	// is then its file name.
	LoadError string `json:"load_error,omitempty"`
}

// summarizeBroken is the row of a file that could not be loaded.
func summarizeBroken(b config.BrokenFile) agentSummary {
	a := &config.Agent{Source: b.Source}
	errs := b.Diagnostics.Errors()
	msg := ""
	if len(errs) > 0 {
		msg = errs[0].Message
		if errs[0].Key != "" {
			msg = errs[0].Key + ": " + msg
		}
	}
	name := filepath.Base(b.Path)
	return agentSummary{Name: strings.TrimSuffix(name, filepath.Ext(name)), Origin: a.Origin(), Source: b.Source, Path: b.Path,
		Shadows: []agentRef{}, Errors: len(errs), Warnings: len(b.Diagnostics.Warnings()), LoadError: msg}
}

func summarizeAgent(w *cliWorkspace, a *config.Agent) agentSummary {
	diags := w.Diagnostics.ForFile(a.Path)
	s := agentSummary{Name: a.Name, Description: a.Description, Model: modelOrInherit(a.Model), Origin: a.Origin(), Source: a.Source, Path: a.Path,
		Shadows: []agentRef{}, Errors: len(diags.Errors()), Warnings: len(diags.Warnings())}
	// Shadowed lists lowest precedence first; the nearest hidden definition
	// is the one a user most likely meant to override, so it comes first.
	hidden := w.Agents.Shadowed(a.Name)
	for i := len(hidden) - 1; i >= 0; i-- {
		s.Shadows = append(s.Shadows, agentRef{Source: hidden[i].Source, Path: hidden[i].Path})
	}
	return s
}

func printAgentList(out io.Writer, w *cliWorkspace, views []agentSummary) {
	if len(views) == 0 {
		fmt.Fprintln(out, "No agents found. Looked in:")
		for _, d := range workspace.AgentDirs(w.Dir, w.flags.agentsDirs) {
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
		if v.LoadError != "" {
			notes = []string{"cannot load: " + live.Excerpt(v.LoadError, 80)}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", v.Name, v.Source, displayPath(w.Dir, v.Path),
			orDash(live.Excerpt(v.Description, 60)), orDash(strings.Join(notes, "; ")))
	}
	tw.Flush()
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

func newAgentsInitCmd(g *globalFlags) *cobra.Command {
	var format, dir string
	cmd := &cobra.Command{
		Use:   "init <name>",
		Short: "Create a commented agent file to start from",
		Long: `Create a commented agent file named after the agent, in .deputy/agents/ under
the current directory (the project's agents) or in --dir. --format toml writes
axe's format, --format md Claude Code's (YAML front matter, then the system
prompt). The file runs as written: its model is "inherit" when config.yaml sets
a default_model, else a model of the first provider whose key is set
(ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, OPENROUTER_API_KEY). When
neither is there it says so and how to set one.

An existing file is never overwritten.`,
		Example: `  deputy agents init reviewer
  deputy agents init researcher --format md
  deputy agents init helper --dir ~/.config/deputy/agents`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return initAgent(cmd, g, args[0], format, dir)
		},
	}
	cmd.Flags().StringVar(&format, "format", "toml", "file format: toml or md")
	cmd.Flags().StringVar(&dir, "dir", "", "directory to write into (default .deputy/agents under the current directory)")
	return cmd
}

// initModels are the models 'agents init' writes, by the key that is set,
// in the order they are tried.
var initModels = []struct{ env, model string }{
	{"ANTHROPIC_API_KEY", "anthropic/claude-sonnet-5-5"},
	{"OPENAI_API_KEY", "openai/gpt-4.1"},
	{"GEMINI_API_KEY", "gemini/gemini-2.5-flash"},
	{"GOOGLE_API_KEY", "gemini/gemini-2.5-flash"},
	{"OPENROUTER_API_KEY", "openrouter/anthropic/claude-sonnet-4.5"},
}

// initModel picks the model a new agent file names: "inherit" when
// config.yaml has a default_model, else one of a provider whose key is
// set; note says what was chosen and why, or how to make the agent run.
func initModel(g *globalFlags) (model, note string) {
	cwd, _ := os.Getwd()
	if s, err := workspace.LoadSettings(g.settingsPaths(cwd)); err == nil && s.DefaultModel != "" && s.DefaultModel != config.ModelInherit {
		return config.ModelInherit, fmt.Sprintf("model: inherit (config.yaml's default_model, %s)", s.DefaultModel)
	}
	for _, m := range initModels {
		if strings.TrimSpace(os.Getenv(m.env)) != "" {
			return m.model, fmt.Sprintf("model: %s (%s is set)", m.model, m.env)
		}
	}
	return config.ModelInherit, "model: inherit, but no provider key is set and config.yaml has no default_model, so the agent cannot run yet:\n" +
		"  export ANTHROPIC_API_KEY=... (or OPENAI_API_KEY, GEMINI_API_KEY, OPENROUTER_API_KEY) and set model in the file,\n" +
		"  or set default_model in config.yaml ('deputy config init' writes one to edit)"
}

func initAgent(cmd *cobra.Command, g *globalFlags, name, format, dir string) error {
	if err := config.ValidAgentName(name); err != nil {
		return configErr(fmt.Errorf("agent name %q: %w", name, err))
	}
	model, note := initModel(g)
	var data []byte
	switch format {
	case "toml":
		data = config.WithInitModel(config.InitAgentTOML(name), model)
	case "md", "markdown":
		format, data = "md", config.WithInitModel(config.InitAgentMarkdown(name), model)
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
	fmt.Fprintf(out, "created %s\n%s\n", path, note)
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
directories that do not exist, file globs that match nothing (a warning), and
a temperature, effort or max_tokens the agent's model does not take (a
warning: the run leaves it out; see capabilities in docs/configuration.md).

Each problem is printed as SEVERITY: FILE:LINE: KEY: MESSAGE; a warning that
more than 3 files share (a collection's own front matter key, say) is printed
once, with how many files and the first of them (--json lists each). The exit
code is 2 when there is any error and 0 otherwise; warnings are printed but do
not fail.`,
		Example: `  deputy agents lint
  deputy agents lint --agents-dir ./team
  deputy agents lint --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w, err := loadWorkspace(cmd, g)
			if err != nil {
				return err
			}
			diags := append(w.Diagnostics, config.LintRootModels(w.Agents, w.Settings.DefaultModel)...)
			diags = append(diags, config.LintParams(w.Agents, w.Settings.DefaultModel, capability.NewTable(w.Settings.Capabilities))...).Sorted()
			out := cmd.OutOrStdout()
			if asJSON {
				if err := writeJSON(out, diagnosticRows(diags)); err != nil {
					return err
				}
			} else {
				printLintDiagnostics(out, w.Dir, diags)
				fmt.Fprintf(out, "%s checked: %s, %s\n", plural(w.Agents.Len(), "agent"),
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
// sharedWarningFiles is how many files may share a warning before lint
// prints it once for all of them: a collection of a hundred agents that all
// carry the same extra key is one thing to say, not a hundred lines.
const sharedWarningFiles = 3

// printLintDiagnostics prints diags as printDiagnostics does, except that
// a warning (its key and message) found in more than sharedWarningFiles
// files is printed once, where it first appears, with the count and the
// first files. Errors are always printed one by one.
func printLintDiagnostics(out io.Writer, cwd string, diags config.Diagnostics) {
	text := func(d config.Diagnostic) string { return config.Diagnostic{Key: d.Key, Message: d.Message}.String() }
	where := map[string][]string{}
	for _, d := range diags.Warnings() {
		where[text(d)] = append(where[text(d)], config.Diagnostic{File: displayPath(cwd, d.File), Line: d.Line}.String())
	}
	printed := map[string]bool{}
	for _, d := range diags {
		files := where[text(d)]
		if d.Severity != config.Warning || len(files) <= sharedWarningFiles {
			printDiagnostics(out, cwd, config.Diagnostics{d})
			continue
		}
		if printed[text(d)] {
			continue
		}
		printed[text(d)] = true
		first := make([]string, sharedWarningFiles)
		for i, f := range files[:sharedWarningFiles] {
			first[i] = strings.TrimSuffix(f, ": ")
		}
		fmt.Fprintf(out, "%s: %s (in %d files: %s and %d more)\n", d.Severity, text(d), len(files),
			strings.Join(first, ", "), len(files)-sharedWarningFiles)
	}
}

func printDiagnostics(out io.Writer, cwd string, diags config.Diagnostics) {
	for _, d := range diags {
		d.File = displayPath(cwd, d.File)
		fmt.Fprintf(out, "%s: %s\n", d.Severity, d)
	}
}

package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/claude"
	"github.com/deputyhq/deputy/workspace"
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
	settingsPaths := g.settingsPaths(cwd)
	for i, p := range settingsPaths {
		// SettingsPaths lists the user file first and the project's last.
		scope := config.SourceUser
		switch {
		case i == 1:
			scope = config.SourceProject
		case i > 1:
			scope = config.SourceFlag // --config
		}
		v.Settings = append(v.Settings, pathEntry{Scope: scope, Path: p, Exists: exists(p)})
	}
	for _, d := range workspace.AgentDirs(cwd, g.agentsDirs) {
		v.AgentDirs = append(v.AgentDirs, pathEntry{Scope: d.Source, Path: d.Path, Exists: exists(d.Path)})
	}
	for i, d := range workspace.SkillDirs(cwd) {
		scope := config.SourceProject
		switch {
		case filepath.Base(d) == ".claude":
			scope = claude.Source
		case i > 0:
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

	s, err := workspace.LoadSettings(settingsPaths)
	if err != nil {
		// The paths are most wanted when something is broken, so a bad
		// settings file is reported but does not stop the listing.
		v.SettingsError = err.Error()
		s = config.DefaultSettings()
	}
	v.Ledger = ledgerEntry{Path: workspace.LedgerPath(g.options(cwd), s), From: ledgerSource(g, s)}
	v.Ledger.Exists = exists(v.Ledger.Path)
	return v, nil
}

// ledgerSource says what chose the ledger path, in workspace.LedgerPath's
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

package codex

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/internal/agentdir"
	"github.com/deputyhq/deputy/config/internal/osfile"
)

// maxConfigFile bounds a Codex config.toml.
const maxConfigFile = 4 << 20

// HomeDir is Codex's home: $CODEX_HOME, else ~/.codex; "" when neither
// can be determined.
func HomeDir() string { return osfile.UserDir("CODEX_HOME", ".codex") }

// configFolders are Codex's configuration folders for cwd, lowest
// precedence first: its home, then .codex in each directory from the
// repository root (the nearest parent holding .git; cwd alone outside a
// repository) down to cwd.
func configFolders(cwd string) []string {
	return osfile.ConfigDirs(HomeDir(), ".codex", cwd, "")
}

// AgentDirs are Codex's configuration folders for cwd, lowest precedence
// first, each read for the role files of its agents directory and the
// roles its config.toml declares.
func AgentDirs(cwd string) []config.Dir {
	root := SessionModel(cwd)
	var dirs []config.Dir
	for _, d := range configFolders(cwd) {
		dirs = append(dirs, config.Dir{Path: d, Source: Source, Origin: Origin{RootModel: root}})
	}
	return dirs
}

// Origin reads one of Codex's configuration folders.
type Origin struct {
	// RootModel is Codex's configured model (SessionModel): what an agent
	// that names none runs on as a root without a default_model.
	RootModel string
}

// declared are the roles dir's config.toml declares with a config_file,
// by that file's clean path.
func declared(dir string) map[string]string {
	data, err := osfile.Read(filepath.Join(dir, "config.toml"), maxConfigFile)
	if err != nil {
		return nil
	}
	return roleFiles(data, dir)
}

// roleFiles are the roles a config.toml in dir declares with a
// config_file, by that file's clean path; nil when it is not TOML.
func roleFiles(data []byte, dir string) map[string]string {
	// Keys are read as written, as Codex reads them: a struct would also
	// take Config_file, and which of two such keys won would change from
	// run to run.
	var c map[string]any
	if _, err := toml.Decode(string(data), &c); err != nil {
		return nil
	}
	agents, _ := c["agents"].(map[string]any)
	out := map[string]string{}
	// In name order: of two roles declaring the same file, the first
	// name is the agent's, the same on every run.
	for _, name := range slices.Sorted(maps.Keys(agents)) {
		role, _ := agents[name].(map[string]any)
		file, _ := role["config_file"].(string)
		if file == "" {
			continue // a setting such as max_threads, or a role without a file
		}
		f := osfile.ExpandHome(file)
		if !filepath.IsAbs(f) {
			f = filepath.Join(dir, f)
		}
		if f = filepath.Clean(f); out[f] == "" {
			out[f] = name
		}
	}
	return out
}

// Files are the *.toml files below dir's agents/, then the role files its
// config.toml declares.
func (o Origin) Files(dir string) ([]string, config.Diagnostics, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, nil, err
	}
	paths, diags := agentdir.Tree(filepath.Join(dir, "agents"),
		func(_ string, e fs.DirEntry) bool { return e.IsDir() },
		func(_ string, e fs.DirEntry) bool {
			return e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".toml")
		})
	decl := declared(dir)
	var extra []string
	for p := range decl {
		if !slices.Contains(paths, p) {
			extra = append(extra, p)
		}
	}
	slices.Sort(extra)
	return append(paths, extra...), diags, nil
}

// Load reads one role file in Codex's dialect; a role declared in
// config.toml is named after its declaration when its file names none.
func (o Origin) Load(path, source string, opts config.LoadOptions) ([]*config.Agent, config.Diagnostics) {
	opts.TOML = Dialect
	opts.Name = declared(filepath.Dir(path))[path]
	if opts.Name == "" {
		// A role declared in the folder above agents/.
		opts.Name = declared(filepath.Dir(filepath.Dir(path)))[path]
	}
	a, diags := config.LoadAgentFile(path, source, opts)
	if a == nil {
		return nil, diags
	}
	if a.InheritsModel() {
		a.RootModel = o.RootModel
	}
	return []*config.Agent{a}, diags
}

// SessionModel is the model Codex's config.toml files name for cwd (the
// home's, then each project folder's, a later one winning), as deputy
// writes it; "" when none does, or names a provider deputy cannot reach.
func SessionModel(cwd string) string {
	model := ""
	for _, d := range configFolders(cwd) {
		data, err := osfile.Read(filepath.Join(d, "config.toml"), maxConfigFile)
		if err != nil {
			continue
		}
		if m := configModel(data); m != "" {
			model = m
		}
	}
	return model
}

// configModel is the model one config.toml names, as deputy writes it;
// "" when it names none, names a provider deputy cannot reach, or is not
// TOML.
func configModel(data []byte) string {
	var c map[string]any
	if _, err := toml.Decode(string(data), &c); err != nil {
		return ""
	}
	model, _ := c["model"].(string)
	provider, _ := c["model_provider"].(string)
	if m, note := Model(model, provider); note == "" {
		return m
	}
	return ""
}

// Names are the agent a role file defines, for an index: its name, else
// the name config.toml declares it under when deputy can use it (Load
// calls it after its file otherwise).
func (o Origin) Names(path string, data []byte) []string {
	if names := config.FileNames(path, data); len(names) > 0 && names[0] != strings.TrimSuffix(filepath.Base(path), ".toml") {
		return names
	}
	for _, dir := range []string{filepath.Dir(path), filepath.Dir(filepath.Dir(path))} {
		if n := declared(dir)[path]; n != "" && config.ValidAgentName(n) == nil {
			return []string{n}
		}
	}
	return config.FileNames(path, data)
}

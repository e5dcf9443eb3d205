package gemini

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/internal/jsonc"
	"github.com/deputyhq/deputy/config/internal/osfile"
)

// maxSettingsFile bounds a Gemini CLI settings.json.
const maxSettingsFile = 4 << 20

// HomeDir is Gemini CLI's user directory: $GEMINI_CLI_HOME/.gemini, else
// ~/.gemini; "" when neither can be determined.
func HomeDir() string {
	home := os.Getenv("GEMINI_CLI_HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".gemini")
}

// AgentDirs are where Gemini CLI finds subagents for cwd, lowest
// precedence first: ~/.gemini/agents, then the project's .gemini/agents
// (Gemini CLI registers the project's first and ignores a later one of
// the same name).
func AgentDirs(cwd string) []config.Dir {
	s := readSettings(cwd)
	var dirs []config.Dir
	if h := HomeDir(); h != "" {
		dirs = append(dirs, config.Dir{Path: filepath.Join(h, "agents"), Source: Source, Origin: Origin{settings: s}})
	}
	if cwd != "" {
		dirs = append(dirs, config.Dir{Path: filepath.Join(cwd, ".gemini", "agents"), Source: Source, Origin: Origin{settings: s}})
	}
	return dirs
}

// Origin reads one of Gemini CLI's agents directories as Gemini CLI
// does, with what its settings.json files say of the agents.
type Origin struct{ settings *settings }

// Files are the Markdown files directly inside dir whose name does not
// start with "_", regular files only, as Gemini CLI lists them.
func (o Origin) Files(dir string) ([]string, config.Diagnostics, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	var paths []string
	for _, e := range entries {
		if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), "_") && strings.HasSuffix(e.Name(), ".md") {
			paths = append(paths, filepath.Join(dir, e.Name()))
		}
	}
	return paths, nil, nil
}

// Load reads one subagent file in Gemini CLI's dialect and applies the
// settings: agents.overrides.<name> (enabled, runConfig, modelConfig.model)
// and experimental.enableAgents. Run as a root without a default_model, an
// agent that inherits runs on Gemini CLI's session model.
func (o Origin) Load(path, source string, opts config.LoadOptions) ([]*config.Agent, config.Diagnostics) {
	opts.Markdown = Dialect
	a, diags := config.LoadAgentFile(path, source, opts)
	if a == nil {
		return nil, diags
	}
	s := o.settings
	if s == nil {
		s = &settings{}
	}
	s.apply(a)
	return []*config.Agent{a}, diags
}

// settings is what deputy reads of Gemini CLI's settings.json files.
type settings struct {
	Model     string
	AgentsOff bool
	Overrides map[string]override
}

type override struct {
	Enabled   *bool `json:"enabled"`
	RunConfig struct {
		MaxTurns       int `json:"maxTurns"`
		MaxTimeMinutes int `json:"maxTimeMinutes"`
	} `json:"runConfig"`
	ModelConfig struct {
		Model string `json:"model"`
	} `json:"modelConfig"`
}

// model is the session's model as deputy writes it: settings' model.name,
// else Gemini CLI's default.
func (s *settings) model() string {
	if s.Model != "" {
		return Model(s.Model)
	}
	return "gemini/" + DefaultModel
}

// apply gives a the settings: experimental.enableAgents, its entry of
// agents.overrides, and, when it inherits, the session's model as its
// root's.
func (s *settings) apply(a *config.Agent) {
	if s.AgentsOff {
		a.Disabled = "experimental.enableAgents is false in Gemini CLI's settings"
	}
	if ov, ok := s.Overrides[a.Name]; ok {
		if ov.Enabled != nil && !*ov.Enabled {
			a.Disabled = fmt.Sprintf("agents.overrides.%s.enabled is false in Gemini CLI's settings", a.Name)
		}
		if n := ov.RunConfig.MaxTurns; n > 0 {
			a.MaxTurns = n
		}
		// A time longer than a time.Duration holds is no limit deputy can
		// keep; the agent keeps its own.
		if m := ov.RunConfig.MaxTimeMinutes; m > 0 && int64(m) <= math.MaxInt64/int64(time.Minute) {
			a.Budget.Time = time.Duration(m) * time.Minute
		}
		if m := ov.ModelConfig.Model; m != "" {
			a.Model = Model(m)
		}
	}
	if a.InheritsModel() {
		a.RootModel = s.model()
	}
}

// readSettings merges the user's settings.json (~/.gemini) and the
// project's (.gemini under cwd), the project's winning key by key. A file
// deputy cannot read is Gemini CLI's business and is skipped.
func readSettings(cwd string) *settings {
	s := &settings{Overrides: map[string]override{}}
	var files []string
	if h := HomeDir(); h != "" {
		files = append(files, filepath.Join(h, "settings.json"))
	}
	if cwd != "" {
		files = append(files, filepath.Join(cwd, ".gemini", "settings.json"))
	}
	for _, f := range files {
		if data, err := osfile.Read(f, maxSettingsFile); err == nil {
			s.merge(data)
		}
	}
	return s
}

// merge reads one settings.json over s, key by key, as Gemini CLI merges
// its settings files; a file that is not JSON (JSONC) is skipped.
func (s *settings) merge(data []byte) {
	var file struct {
		Model struct {
			Name string `json:"name"`
		} `json:"model"`
		Experimental struct {
			EnableAgents *bool `json:"enableAgents"`
		} `json:"experimental"`
		Agents struct {
			Overrides map[string]override `json:"overrides"`
		} `json:"agents"`
	}
	if json.Unmarshal(jsonc.Strip(data), &file) != nil {
		return
	}
	if s.Overrides == nil {
		s.Overrides = map[string]override{}
	}
	if m := strings.TrimSpace(file.Model.Name); m != "" {
		s.Model = m
	}
	if e := file.Experimental.EnableAgents; e != nil {
		s.AgentsOff = !*e
	}
	// Gemini CLI merges its settings files key by key.
	for name, ov := range file.Agents.Overrides {
		merged := s.Overrides[name]
		if ov.Enabled != nil {
			merged.Enabled = ov.Enabled
		}
		if ov.RunConfig.MaxTurns != 0 {
			merged.RunConfig.MaxTurns = ov.RunConfig.MaxTurns
		}
		if ov.RunConfig.MaxTimeMinutes != 0 {
			merged.RunConfig.MaxTimeMinutes = ov.RunConfig.MaxTimeMinutes
		}
		if ov.ModelConfig.Model != "" {
			merged.ModelConfig.Model = ov.ModelConfig.Model
		}
		s.Overrides[name] = merged
	}
}

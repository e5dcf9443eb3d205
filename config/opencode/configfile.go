package opencode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/internal/jsonc"
	"github.com/deputyhq/deputy/config/internal/osfile"
)

// builtins are opencode's own agents: an opencode.json entry of one of
// these names only adjusts it (its model, say) unless it gives a prompt.
var builtins = []string{"build", "plan", "general", "explore", "compaction", "title", "summary"}

// loadConfigFile reads the agents of an opencode.json's agent section,
// each entry an agent of opencode's keys whose prompt is its system
// prompt ("{file:./path}" reads it from a file, relative to the
// opencode.json). Other sections are opencode's business and are not
// read.
func loadConfigFile(path, source string) ([]*config.Agent, config.Diagnostics) {
	data, err := osfile.Read(path, maxConfigFile)
	if err != nil {
		return nil, config.Diagnostics{{File: path, Severity: config.Error, Message: "cannot read: " + osfile.ErrText(err)}}
	}
	sink := &config.Sink{File: path}
	f, ok := sink.DecodeMapping(jsonc.Strip(data), filepath.Base(path))
	if !ok {
		return nil, sink.Diags
	}
	section, ok := f.Table("agent")
	if !ok {
		return nil, sink.Diags
	}
	var agents []*config.Agent
	for _, name := range section.Keys() {
		entry, ok := section.Table(name)
		if !ok {
			continue
		}
		if slices.Contains(builtins, name) && !entry.Has("prompt") {
			entry.Warnf("", "adjusts opencode's built-in agent %q, which deputy does not have; left out", name)
			continue
		}
		entry = withPromptFile(entry, filepath.Dir(path))
		a := Dialect.ParseTable(entry, path, name)
		if a == nil {
			continue
		}
		a.Source = source
		agents = append(agents, a)
	}
	return agents, sink.Diags.Sorted()
}

// withPromptFile reads a prompt written "{file:./path}" from that file
// (relative to dir), as opencode substitutes it.
func withPromptFile(entry config.Fields, dir string) config.Fields {
	p, _ := entry.Value("prompt").(string)
	ref, ok := strings.CutPrefix(strings.TrimSpace(p), "{file:")
	if ref, closed := strings.CutSuffix(ref, "}"); ok && closed {
		file := osfile.ExpandHome(ref)
		if !filepath.IsAbs(file) {
			file = filepath.Join(dir, file)
		}
		data, err := osfile.Read(file, maxConfigFile)
		if err != nil {
			entry.Errorf("prompt", "cannot read %s: %s", ref, osfile.ErrText(err))
			return entry
		}
		return entry.With("prompt", string(data))
	}
	return entry
}

// SessionModel is the model opencode runs a session on for cwd, as
// deputy writes it: the model key of the opencode.json files of its
// locations (a later one winning), else the model opencode last used
// (lastUsed). "" when neither names one: opencode would then pick one
// from its model catalogue, which deputy does not have. A file deputy
// cannot read is opencode's business and is skipped.
func SessionModel(cwd string) string {
	var files []string
	for _, l := range locations(cwd) {
		if l.file {
			files = append(files, l.path)
		} else {
			files = append(files, configPaths(l.path, configFiles)...)
		}
	}
	model := ""
	for _, f := range files {
		data, err := osfile.Read(f, maxConfigFile)
		if err != nil {
			continue
		}
		var c struct {
			Model string `json:"model"`
		}
		if json.Unmarshal(jsonc.Strip(data), &c) == nil && strings.Contains(c.Model, "/") {
			model = strings.TrimSpace(c.Model)
		}
	}
	if model == "" {
		model = lastUsed()
	}
	return model
}

// lastUsed is the model opencode last used: the first entry of recent in
// the model.json of its state directory ($XDG_STATE_HOME/opencode, else
// ~/.local/state/opencode), which opencode takes when no configuration
// names a model (provider.ts, defaultModel); "" when there is none.
func lastUsed() string {
	dir := os.Getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(dir) {
		home, _ := os.UserHomeDir()
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".local", "state")
	}
	data, err := osfile.Read(filepath.Join(dir, "opencode", "model.json"), maxConfigFile)
	if err != nil {
		return ""
	}
	return recentModel(data)
}

// recentModel is the first well-formed entry of recent in an opencode
// model.json, as provider/model; "" when there is none.
func recentModel(data []byte) string {
	var state struct {
		Recent []json.RawMessage `json:"recent"`
	}
	if json.Unmarshal(data, &state) != nil {
		return ""
	}
	for _, raw := range state.Recent {
		var e struct {
			Provider string `json:"providerID"`
			Model    string `json:"modelID"`
		}
		if json.Unmarshal(raw, &e) == nil && e.Provider != "" && e.Model != "" {
			return e.Provider + "/" + e.Model
		}
	}
	return ""
}

// Names are the agents a file of opencode's defines, for an index: the
// keys of an opencode.json's agent section, or an agent file's name.
func (o Origin) Names(path string, data []byte) []string {
	if strings.EqualFold(filepath.Ext(path), ".md") {
		return config.FileNames(path, data)
	}
	var c struct {
		Agent map[string]json.RawMessage `json:"agent"`
	}
	if json.Unmarshal(jsonc.Strip(data), &c) != nil {
		return nil
	}
	names := make([]string, 0, len(c.Agent))
	for n := range c.Agent {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

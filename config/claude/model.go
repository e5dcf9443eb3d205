package claude

import (
	"encoding/json"
	"os"
	"strings"

	"github.com/deputyhq/deputy/config"
)

// AliasesChecked is the date the alias table below was last checked
// against Claude Code's model configuration documentation.
const AliasesChecked = "2026-11-28"

// alias is one Claude Code model alias.
type alias struct {
	model string // Anthropic model id
	env   string // Claude Code's variable that overrides it; "" = none
	note  string // what deputy cannot honour, for a warning
}

// aliases resolve Claude Code's model aliases to the Anthropic models they
// named on AliasesChecked. Claude Code's own override variables
// (ANTHROPIC_DEFAULT_SONNET_MODEL, ...) are honoured, so a user who pinned
// a model there gets the same one under deputy.
var aliases = map[string]alias{
	"haiku":  {model: "claude-haiku-4-5", env: "ANTHROPIC_DEFAULT_HAIKU_MODEL"},
	"sonnet": {model: "claude-sonnet-5-5", env: "ANTHROPIC_DEFAULT_SONNET_MODEL"},
	"opus":   {model: "claude-opus-5-5", env: "ANTHROPIC_DEFAULT_OPUS_MODEL"},
	"fable":  {model: "claude-fable-5-2"},
	"opusplan": {model: "claude-sonnet-5-5", env: "ANTHROPIC_DEFAULT_SONNET_MODEL",
		note: "deputy has no plan mode; opusplan runs on sonnet's model, as Claude Code does outside plan mode"},
	"sonnet[1m]": {model: "claude-sonnet-5-5", env: "ANTHROPIC_DEFAULT_SONNET_MODEL",
		note: "deputy does not request the 1M-token context window; the model's standard window applies"},
}

// ResolveModel turns a Claude Code model value into deputy's
// "provider/model": an alias (haiku, sonnet, opus, fable, opusplan,
// sonnet[1m]) to its Anthropic model, a full "claude-..." id to
// "anthropic/<id>", and "inherit" or "default" to "" (the parent's model).
// Any other value is returned unchanged with ok false. note says what of
// the value deputy cannot honour, "" when nothing.
func ResolveModel(v string) (model, note string, ok bool) {
	v = strings.TrimSpace(v)
	switch {
	case v == config.ModelInherit || v == "default":
		return "", "", true
	case strings.HasPrefix(v, "claude-"):
		if id, cut := strings.CutSuffix(v, "[1m]"); cut {
			return "anthropic/" + id, aliases["sonnet[1m]"].note, true
		}
		return "anthropic/" + v, "", true
	}
	a, found := aliases[strings.ToLower(v)]
	if !found {
		return v, "", false
	}
	id := a.model
	if a.env != "" {
		if pinned := strings.TrimSpace(os.Getenv(a.env)); pinned != "" {
			id = pinned
		}
	}
	return "anthropic/" + id, a.note, true
}

// SessionModel is the model the user has Claude Code run its sessions on,
// if they chose one, and where that choice was read: Claude Code's
// agents say "model: inherit" (or name no model) to run on the session's
// model, so run as deputy's root where config.yaml sets no default_model,
// such an agent runs on that same model. Claude Code takes its model from
// ANTHROPIC_MODEL, else from the model key of its settings files (the
// user's, then each project's settings.json and settings.local.json for
// cwd, a later file winning); the value is resolved as an agent's model is
// (the aliases, "claude-..." ids). A value deputy cannot resolve (a Bedrock
// or Vertex model name) is no choice. Claude Code's own default, which
// depends on the user's account, cannot be known: without a choice the
// model is "".
func SessionModel(cwd string) (model, from string) {
	v, src := strings.TrimSpace(os.Getenv("ANTHROPIC_MODEL")), "ANTHROPIC_MODEL"
	if v == "" {
		v, src = settingsModel(Dirs(cwd))
	}
	if v == "" {
		return "", ""
	}
	model, _, ok := ResolveModel(v)
	if !ok || model == "" {
		return "", ""
	}
	return model, "Claude Code's model, " + v + ", from " + src
}

// ApplySessionModel gives s the SessionModel as its default model where
// config.yaml sets none; s.DefaultModelFrom says where it came from.
func ApplySessionModel(s *config.Settings, cwd string) {
	if s == nil || s.DefaultModel != "" {
		return
	}
	s.DefaultModel, s.DefaultModelFrom = SessionModel(cwd)
}

// settingsModel is the model key of Claude Code's settings files under the
// .claude directories dirs (lowest precedence first), and the file it came
// from; "" when none sets one. Files deputy cannot read or parse are
// Claude Code's business and are skipped.
func settingsModel(dirs []string) (model, file string) {
	for path, data := range settingsFiles(dirs) {
		var s struct {
			Model string `json:"model"`
		}
		if json.Unmarshal(data, &s) != nil {
			continue
		}
		if m := strings.TrimSpace(s.Model); m != "" {
			model, file = m, path
		}
	}
	return model, file
}

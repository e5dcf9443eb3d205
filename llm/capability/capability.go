// Package capability says, per model family, which request parameters a
// provider's model accepts: the sampling parameters it refuses, the
// reasoning effort values it takes and how its provider controls thinking,
// and its output token limit and context window. The table is dated and
// sourced like llm/price's; config.yaml overrides and extends it
// (capabilities:). A model the table does not know accepts everything and
// has no known limit: deputy then sends what the user asked and lets the
// provider answer.
package capability

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/deputyhq/deputy/llm"
)

// The sampling parameters the table knows. deputy's agents set only
// temperature today; top_p and top_k are listed so the table says what the
// providers document and an adapter that learns them has the rule.
const (
	Temperature = "temperature"
	TopP        = "top_p"
	TopK        = "top_k"
)

// Params are the sampling parameters, in the order they are reported.
var Params = []string{Temperature, TopP, TopK}

// How a provider controls a model's thinking (Model.Thinking). An adapter
// maps llm.Params.Effort to its provider's control by this kind.
const (
	// ThinkingAdaptive: Anthropic's adaptive thinking, on by default and
	// steered by output_config.effort; the manual budget form is refused.
	ThinkingAdaptive = "adaptive"
	// ThinkingAdaptiveAlways: adaptive thinking that cannot be turned off
	// (Fable, Opus 5.5).
	ThinkingAdaptiveAlways = "adaptive-always"
	// ThinkingBudget: thinking steered by a token budget (Anthropic's
	// budget_tokens before Claude 4.6, Gemini 2.5's thinkingBudget). Its
	// Efforts are deputy's levels, which the adapter turns into a budget
	// between BudgetMin and BudgetMax.
	ThinkingBudget = "budget"
	// ThinkingLevel: Gemini 3's thinkingLevel, the effort value as is.
	ThinkingLevel = "level"
	// ThinkingEffort: the provider's effort parameter, the value as is:
	// OpenAI's reasoning.effort (reasoning_effort on Chat Completions),
	// Anthropic's output_config.effort on Claude Opus 4.5, which has no
	// adaptive thinking.
	ThinkingEffort = "effort"
)

// ThinkingKinds are the values of Model.Thinking, "" aside.
var ThinkingKinds = []string{ThinkingAdaptive, ThinkingAdaptiveAlways, ThinkingBudget, ThinkingLevel, ThinkingEffort}

// Model is what one model family accepts. The zero Model is the lenient
// one deputy uses for a model it does not know: every parameter and
// every effort accepted, no limit known.
type Model struct {
	// Refuses are the sampling parameters the provider answers with a 400
	// when they are set to anything but their default (Params' names).
	Refuses []string `json:"refuses,omitempty"`
	// SamplingEfforts, when set, narrows Refuses: the parameters are
	// accepted when the run's effort is one of these ("" is no effort set,
	// the provider's default). GPT-5.1 takes temperature at effort none,
	// its default; Claude Haiku 4.5 takes it while thinking is off.
	SamplingEfforts []string `json:"sampling_efforts,omitempty"`
	// Efforts are the effort values the model takes, lowest first. Empty:
	// any value is passed on (the table does not know), unless NoEffort.
	Efforts []string `json:"efforts,omitempty"`
	// NoEffort says the model takes no effort setting at all: it does not
	// reason, or its provider has no control for it.
	NoEffort bool `json:"no_effort,omitempty"`
	// DefaultEffort is the provider's own effort when none is sent, where
	// it is documented.
	DefaultEffort string `json:"default_effort,omitempty"`
	// Thinking is how the provider controls thinking (Thinking*), "" for
	// a model that does not think or that the table does not know.
	Thinking string `json:"thinking,omitempty"`
	// BudgetMin and BudgetMax bound a ThinkingBudget model's thinking
	// budget in tokens (BudgetMax 0: up to the output limit).
	BudgetMin int `json:"budget_min,omitempty"`
	BudgetMax int `json:"budget_max,omitempty"`
	// MaxOutput is the most output tokens one call may ask for (thinking
	// included where the provider counts it there); 0 when not known.
	MaxOutput int `json:"max_output,omitempty"`
	// Context is the context window in tokens; 0 when not known.
	Context int `json:"context,omitempty"`
	// Source says where the entry comes from and when it was read: a
	// provider's page, or "config.yaml" for an override.
	Source string `json:"source,omitempty"`
}

// Accepts reports whether the model takes the sampling parameter param
// when the run's effort is effort ("" for none set).
func (m Model) Accepts(param, effort string) bool {
	if !slices.Contains(m.Refuses, param) {
		return true
	}
	return slices.Contains(m.SamplingEfforts, effort)
}

// TakesEffort reports whether the model takes the effort value e.
func (m Model) TakesEffort(e string) bool {
	if m.NoEffort {
		return false
	}
	return len(m.Efforts) == 0 || slices.Contains(m.Efforts, e)
}

// Override is a config.yaml entry laid over the table: each field set
// replaces the matched entry's; the others keep it.
type Override struct {
	Refuses         *[]string
	SamplingEfforts *[]string
	Efforts         *[]string
	NoEffort        *bool
	DefaultEffort   *string
	Thinking        *string
	BudgetMin       *int
	BudgetMax       *int
	MaxOutput       *int
	Context         *int
}

// apply lays o over m.
func (o Override) apply(m Model) Model {
	set := func(dst *[]string, v *[]string) {
		if v != nil {
			*dst = slices.Clone(*v)
		}
	}
	set(&m.Refuses, o.Refuses)
	set(&m.SamplingEfforts, o.SamplingEfforts)
	set(&m.Efforts, o.Efforts)
	for _, f := range []struct {
		dst *int
		v   *int
	}{{&m.BudgetMin, o.BudgetMin}, {&m.BudgetMax, o.BudgetMax}, {&m.MaxOutput, o.MaxOutput}, {&m.Context, o.Context}} {
		if f.v != nil {
			*f.dst = *f.v
		}
	}
	if o.NoEffort != nil {
		m.NoEffort = *o.NoEffort
	}
	if o.DefaultEffort != nil {
		m.DefaultEffort = *o.DefaultEffort
	}
	if o.Thinking != nil {
		m.Thinking = *o.Thinking
	}
	if m.Source == "" {
		m.Source = "config.yaml"
	} else {
		m.Source += "; overridden in config.yaml"
	}
	return m
}

// Table is the embedded table with config.yaml's overrides. The zero
// Table (and a nil one) is the embedded table. It is read-only once built.
type Table struct {
	extra map[string]Override
}

// NewTable returns the embedded table with extra laid over it, keyed by
// "provider/model" like the table: an entry for a family in the table
// changes the fields it sets, others add families.
func NewTable(extra map[string]Override) *Table {
	return &Table{extra: extra}
}

// Overrides returns the entries laid over the embedded table, nil when
// there are none.
func (t *Table) Overrides() map[string]Override {
	if t == nil || len(t.extra) == 0 {
		return nil
	}
	return maps.Clone(t.extra)
}

// aliases are provider names that reach another provider's API with its
// models: axe's google is the Gemini API (llm/providers).
var aliases = map[string]string{"google": "gemini"}

// Lookup returns what model ("provider/model") accepts, and false when
// neither the table nor an override knows its family: the zero Model,
// which accepts everything. A family's key matches the model itself and
// every name that continues it after a '-' or '.' (a dated snapshot, a
// "-preview", a later point release): the longest matching key wins, and
// an override's key is matched the same way and laid over the table's
// entry.
func (t *Table) Lookup(model string) (Model, bool) {
	provider, name, ok := strings.Cut(model, "/")
	if !ok {
		return Model{}, false
	}
	if to, ok := aliases[provider]; ok {
		if _, own := t.lookup(model); !own {
			model = to + "/" + name
		}
	}
	return t.lookup(model)
}

// lookup is Lookup without aliases.
func (t *Table) lookup(model string) (Model, bool) {
	m, found := builtin[longest(model, maps.Keys(builtin))]
	if t != nil && len(t.extra) > 0 {
		if key := longest(model, maps.Keys(t.extra)); key != "" {
			return t.extra[key].apply(m), true
		}
	}
	return m, found
}

// longest returns the longest key that model equals or continues after a
// '-' or '.', or "".
func longest(model string, keys func(func(string) bool)) string {
	best := ""
	for k := range keys {
		if len(k) <= len(best) || !strings.HasPrefix(model, k) {
			continue
		}
		if rest := model[len(k):]; rest == "" || rest[0] == '-' || rest[0] == '.' {
			best = k
		}
	}
	return best
}

// Default is the embedded table.
var Default = &Table{}

// MaxOutput returns the output token limit of model ("provider/model") by
// the embedded table, and fallback when it is not known. Adapters call it
// for the max_tokens of a request that sets none.
func MaxOutput(model string, fallback int) int {
	return Default.MaxOutput(model, fallback)
}

// MaxOutput is the package's MaxOutput by t.
func (t *Table) MaxOutput(model string, fallback int) int {
	if m, ok := t.Lookup(model); ok && m.MaxOutput > 0 {
		return m.MaxOutput
	}
	return fallback
}

// Refusal is a setting of a run that its model does not take, and what
// became of it: left out of the request, or (max_tokens) lowered.
type Refusal struct {
	// Param is the setting: a sampling parameter, "effort" or
	// "max_tokens".
	Param string
	// Value is the setting as the run had it.
	Value string
	// Model is the "provider/model" that refuses it.
	Model string
	// Why says what the model takes instead.
	Why string
}

// String is the refusal as a warning, without the agent's name, which
// its caller puts in front.
func (r Refusal) String() string {
	if r.Param == "max_tokens" {
		return fmt.Sprintf("max_tokens %s is lowered to %s", r.Value, r.Why)
	}
	return fmt.Sprintf("%s %s is not sent: %s", r.Param, r.Value, r.Why)
}

// Fit returns p less what model ("provider/model") refuses, with one
// Refusal for each setting left out or narrowed: an effort the model does
// not take, a sampling parameter it refuses at the effort that is sent,
// and a max_tokens above its output limit (lowered to it). A model the
// table does not know keeps p whole.
func (t *Table) Fit(model string, p llm.Params) (llm.Params, []Refusal) {
	m, ok := t.Lookup(model)
	if !ok {
		return p, nil
	}
	var out []Refusal
	if e := p.Effort; e != "" && !m.TakesEffort(e) {
		why := model + " takes no effort setting"
		if !m.NoEffort {
			why = model + " takes " + strings.Join(m.Efforts, ", ")
		}
		out = append(out, Refusal{Param: "effort", Value: strconv.Quote(e), Model: model, Why: why})
		p.Effort = ""
	}
	if p.Temperature != nil && !m.Accepts(Temperature, p.Effort) {
		why := model + " refuses a temperature other than its default"
		if len(m.SamplingEfforts) > 0 {
			why += " at " + effortName(p.Effort)
		}
		out = append(out, Refusal{Param: Temperature, Value: strconv.FormatFloat(*p.Temperature, 'g', -1, 64), Model: model, Why: why})
		p.Temperature = nil
	}
	if p.MaxTokens != nil && m.MaxOutput > 0 && *p.MaxTokens > m.MaxOutput {
		out = append(out, Refusal{Param: "max_tokens", Value: strconv.Itoa(*p.MaxTokens), Model: model,
			Why: fmt.Sprintf("%d, %s's output limit", m.MaxOutput, model)})
		n := m.MaxOutput
		p.MaxTokens = &n
	}
	return p, out
}

// effortName names an effort in a refusal: "" is the provider's default.
func effortName(e string) string {
	if e == "" {
		return "its default effort"
	}
	return fmt.Sprintf("effort %q", e)
}

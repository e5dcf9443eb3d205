package capability

import (
	"reflect"

	"github.com/deputyhq/deputy/llm"
	"slices"
	"strings"
	"testing"
)

// lookup is Default.Lookup that fails the test when model has no entry.
func lookup(t *testing.T, model string) Model {
	t.Helper()
	m, ok := Default.Lookup(model)
	if !ok {
		t.Fatalf("Lookup(%q): not found", model)
	}
	return m
}

// The Claude 5 generation (Sonnet 5 and 5.5, Opus 5 and 5.5, Fable) and
// Opus 4.7 and 4.8 answer a non-default temperature, top_p or top_k with
// a 400 (whats-new-sonnet-5-5, the migration guides), at any effort.
func TestClaudeFiveRefusesSampling(t *testing.T) {
	for _, model := range []string{"anthropic/claude-sonnet-5-5", "anthropic/claude-sonnet-5", "anthropic/claude-opus-5-5",
		"anthropic/claude-opus-5", "anthropic/claude-fable-5-2", "anthropic/claude-fable-5-1", "anthropic/claude-opus-4-8", "anthropic/claude-opus-4-7"} {
		m := lookup(t, model)
		for _, p := range Params {
			for _, effort := range []string{"", "low", "max"} {
				if m.Accepts(p, effort) {
					t.Errorf("%s accepts %s at effort %q", model, p, effort)
				}
			}
		}
	}
}

// Claude 4.6 and earlier take sampling parameters; Haiku 4.5 and Sonnet
// 4.5 think by a budget, and with thinking on (an effort set) refuse a
// modified temperature or top_k (extended-thinking page).
func TestClaudeFourSampling(t *testing.T) {
	for _, model := range []string{"anthropic/claude-sonnet-4-6", "anthropic/claude-opus-4-6", "anthropic/claude-opus-4-5"} {
		if m := lookup(t, model); !m.Accepts(Temperature, "") || !m.Accepts(Temperature, "high") {
			t.Errorf("%s refuses temperature", model)
		}
	}
	for _, model := range []string{"anthropic/claude-haiku-4-5", "anthropic/claude-haiku-4-5-20251001", "anthropic/claude-sonnet-4-5"} {
		m := lookup(t, model)
		if !m.Accepts(Temperature, "") || !m.Accepts(TopP, "high") {
			t.Errorf("%s: temperature without thinking or top_p refused", model)
		}
		if m.Accepts(Temperature, "high") || m.Accepts(TopK, "low") {
			t.Errorf("%s: temperature or top_k accepted with thinking on", model)
		}
		if m.Thinking != ThinkingBudget || m.BudgetMin != 1024 {
			t.Errorf("%s: thinking %q, budget min %d; want budget from 1024", model, m.Thinking, m.BudgetMin)
		}
	}
}

// Effort values per Claude model (effort page): xhigh from Opus 4.7 and
// Sonnet 5 on, max from Opus 4.6 and Sonnet 4.6, Opus 4.5 low to high;
// Opus 5.5 defaults to medium, the others to high.
func TestClaudeEfforts(t *testing.T) {
	for _, tt := range []struct {
		model, effort string
		want          bool
	}{
		{"anthropic/claude-sonnet-5-5", "xhigh", true},
		{"anthropic/claude-sonnet-5-5", "max", true},
		{"anthropic/claude-opus-5-5", "low", true},
		{"anthropic/claude-fable-5-2", "xhigh", true},
		{"anthropic/claude-opus-4-7", "xhigh", true},
		{"anthropic/claude-opus-4-6", "max", true},
		{"anthropic/claude-opus-4-6", "xhigh", false},
		{"anthropic/claude-sonnet-4-6", "xhigh", false},
		{"anthropic/claude-opus-4-5", "high", true},
		{"anthropic/claude-opus-4-5", "max", false},
		{"anthropic/claude-sonnet-5", "minimal", false},
		{"anthropic/claude-sonnet-5", "none", false},
		{"anthropic/claude-3-5-haiku", "low", false},
	} {
		if got := lookup(t, tt.model).TakesEffort(tt.effort); got != tt.want {
			t.Errorf("%s takes effort %q: %v, want %v", tt.model, tt.effort, got, tt.want)
		}
	}
	if d := lookup(t, "anthropic/claude-opus-5-5").DefaultEffort; d != "medium" {
		t.Errorf("Opus 5.5's default effort %q, want medium", d)
	}
	if k := lookup(t, "anthropic/claude-opus-5-5").Thinking; k != ThinkingAdaptiveAlways {
		t.Errorf("Opus 5.5 thinking %q, want %q", k, ThinkingAdaptiveAlways)
	}
	if k := lookup(t, "anthropic/claude-sonnet-5-5").Thinking; k != ThinkingAdaptive {
		t.Errorf("Sonnet 5.5 thinking %q, want %q", k, ThinkingAdaptive)
	}
}

// Output limits and context windows (models overview, model pages).
func TestLimits(t *testing.T) {
	for _, tt := range []struct {
		model    string
		out, ctx int
	}{
		{"anthropic/claude-sonnet-5-5", 128_000, 1_000_000},
		{"anthropic/claude-opus-5-5", 128_000, 1_000_000},
		{"anthropic/claude-fable-5-2", 128_000, 1_000_000},
		{"anthropic/claude-haiku-4-5", 64_000, 200_000},
		{"anthropic/claude-opus-4-1-20250805", 32_000, 200_000},
		{"anthropic/claude-opus-4-20250514", 32_000, 200_000},
		{"anthropic/claude-sonnet-4-20250514", 64_000, 200_000},
		{"anthropic/claude-3-5-haiku-latest", 8_192, 200_000},
		{"anthropic/claude-3-haiku-20240307", 4_096, 200_000},
		{"openai/gpt-5.6", 128_000, 1_050_000},
		{"openai/gpt-5-mini", 128_000, 400_000},
		{"openai/gpt-4.1", 32_768, 1_047_576},
		{"openai/gpt-4.1-mini", 32_768, 1_047_576},
		{"openai/gpt-4o-mini", 16_384, 128_000},
		{"openai/o3", 100_000, 200_000},
		{"openai/o4-mini", 100_000, 200_000},
		{"gemini/gemini-3-pro-preview", 65_536, 1_048_576},
		{"gemini/gemini-2.5-flash-lite", 65_536, 1_048_576},
	} {
		m := lookup(t, tt.model)
		if m.MaxOutput != tt.out || m.Context != tt.ctx {
			t.Errorf("%s: max output %d, context %d; want %d, %d", tt.model, m.MaxOutput, m.Context, tt.out, tt.ctx)
		}
	}
}

// OpenAI's reasoning models take only the default temperature and top_p
// (reasoning guide); GPT-5.1 and 5.2 take them at effort none, their
// default, and 5.4 and 5.5 at effort none; gpt-5.6 never. The
// non-reasoning models take them.
func TestOpenAISampling(t *testing.T) {
	for _, tt := range []struct {
		model, effort string
		want          bool
	}{
		{"openai/gpt-5.6", "", false},
		{"openai/gpt-5.6", "none", false},
		{"openai/gpt-5.6-sol", "", false},
		{"openai/gpt-5", "", false},
		{"openai/gpt-5-2025-08-07", "minimal", false},
		{"openai/gpt-5.1", "", true},
		{"openai/gpt-5.1", "none", true},
		{"openai/gpt-5.1", "low", false},
		{"openai/gpt-5.2", "", true},
		{"openai/gpt-5.5", "none", true},
		{"openai/gpt-5.5", "", false},
		{"openai/gpt-5.4-mini", "high", false},
		{"openai/o3", "", false},
		{"openai/o3-mini", "", false},
		{"openai/gpt-4.1", "", true},
		{"openai/gpt-4o", "", true},
		{"openai/gpt-5-chat-latest", "", true},
	} {
		if got := lookup(t, tt.model).Accepts(Temperature, tt.effort); got != tt.want {
			t.Errorf("%s accepts temperature at effort %q: %v, want %v", tt.model, tt.effort, got, tt.want)
		}
	}
}

// OpenAI's effort values (reasoning guide, model pages): gpt-5 minimal
// to high; gpt-5.1 none to high; gpt-5.2 to 5.5 none to xhigh; gpt-5.6
// none to max; the o-series low to high; gpt-4.1 and gpt-4o none at all.
func TestOpenAIEfforts(t *testing.T) {
	for _, tt := range []struct {
		model, effort string
		want          bool
	}{
		{"openai/gpt-5", "minimal", true},
		{"openai/gpt-5", "none", false},
		{"openai/gpt-5", "xhigh", false},
		{"openai/gpt-5.1", "none", true},
		{"openai/gpt-5.1", "xhigh", false},
		{"openai/gpt-5.2", "xhigh", true},
		{"openai/gpt-5.5", "max", false},
		{"openai/gpt-5.6", "max", true},
		{"openai/gpt-5.6", "minimal", false},
		{"openai/o4-mini", "high", true},
		{"openai/o4-mini", "none", false},
		{"openai/gpt-4.1", "low", false},
		{"openai/gpt-4o", "high", false},
	} {
		if got := lookup(t, tt.model).TakesEffort(tt.effort); got != tt.want {
			t.Errorf("%s takes effort %q: %v, want %v", tt.model, tt.effort, got, tt.want)
		}
	}
}

// Gemini 3 Pro takes thinkingLevel low or high, 3 Flash minimal to high;
// Gemini 2.5 a thinking budget (thinking page); every Gemini takes the
// sampling parameters.
func TestGemini(t *testing.T) {
	pro := lookup(t, "gemini/gemini-3-pro-preview")
	if !pro.TakesEffort("low") || !pro.TakesEffort("high") || pro.TakesEffort("medium") || pro.Thinking != ThinkingLevel {
		t.Errorf("gemini-3-pro: %+v", pro)
	}
	if f := lookup(t, "gemini/gemini-3-flash"); !f.TakesEffort("minimal") || !f.TakesEffort("medium") {
		t.Errorf("gemini-3-flash: %+v", f)
	}
	// A later 3.x the table does not name: level thinking, any value.
	if m := lookup(t, "gemini/gemini-3.1-pro-preview"); m.Thinking != ThinkingLevel || !m.TakesEffort("medium") {
		t.Errorf("gemini-3.1-pro-preview: %+v", m)
	}
	for _, tt := range []struct {
		model    string
		min, max int
	}{{"gemini/gemini-2.5-pro", 128, 32_768}, {"gemini/gemini-2.5-flash", 0, 24_576}, {"gemini/gemini-2.5-flash-lite", 512, 24_576}} {
		m := lookup(t, tt.model)
		if m.Thinking != ThinkingBudget || m.BudgetMin != tt.min || m.BudgetMax != tt.max {
			t.Errorf("%s: %+v", tt.model, m)
		}
	}
	for _, model := range []string{"gemini/gemini-3-pro", "gemini/gemini-2.5-flash", "google/gemini-2.5-pro"} {
		m := lookup(t, model)
		for _, p := range Params {
			if !m.Accepts(p, "high") {
				t.Errorf("%s refuses %s", model, p)
			}
		}
	}
}

// A family's key matches the model and what continues it after '-' or
// '.', the longest key winning; nothing else.
func TestFamilyMatching(t *testing.T) {
	for _, tt := range []struct{ model, want string }{
		{"anthropic/claude-opus-5-5", "adaptive-always"}, // not claude-opus-5's
		{"anthropic/claude-opus-5", "adaptive"},
		{"anthropic/claude-opus-5-20260724", "adaptive"},
		{"openai/gpt-5.4-mini-2026-03-01", "effort"},
	} {
		if got := lookup(t, tt.model).Thinking; got != tt.want {
			t.Errorf("%s: thinking %q, want %q", tt.model, got, tt.want)
		}
	}
	for _, model := range []string{"anthropic/claude-opus-55", "openai/gpt-4oo", "openai/o30", "ollama/llama3", "gpt-5.6", "", "local/claude-sonnet-5-5"} {
		if m, ok := Default.Lookup(model); ok {
			t.Errorf("Lookup(%q) = %+v, want not found", model, m)
		}
	}
	if lookup(t, "openai/gpt-5.6-luna").Context != 400_000 {
		t.Error("gpt-5.6-luna has gpt-5.6's context")
	}
}

// A model deputy does not know accepts every parameter and effort and
// has no known limit: the zero Model.
func TestUnknownIsLenient(t *testing.T) {
	m, ok := Default.Lookup("ollama/qwen3:32b")
	if ok {
		t.Fatal("an Ollama model is known")
	}
	for _, p := range Params {
		if !m.Accepts(p, "high") {
			t.Errorf("unknown model refuses %s", p)
		}
	}
	if !m.TakesEffort("whatever") || m.MaxOutput != 0 || m.Context != 0 {
		t.Errorf("unknown model: %+v", m)
	}
	if got := MaxOutput("ollama/qwen3:32b", 4096); got != 4096 {
		t.Errorf("MaxOutput of an unknown model = %d, want the fallback", got)
	}
	if got := MaxOutput("anthropic/claude-sonnet-5-5", 4096); got != 128_000 {
		t.Errorf("MaxOutput(claude-sonnet-5-5) = %d", got)
	}
}

// An override changes the fields it sets on its family's entry, keeps the
// others, and adds a family the table lacks.
func TestOverrides(t *testing.T) {
	out := 64_000
	none := []string{}
	efforts := []string{"low", "high"}
	tab := NewTable(map[string]Override{
		"anthropic/claude-sonnet-5-5": {MaxOutput: &out},
		"openai/gpt-5.6":              {Refuses: &none},
		"local/qwen3":                 {Efforts: &efforts, MaxOutput: &out},
	})
	m, _ := tab.Lookup("anthropic/claude-sonnet-5-5-20260930")
	if m.MaxOutput != 64_000 || m.Context != 1_000_000 || m.Accepts(Temperature, "") {
		t.Errorf("overridden sonnet 5.5: %+v", m)
	}
	if !strings.Contains(m.Source, "config.yaml") {
		t.Errorf("source %q does not say config.yaml", m.Source)
	}
	if m, _ := tab.Lookup("openai/gpt-5.6"); !m.Accepts(Temperature, "high") {
		t.Errorf("gpt-5.6 with refuses: [] still refuses temperature")
	}
	m, ok := tab.Lookup("local/qwen3-coder")
	if !ok || !m.TakesEffort("low") || m.TakesEffort("medium") || m.Source != "config.yaml" || tab.MaxOutput("local/qwen3", 1) != 64_000 {
		t.Errorf("added family: %+v %v", m, ok)
	}
	// The embedded table is unchanged.
	if m := lookup(t, "anthropic/claude-sonnet-5-5"); m.MaxOutput != 128_000 {
		t.Errorf("the override leaked into the embedded table: %+v", m)
	}
	if got := tab.Overrides(); len(got) != 3 {
		t.Errorf("Overrides() = %v", got)
	}
	if (*Table)(nil).Overrides() != nil || NewTable(nil).Overrides() != nil {
		t.Error("no overrides, but Overrides() is not nil")
	}
}

// Every entry says where it comes from, and its effort values are ones
// some provider documents.
func TestEntriesAreSourced(t *testing.T) {
	known := []string{"none", "minimal", "low", "medium", "high", "xhigh", "max"}
	for key, m := range builtin {
		if m.Source == "" {
			t.Errorf("%s has no source", key)
		}
		if m.MaxOutput <= 0 {
			t.Errorf("%s has no output limit", key)
		}
		for _, e := range append(slices.Clone(m.Efforts), m.DefaultEffort) {
			if e != "" && !slices.Contains(known, e) {
				t.Errorf("%s: effort %q", key, e)
			}
		}
		if m.DefaultEffort != "" && len(m.Efforts) > 0 && !slices.Contains(m.Efforts, m.DefaultEffort) {
			t.Errorf("%s: default effort %q is not among its efforts", key, m.DefaultEffort)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// Fit leaves out what the model refuses and says so, one Refusal each.
func TestFit(t *testing.T) {
	for _, tt := range []struct {
		model string
		in    llm.Params
		want  llm.Params
		says  []string
	}{
		{"anthropic/claude-sonnet-5-5", llm.Params{Temperature: ptr(0.2), Effort: "high"}, llm.Params{Effort: "high"},
			[]string{"temperature 0.2 is not sent: anthropic/claude-sonnet-5-5 refuses a temperature other than its default"}},
		{"openai/gpt-5.6", llm.Params{Temperature: ptr(0.0)}, llm.Params{},
			[]string{"temperature 0 is not sent: openai/gpt-5.6 refuses a temperature other than its default"}},
		// An effort the model does not take goes first; the temperature is
		// then judged at the provider's default effort.
		{"openai/gpt-5.1", llm.Params{Temperature: ptr(0.5), Effort: "xhigh"}, llm.Params{Temperature: ptr(0.5)},
			[]string{`effort "xhigh" is not sent: openai/gpt-5.1 takes none, low, medium, high`}},
		{"openai/gpt-5.1", llm.Params{Temperature: ptr(0.5), Effort: "low"}, llm.Params{Effort: "low"},
			[]string{`temperature 0.5 is not sent: openai/gpt-5.1 refuses a temperature other than its default at effort "low"`}},
		{"openai/gpt-4.1", llm.Params{Temperature: ptr(0.5), Effort: "low"}, llm.Params{Temperature: ptr(0.5)},
			[]string{`effort "low" is not sent: openai/gpt-4.1 takes no effort setting`}},
		{"anthropic/claude-haiku-4-5", llm.Params{MaxTokens: ptr(100_000)}, llm.Params{MaxTokens: ptr(64_000)},
			[]string{"max_tokens 100000 is lowered to 64000, anthropic/claude-haiku-4-5's output limit"}},
		{"anthropic/claude-sonnet-4-6", llm.Params{Temperature: ptr(0.2), Effort: "max", MaxTokens: ptr(64_000)},
			llm.Params{Temperature: ptr(0.2), Effort: "max", MaxTokens: ptr(64_000)}, nil},
		{"ollama/llama3", llm.Params{Temperature: ptr(0.2), Effort: "extreme", MaxTokens: ptr(1 << 30)},
			llm.Params{Temperature: ptr(0.2), Effort: "extreme", MaxTokens: ptr(1 << 30)}, nil},
	} {
		got, refusals := Default.Fit(tt.model, tt.in)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Fit(%s, %+v) = %+v, want %+v", tt.model, tt.in, got, tt.want)
		}
		var says []string
		for _, r := range refusals {
			says = append(says, r.String())
			if r.Model != tt.model {
				t.Errorf("refusal %+v names another model", r)
			}
		}
		if !slices.Equal(says, tt.says) {
			t.Errorf("Fit(%s, %+v) says %q, want %q", tt.model, tt.in, says, tt.says)
		}
	}
}

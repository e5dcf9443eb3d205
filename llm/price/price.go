// Package price turns token usage into US dollars with a dated table of the
// providers' published prices. A model that is not in the table has no
// cost (ok false): deputy shows null rather than a guess.
package price

import (
	"maps"
	"regexp"
	"strings"

	"github.com/deputyhq/deputy/llm"
)

// Price is one model's price in US dollars per million tokens. Cache
// prices of zero mean the provider has none: those tokens are priced as
// input.
type Price struct {
	Input      float64
	Output     float64
	CacheRead  float64
	CacheWrite float64
	// WebSearch is the price of the provider's own web search in US
	// dollars per 1,000 searches (llm.Usage.WebSearches), billed besides
	// the tokens its results add to the input.
	WebSearch float64 `json:",omitempty"`
	// Long, when set, is the whole call's price once its input (cached
	// tokens included) is more than LongOver tokens: the long-context tier
	// some providers bill (Gemini 2.5 Pro, Claude Sonnet 4 and 4.5 above
	// 200k input tokens).
	Long     *Price `json:",omitempty"`
	LongOver int64  `json:",omitempty"`
}

// AsOf is when the embedded table was transcribed from its sources (the
// Claude 5 and 5.5 entries were added later, on the date their source
// says). Prices change: check them, and override or extend the table where
// they differ.
const AsOf = "2026-06"

// Sources are the pages the embedded table was transcribed from.
var Sources = []string{
	"https://platform.claude.com/docs/en/about-claude/pricing (base input, 5-minute cache writes, cache hits, output; Sonnet 4 and 4.5's long-context prices above 200k input tokens)",
	"https://platform.claude.com/docs/en/models/opus-5/overview and the overview pages of opus-5-5, sonnet-5 and sonnet-5-5 (read 2026-11-28: Claude Opus 5 and 5.5, Sonnet 5 and 5.5, the models Claude Code's opus and sonnet aliases name; no long-context tier)",
	"https://platform.openai.com/docs/pricing (input, cached input, output; standard tier)",
	"https://ai.google.dev/gemini-api/docs/pricing (paid tier; Gemini 2.5 Pro's prompts over 200k tokens at their own price; cache storage not included)",
	"https://platform.claude.com/docs/en/agents-and-tools/tool-use/web-search-tool and the pricing page's tool use section (read 2026-11-28: web search $10 per 1,000 searches on every model that has it, besides the tokens of its results)",
	"https://developers.openai.com/api/docs/pricing and guides/tools-web-search (read 2026-11-28: the web_search tool, $10 per 1,000 calls besides the tokens of its results, on every model that has it; gpt-4.1-nano has none)",
}

// anthropicSearch is Anthropic's web search tool, and openAISearch the
// Responses API's, in US dollars per 1,000 searches (Sources).
const (
	anthropicSearch = 10
	openAISearch    = 10
)

// builtin is keyed by "provider/model" as written in deputy's model strings.
var builtin = map[string]Price{
	"anthropic/claude-opus-5-5":   {Input: 4, Output: 20, CacheRead: 0.20, CacheWrite: 5, WebSearch: anthropicSearch},
	"anthropic/claude-opus-5":     {Input: 5, Output: 25, CacheRead: 0.50, CacheWrite: 6.25, WebSearch: anthropicSearch},
	"anthropic/claude-sonnet-5-5": {Input: 2, Output: 10, CacheRead: 0.20, CacheWrite: 2.50, WebSearch: anthropicSearch},
	"anthropic/claude-sonnet-5":   {Input: 2, Output: 10, CacheRead: 0.20, CacheWrite: 2.50, WebSearch: anthropicSearch},
	"anthropic/claude-opus-4-8":   {Input: 5, Output: 25, CacheRead: 0.50, CacheWrite: 6.25, WebSearch: anthropicSearch},
	"anthropic/claude-opus-4-7":   {Input: 5, Output: 25, CacheRead: 0.50, CacheWrite: 6.25, WebSearch: anthropicSearch},
	"anthropic/claude-opus-4-6":   {Input: 5, Output: 25, CacheRead: 0.50, CacheWrite: 6.25, WebSearch: anthropicSearch},
	"anthropic/claude-opus-4-5":   {Input: 5, Output: 25, CacheRead: 0.50, CacheWrite: 6.25, WebSearch: anthropicSearch},
	"anthropic/claude-opus-4-1":   {Input: 15, Output: 75, CacheRead: 1.50, CacheWrite: 18.75},
	"anthropic/claude-opus-4-0":   {Input: 15, Output: 75, CacheRead: 1.50, CacheWrite: 18.75},
	"anthropic/claude-opus-4":     {Input: 15, Output: 75, CacheRead: 1.50, CacheWrite: 18.75},
	"anthropic/claude-sonnet-4-6": {Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75, WebSearch: anthropicSearch},
	"anthropic/claude-sonnet-4-5": sonnetLong,
	"anthropic/claude-sonnet-4-0": sonnetLong,
	"anthropic/claude-sonnet-4":   sonnetLong,
	"anthropic/claude-3-7-sonnet": {Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75},
	"anthropic/claude-haiku-4-5":  {Input: 1, Output: 5, CacheRead: 0.10, CacheWrite: 1.25, WebSearch: anthropicSearch},
	"anthropic/claude-3-5-haiku":  {Input: 0.80, Output: 4, CacheRead: 0.08, CacheWrite: 1},
	"anthropic/claude-3-haiku":    {Input: 0.25, Output: 1.25, CacheRead: 0.03, CacheWrite: 0.30},

	"openai/gpt-5.5":      {Input: 5, Output: 30, CacheRead: 0.50, WebSearch: openAISearch},
	"openai/gpt-5.4":      {Input: 2.50, Output: 15, CacheRead: 0.25, WebSearch: openAISearch},
	"openai/gpt-5.4-mini": {Input: 0.75, Output: 4.50, CacheRead: 0.075, WebSearch: openAISearch},
	"openai/gpt-5.4-nano": {Input: 0.20, Output: 1.25, CacheRead: 0.02, WebSearch: openAISearch},
	"openai/gpt-5":        {Input: 1.25, Output: 10, CacheRead: 0.125, WebSearch: openAISearch},
	"openai/gpt-5-mini":   {Input: 0.25, Output: 2, CacheRead: 0.025, WebSearch: openAISearch},
	"openai/gpt-5-nano":   {Input: 0.05, Output: 0.40, CacheRead: 0.005, WebSearch: openAISearch},
	"openai/gpt-4.1":      {Input: 2, Output: 8, CacheRead: 0.50, WebSearch: openAISearch},
	"openai/gpt-4.1-mini": {Input: 0.40, Output: 1.60, CacheRead: 0.10, WebSearch: openAISearch},
	"openai/gpt-4.1-nano": {Input: 0.10, Output: 0.40, CacheRead: 0.025},
	"openai/gpt-4o":       {Input: 2.50, Output: 10, CacheRead: 1.25, WebSearch: openAISearch},
	// The first gpt-4o snapshot keeps its own, higher price (and no cached
	// rate): a dated name must not take the undated entry's.
	"openai/gpt-4o-2024-05-13": {Input: 5, Output: 15},
	"openai/gpt-4o-mini":       {Input: 0.15, Output: 0.60, CacheRead: 0.075, WebSearch: openAISearch},
	"openai/o3":                {Input: 2, Output: 8, CacheRead: 0.50, WebSearch: openAISearch},
	"openai/o4-mini":           {Input: 1.10, Output: 4.40, CacheRead: 0.275, WebSearch: openAISearch},

	"gemini/gemini-2.5-pro": {Input: 1.25, Output: 10, CacheRead: 0.125,
		LongOver: 200_000, Long: &Price{Input: 2.50, Output: 15, CacheRead: 0.25}},
	"gemini/gemini-2.5-flash":      {Input: 0.30, Output: 2.50, CacheRead: 0.03},
	"gemini/gemini-2.5-flash-lite": {Input: 0.10, Output: 0.40, CacheRead: 0.01},
}

// sonnetLong is Claude Sonnet 4 and 4.5: above 200k input tokens (the 1M
// context window) every token of the call costs more.
var sonnetLong = Price{Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75, WebSearch: anthropicSearch,
	LongOver: 200_000, Long: &Price{Input: 6, Output: 22.50, CacheRead: 0.60, CacheWrite: 7.50}}

// Table prices models: the embedded table, with overrides and additions.
// The zero Table is the embedded one. It is read-only once built.
type Table struct {
	extra map[string]Price
}

// NewTable returns the embedded table with extra prices laid over it: an
// entry for a model in the table replaces its price, others add models.
func NewTable(extra map[string]Price) *Table {
	return &Table{extra: extra}
}

// Overrides returns the prices laid over the embedded table (NewTable's
// extra), nil when there are none: with the embedded table, all a table
// is.
func (t *Table) Overrides() map[string]Price {
	if t == nil || len(t.extra) == 0 {
		return nil
	}
	return maps.Clone(t.extra)
}

// dated matches the suffix of a dated or pinned model name
// ("-20250929", "-2025-08-07", "-latest"): the same model, the same price.
var dated = regexp.MustCompile(`-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$`)

// aliases are provider names that reach another provider's API with its
// models and prices: axe's google is the Gemini API (llm/providers).
var aliases = map[string]string{"google": "gemini"}

// Lookup returns the price of model ("provider/model"). A dated name finds
// its undated entry, and a provider alias (google/) the entry of the
// provider it stands for when it has none of its own; nothing else is
// matched loosely, so a model deputy does not know is never priced like a
// neighbour.
func (t *Table) Lookup(model string) (Price, bool) {
	if p, ok := t.lookupDated(model); ok {
		return p, true
	}
	if provider, name, ok := strings.Cut(model, "/"); ok {
		if to, ok := aliases[provider]; ok {
			return t.lookupDated(to + "/" + name)
		}
	}
	return Price{}, false
}

// lookupDated is Lookup without aliases.
func (t *Table) lookupDated(model string) (Price, bool) {
	if p, ok := t.lookup(model); ok {
		return p, true
	}
	if n := len(model); n == 0 || !(model[n-1] >= '0' && model[n-1] <= '9' || strings.HasSuffix(model, "-latest")) {
		// Not dated (the regexp would not match): every model call of
		// every run asks, a scripted model's path among them.
		return Price{}, false
	}
	if undated := dated.ReplaceAllString(model, ""); undated != model {
		return t.lookup(undated)
	}
	return Price{}, false
}

// lookup is Lookup of name exactly.
func (t *Table) lookup(name string) (Price, bool) {
	if t != nil {
		if p, ok := t.extra[name]; ok {
			return p, true
		}
	}
	p, ok := builtin[name]
	return p, ok
}

// Cost returns what usage of model cost in US dollars, and false when the
// model has no price.
func (t *Table) Cost(model string, u llm.Usage) (float64, bool) {
	p, ok := t.Lookup(model)
	if !ok {
		return 0, false
	}
	search := p.WebSearch
	if p.Long != nil && p.LongOver > 0 && u.InputTokens > p.LongOver {
		p = *p.Long
	}
	read, write := u.CacheReadTokens, u.CacheWriteTokens
	if p.CacheRead == 0 {
		read = 0
	}
	if p.CacheWrite == 0 {
		write = 0
	}
	plain := max(u.InputTokens-read-write, 0)
	usd := float64(plain)*p.Input + float64(read)*p.CacheRead + float64(write)*p.CacheWrite + float64(u.OutputTokens)*p.Output
	return usd/1e6 + float64(u.WebSearches)*search/1000, true
}

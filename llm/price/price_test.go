package price

import (
	"math"
	"testing"

	"github.com/deputyhq/deputy/llm"
)

func TestCost(t *testing.T) {
	tab := NewTable(map[string]Price{"openai/gpt-4.1": {Input: 1, Output: 1}, "local/qwen": {Input: 0.5, Output: 0.5},
		"google/gemini-2.5-flash-lite": {Input: 7, Output: 7}})
	for _, tt := range []struct {
		model string
		u     llm.Usage
		want  float64
		ok    bool
	}{
		// 100k plain input at $3 + 100k output at $15 a million, on a
		// dated name.
		{"anthropic/claude-sonnet-4-5-20250929", llm.Usage{InputTokens: 1e5, OutputTokens: 1e5}, 1.8, true},
		// A pinned name and a name dated with dashes find the same entry.
		{"anthropic/claude-sonnet-4-5-latest", llm.Usage{OutputTokens: 1e6}, 15, true},
		{"openai/gpt-5-2025-08-07", llm.Usage{InputTokens: 1e6}, 1.25, true},
		// Long-context tiers: above 200k input tokens (cached included)
		// the whole call is priced at the higher rates; at 200k, not.
		{"gemini/gemini-2.5-pro", llm.Usage{InputTokens: 200_000, OutputTokens: 1e6}, 0.2*1.25 + 10, true},
		{"gemini/gemini-2.5-pro", llm.Usage{InputTokens: 300_000, CacheReadTokens: 100_000, OutputTokens: 1e6}, 0.2*2.50 + 0.1*0.25 + 15, true},
		{"anthropic/claude-sonnet-4-5-20250929", llm.Usage{InputTokens: 400_000, CacheReadTokens: 100_000, CacheWriteTokens: 100_000, OutputTokens: 1e6}, 0.2*6 + 0.1*0.60 + 0.1*7.50 + 22.50, true},
		{"anthropic/claude-sonnet-4", llm.Usage{InputTokens: 100_000}, 0.1 * 3, true},
		// A snapshot priced apart from its undated name keeps its price.
		{"openai/gpt-4o-2024-08-06", llm.Usage{InputTokens: 1e6, OutputTokens: 1e6}, 12.5, true},
		{"openai/gpt-4o-2024-05-13", llm.Usage{InputTokens: 1e6, OutputTokens: 1e6, CacheReadTokens: 5e5}, 20, true},
		// Of 100k input, 40k cache reads ($0.30) and 10k cache writes ($3.75).
		{"anthropic/claude-sonnet-4-5", llm.Usage{InputTokens: 1e5, CacheReadTokens: 4e4, CacheWriteTokens: 1e4}, 0.05*3 + 0.04*0.30 + 0.01*3.75, true},
		// Claude 5 and 5.5, the models Claude Code's sonnet and opus
		// aliases name: 400k input (100k of them cache reads, 100k cache
		// writes) and 1M output, no long-context tier; Opus 5.5 is cheaper
		// than Opus 5, and its own entry, not Opus 5's.
		{"anthropic/claude-sonnet-5", llm.Usage{InputTokens: 400_000, CacheReadTokens: 100_000, CacheWriteTokens: 100_000, OutputTokens: 1e6}, 0.2*2 + 0.1*0.20 + 0.1*2.50 + 10, true},
		{"anthropic/claude-sonnet-5-5", llm.Usage{InputTokens: 1e6, OutputTokens: 1e6}, 12, true},
		{"anthropic/claude-opus-5", llm.Usage{InputTokens: 1e5, CacheReadTokens: 5e4, OutputTokens: 1e5}, 0.05*5 + 0.05*0.50 + 0.1*25, true},
		{"anthropic/claude-opus-5-5", llm.Usage{InputTokens: 1e5, CacheReadTokens: 5e4, CacheWriteTokens: 5e4, OutputTokens: 1e5}, 0.05*0.20 + 0.05*5 + 0.1*20, true},
		// Anthropic's web search: $10 per 1,000 searches besides the
		// tokens, at the long-context tier too; a model without a search
		// price counts none.
		{"anthropic/claude-sonnet-5-5", llm.Usage{InputTokens: 1e6, OutputTokens: 1e6, WebSearches: 3}, 12 + 0.03, true},
		{"anthropic/claude-sonnet-4-5", llm.Usage{InputTokens: 300_000, WebSearches: 1000}, 0.3*6 + 10, true},
		{"openai/gpt-4.1-nano", llm.Usage{WebSearches: 5}, 0, true},
		{"openai/gpt-5.5", llm.Usage{WebSearches: 5}, 0.05, true},
		// OpenAI has no cache-write price: written tokens are plain input.
		{"openai/gpt-5", llm.Usage{InputTokens: 1e6, CacheWriteTokens: 1e6}, 1.25, true},
		// Overridden and added prices.
		{"openai/gpt-4.1", llm.Usage{InputTokens: 1e6, OutputTokens: 1e6}, 2, true},
		{"local/qwen", llm.Usage{InputTokens: 2e6}, 1, true},
		// google/ is axe's name for the Gemini API: Gemini's prices,
		// dated names too.
		{"google/gemini-2.5-flash", llm.Usage{InputTokens: 1e6, OutputTokens: 1e6}, 0.30 + 2.50, true},
		{"google/gemini-2.5-pro-latest", llm.Usage{OutputTokens: 1e6}, 10, true},
		{"google/gemini-9", llm.Usage{InputTokens: 5}, 0, false},
		// An entry under google/ itself wins over Gemini's.
		{"google/gemini-2.5-flash-lite", llm.Usage{InputTokens: 1e6}, 7, true},
		{"gemini/gemini-2.5-flash-lite", llm.Usage{InputTokens: 1e6}, 0.10, true},
		// Unknown models, and near misses, have no price.
		{"openai/gpt-test", llm.Usage{InputTokens: 5}, 0, false},
		{"anthropic/claude-opus-4-9", llm.Usage{InputTokens: 5}, 0, false},
		{"script/x.yaml", llm.Usage{}, 0, false},
	} {
		got, ok := tab.Cost(tt.model, tt.u)
		if ok != tt.ok || math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("Cost(%s, %+v) = %v, %v; want %v, %v", tt.model, tt.u, got, ok, tt.want, tt.ok)
		}
	}
	var zero *Table
	if _, ok := zero.Lookup("openai/gpt-5"); !ok {
		t.Error("a nil table does not know the embedded prices")
	}
}

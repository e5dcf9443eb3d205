package gemini

import (
	"strings"

	"google.golang.org/genai"

	"github.com/deputyhq/deputy/llm/capability"
)

// Effort on Gemini (ai.google.dev thinking page and the capability table,
// read 2026-11-28): Gemini 3 takes a thinkingLevel, the effort as is;
// Gemini 2.5 a thinkingBudget in tokens, for which deputy's low, medium
// and high are the budgets Google's OpenAI compatibility layer maps
// reasoning_effort to (1,024, 8,192 and 24,576), within the model's range.
// A thinking model is asked for its thought summaries (includeThoughts),
// which deputy shows as the model's reasoning.
var effortBudget = map[string]int32{"none": 0, "minimal": 0, "low": 1024, "medium": 8192, "high": 24576}

// thinkingConfig is the request's thinking settings for model and effort
// ("" leaves the level or budget to the model), nil when there are none;
// caps says how the model thinks.
func thinkingConfig(caps *capability.Table, model, effort string) *genai.ThinkingConfig {
	m, known := caps.Lookup("gemini/" + strings.TrimPrefix(model, "models/"))
	switch {
	case known && m.Thinking == capability.ThinkingLevel:
		c := &genai.ThinkingConfig{IncludeThoughts: true}
		if effort != "" {
			c.ThinkingLevel = genai.ThinkingLevel(strings.ToUpper(effort))
		}
		return c
	case known && m.Thinking == capability.ThinkingBudget:
		c := &genai.ThinkingConfig{IncludeThoughts: true}
		if b, ok := effortBudget[effort]; ok {
			b = max(b, int32(m.BudgetMin))
			if m.BudgetMax > 0 {
				b = min(b, int32(m.BudgetMax))
			}
			c.ThinkingBudget = &b
		}
		return c
	case effort != "":
		// A model the table does not know: today's control, as asked.
		return &genai.ThinkingConfig{ThinkingLevel: genai.ThinkingLevel(strings.ToUpper(effort))}
	}
	return nil
}

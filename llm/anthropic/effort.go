package anthropic

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"

	sdk "github.com/anthropics/anthropic-sdk-go"

	"github.com/deputyhq/deputy/llm/capability"
)

// Effort and thinking, by how the capability table says the model's
// thinking is controlled (platform.claude.com: build-with-claude/effort,
// build-with-claude/thinking, the Sonnet 5.5, Opus 5.5 and Opus 5
// whats-new pages and the Sonnet 5.5 migration guide, read 2026-11-28):
//
//   - adaptive (Sonnet 5 and 5.5, Opus 5, Opus 4.6 to 4.8) and
//     adaptive-always (Opus 5.5, Fable): Params.Effort is sent as
//     output_config.effort. The Claude 5 models think adaptively by
//     default; the request says so with thinking {"type": "adaptive",
//     "display": "summarized"}, because their default display,
//     "omitted", returns thinking blocks with empty text, and the 5.5
//     models return the text they write between tool calls in thinking
//     blocks too: "summarized" is what makes both readable
//     (Message.Reasoning). The 4.x models think only when asked: with an
//     effort set they are asked the same way. Thinking is never disabled
//     (a 400 on Sonnet 5.5 and Opus 5.5) and never given a budget (a 400
//     on every adaptive model).
//   - effort (Opus 4.5): output_config.effort alone.
//   - budget (Sonnet 4.5, Haiku 4.5 and earlier): an effort turns
//     thinking on with a budget (thinkingBudgets), below max_tokens and
//     at least the model's minimum; without an effort thinking stays off,
//     as those models default to.
//   - unknown to the table (another server's model over this wire): the
//     effort is sent as output_config.effort as given, and the server
//     answers for it.
//
// An effort the model does not take becomes the nearest level it takes
// below it (xhigh on Opus 4.6 is high), or its lowest ("none" and
// "minimal", OpenAI's, are low): deputy's effort is a preference, and
// the engine warns about values a model does not take.

// effortLevels are deputy's effort values, lowest first.
var effortLevels = []string{"none", "minimal", "low", "medium", "high", "xhigh", "max"}

// thinkingBudgets are the thinking budgets, in tokens, of deputy's
// effort levels on a model with budget thinking.
var thinkingBudgets = map[string]int{"low": 4096, "medium": 16384, "high": 32768}

// summarized asks for thinking whose text is readable.
var summarized = sdk.ThinkingConfigParamUnion{OfAdaptive: &sdk.ThinkingConfigAdaptiveParam{Display: sdk.ThinkingConfigAdaptiveDisplaySummarized}}

// applyThinking sets params' thinking and effort for model by its
// capabilities and the requested effort ("" for the provider's default).
func applyThinking(params *sdk.MessageNewParams, name string, model capability.Model, effort string) error {
	if effort != "" && !slices.Contains(effortLevels, effort) {
		return fmt.Errorf("effort %q is not one of %v", effort, effortLevels)
	}
	level := nearestEffort(effort, model.Efforts)
	switch model.Thinking {
	case capability.ThinkingAdaptive, capability.ThinkingAdaptiveAlways:
		if effort != "" || model.Thinking == capability.ThinkingAdaptiveAlways || thinksByDefault(name) {
			params.Thinking = summarized
		}
		params.OutputConfig.Effort = sdk.OutputConfigEffort(level)
	case capability.ThinkingEffort:
		params.OutputConfig.Effort = sdk.OutputConfigEffort(level)
	case capability.ThinkingBudget:
		if effort == "" || effort == "none" {
			return nil
		}
		ceiling := int(params.MaxTokens) - 1
		if model.BudgetMax > 0 {
			ceiling = min(ceiling, model.BudgetMax)
		}
		budget := min(thinkingBudgets[level], ceiling)
		if budget >= max(model.BudgetMin, 1) {
			params.Thinking = sdk.ThinkingConfigParamOfEnabled(int64(budget))
		}
	default:
		if model.NoEffort {
			return nil
		}
		params.OutputConfig.Effort = sdk.OutputConfigEffort(effort)
	}
	return nil
}

// nearestEffort is effort if takes has it (or takes is empty), else the
// highest level of takes below it, else the lowest of takes.
func nearestEffort(effort string, takes []string) string {
	if effort == "" || len(takes) == 0 || slices.Contains(takes, effort) {
		return effort
	}
	at := slices.Index(effortLevels, effort)
	best := ""
	for _, t := range takes {
		if i := slices.Index(effortLevels, t); i >= 0 && i < at && (best == "" || i > slices.Index(effortLevels, best)) {
			best = t
		}
	}
	if best == "" {
		best = takes[0]
	}
	return best
}

// claudeGeneration reads a Claude model's major version from its name.
var claudeGeneration = regexp.MustCompile(`^claude-[a-z]+-(\d+)`)

// thinksByDefault reports whether the model thinks when a request says
// nothing of thinking: the Claude 5 models do, the 4.x models do not
// (Opus 5 whats-new page, Sonnet 5.5 migration guide).
func thinksByDefault(name string) bool {
	m := claudeGeneration.FindStringSubmatch(name)
	if m == nil {
		return false
	}
	n, _ := strconv.Atoi(m[1])
	return n >= 5
}

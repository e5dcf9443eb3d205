package llmtest

import (
	"regexp"
	"slices"
)

// anModel is what the fake knows of one Anthropic model family: the rules
// its provider documents for it, which the fake enforces with the
// provider's 400, and how the model answers (thinking blocks and how they
// show). The zero anModel is a model the fake knows nothing of
// ("conformance-model", "claude-haiku-4-5", ...): no rule is enforced and
// it thinks only when a request asks it to, as before.
//
// Read 2026-11-28 from platform.claude.com (English pages):
//
//   - models/sonnet-5-5/whats-new-sonnet-5-5 and models/sonnet-5-5/migration-guide:
//     adaptive thinking is on by default; thinking budgets, non-default
//     sampling parameters, assistant prefill, forced tool choice and
//     thinking {"type": "disabled"} return 400 (disabled points to
//     between_tools, the lowest setting, which returns 400 at effort
//     xhigh or max); thinking blocks are tied to the model and the
//     conversation; text between tool calls comes back in thinking
//     blocks; display defaults to "omitted".
//   - models/opus-5-5/whats-new-opus-5-5: thinking cannot be disabled,
//     forced tool use returns an error, thinking blocks are tied to the
//     model and the conversation (these three also on Fable 5.1), text
//     between tool calls comes back in thinking blocks, empty under the
//     default display.
//   - models/sonnet-5/migration-guide and models/opus-5/whats-new-opus-5:
//     thinking is adaptive and on by default, the budget form
//     (thinking {"type": "enabled"}) and non-default temperature, top_p
//     and top_k return 400; Opus 5 disables thinking only at effort high
//     or below; its smallest cacheable prompt is 512 tokens.
//   - build-with-claude/preserved-thinking: from Fable 5.1 on, a returned
//     thinking or redacted_thinking block's signature is checked for the
//     model (a block the model cannot read is dropped without an error)
//     and for its prefix (system, tools and the messages before it): a
//     changed prefix is a 400 for accounts created since 2026-08-31.
//   - build-with-claude/effort: output_config.effort takes low, medium,
//     high, xhigh and max on these models.
//   - build-with-claude/prompt-caching: at most 4 cache_control
//     breakpoints; a breakpoint looks back 20 blocks for an earlier entry.
type anModel struct {
	family string
	// thinksByDefault: a request without a thinking field thinks
	// (adaptively).
	thinksByDefault bool
	// refusesSampling: a temperature or top_p other than 1, or any top_k,
	// is a 400.
	refusesSampling bool
	// refusesBudget: thinking {"type": "enabled", "budget_tokens": N} is a
	// 400.
	refusesBudget bool
	// disabled is what thinking {"type": "disabled"} gets: "" accepted,
	// otherwise the 400's message.
	disabled string
	// disabledMaxEffort, when set, is the highest effort at which thinking
	// may be disabled (Opus 5).
	disabledMaxEffort string
	// betweenTools: thinking {"type": "between_tools"} is accepted.
	betweenTools bool
	// refusesForcedTool: tool_choice "any" or "tool" is a 400.
	refusesForcedTool bool
	// refusesPrefill: a conversation that ends with an assistant message
	// is a 400.
	refusesPrefill bool
	// progressAsThinking: the text of a turn that calls tools comes back
	// in a thinking block, not a text block.
	progressAsThinking bool
	// boundToPrefix: a thinking block's signature also binds the system
	// prompt, tools and messages before it.
	boundToPrefix bool
	// display is the thinking display when the request sets none.
	display string
	// efforts are the output_config.effort values taken; nil: any.
	efforts []string
	// minCache is the smallest prefix, in tokens, that is cached.
	minCache int
}

var anEfforts = []string{"low", "medium", "high", "xhigh", "max"}

// anModels are the families whose rules the fake enforces.
var anModels = map[string]anModel{
	"claude-sonnet-5-5": {thinksByDefault: true, refusesSampling: true, refusesBudget: true,
		disabled:     `thinking.type: "disabled" is not supported on this model; send {"type": "between_tools"} to turn off up-front thinking`,
		betweenTools: true, refusesForcedTool: true, refusesPrefill: true, progressAsThinking: true,
		boundToPrefix: true, display: "omitted", efforts: anEfforts, minCache: 512},
	"claude-opus-5-5": {thinksByDefault: true, refusesSampling: true, refusesBudget: true,
		disabled:          "thinking cannot be disabled on this model",
		refusesForcedTool: true, progressAsThinking: true, boundToPrefix: true,
		display: "omitted", efforts: anEfforts, minCache: 512},
	// Fable 5.1 shares Opus 5.5's first three changes; its display
	// default is not on the pages read and is taken as Opus 5.5's.
	"claude-fable-5-1": {thinksByDefault: true, refusesSampling: true, refusesBudget: true,
		disabled:          "thinking cannot be disabled on this model",
		refusesForcedTool: true, boundToPrefix: true, display: "omitted", efforts: anEfforts, minCache: 512},
	"claude-sonnet-5": {thinksByDefault: true, refusesSampling: true, refusesBudget: true,
		display: "omitted", efforts: anEfforts, minCache: 1024},
	"claude-opus-5": {thinksByDefault: true, refusesSampling: true, refusesBudget: true,
		disabledMaxEffort: "high", display: "omitted", efforts: anEfforts, minCache: 512},
}

// anReads are the other families whose thinking blocks a family reads
// (preserved-thinking: Fable 5.1 reads Opus 5's and Opus 5.5's).
var anReads = map[string][]string{"claude-fable-5-1": {"claude-opus-5", "claude-opus-5-5"}}

// anDated is a snapshot's date suffix.
var anDated = regexp.MustCompile(`-\d{8}$`)

// anFamily is model without its snapshot date.
func anFamily(model string) string { return anDated.ReplaceAllString(model, "") }

// anModelOf returns the rules of model's family; for a family the fake
// does not know, the zero rules with the family's name.
func anModelOf(model string) anModel {
	family := anFamily(model)
	m := anModels[family]
	if family == "claude-fable-5-2" {
		m = anModels["claude-fable-5-1"]
	}
	m.family = family
	return m
}

// known reports whether the fake enforces rules for the family.
func (m anModel) known() bool { return m.display != "" }

// reads reports whether the family can use a thinking block made by
// family from.
func (m anModel) reads(from string) bool {
	return from == m.family || slices.Contains(anReads[m.family], from)
}

// minCacheTokens is the smallest cached prefix: the family's, or 1,024
// (the figure for most Claude models) for a family the fake does not know.
func (m anModel) minCacheTokens() int {
	if m.minCache > 0 {
		return m.minCache
	}
	return 1024
}

// anCall is what the Anthropic wire keeps of a request for its answer.
type anCall struct {
	model anModel
	// thinks: the answer opens with a thinking block; progress: the text
	// of a turn that calls tools comes back in a thinking block.
	thinks, progress bool
	// display is "summarized" (the thinking text is shown) or "omitted".
	display string
	// prefix is the hash of the whole request (anPrefix), input its
	// size in tokens.
	prefix [32]byte
	input  int
	// cache is what the prompt cache did; nil without breakpoints.
	cache *anCacheUse
	// redacted: a user message holds anRedactedTrigger.
	redacted bool
	// search is the request's web search tool, nil when it has none;
	// resumed, when set, is the turn the fake paused that this request
	// continues (the searches it ran, the results they found).
	search  *anSearchTool
	resumed *anPaused
	st      *anthropicState
}

// anSettings works out how the answer to a request thinks, and checks
// the request's settings: what no model takes (an unknown thinking type
// or display, a thinking budget out of bounds) is an error on any server;
// what model m refuses (its documented rules) is the refusal a strict
// server answers with, the provider's 400, a lenient one going on as
// asked.
func anSettings(in *anRequest, m anModel) (*anCall, *httpError, error) {
	var refusal *httpError
	refuse := func(format string, args ...any) {
		if refusal == nil {
			refusal = newHTTPError(errBadRequest, format, args...)
		}
	}
	effort := ""
	if in.OutputConfig != nil {
		effort = in.OutputConfig.Effort
	}
	if m.efforts != nil && effort != "" && !slices.Contains(m.efforts, effort) {
		refuse("output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'")
	}
	if m.refusesSampling {
		switch {
		case in.Temperature != nil && *in.Temperature != 1:
			refuse("temperature: %s accepts only the default temperature (1.0); leave it out", m.family)
		case in.TopP != nil && *in.TopP != 1:
			refuse("top_p: %s accepts only the default top_p; leave it out", m.family)
		case in.TopK != nil:
			refuse("top_k: %s does not accept top_k; leave it out", m.family)
		}
	}
	if m.refusesForcedTool && in.ToolChoice != nil && (in.ToolChoice.Type == "any" || in.ToolChoice.Type == "tool") {
		refuse("tool_choice: forcing tool use (type %q) is not supported on %s; use \"auto\" or \"none\"", in.ToolChoice.Type, m.family)
	}
	an := &anCall{model: m, thinks: m.thinksByDefault, progress: m.progressAsThinking, display: m.display}
	if an.display == "" {
		an.display = "summarized"
	}
	if t := in.Thinking; t != nil {
		if err := an.thinking(t, m, effort, *in.MaxTokens, refuse); err != nil {
			return nil, nil, err
		}
	}
	return an, refusal, nil
}

// thinking applies a request's thinking field: an error for what no
// model takes, refuse for what m refuses.
func (an *anCall) thinking(t *anThinking, m anModel, effort string, maxTokens int, refuse func(string, ...any)) error {
	invalid := func(format string, args ...any) error { return newHTTPError(errBadRequest, format, args...) }
	switch t.Display {
	case "":
	case "summarized", "omitted":
		an.display = t.Display
	default:
		return invalid("thinking.display: Input should be 'summarized' or 'omitted'")
	}
	switch t.Type {
	case "adaptive":
		an.thinks = true
	case "enabled":
		if t.BudgetTokens == nil || *t.BudgetTokens < 1024 {
			return invalid("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
		}
		if *t.BudgetTokens >= maxTokens {
			return invalid("`max_tokens` must be greater than `thinking.budget_tokens`")
		}
		if m.refusesBudget {
			refuse(`thinking.type: "enabled" (a thinking budget) is not supported on %s; use {"type": "adaptive"} and output_config.effort`, m.family)
		}
		an.thinks = true
	case "disabled":
		if m.disabled != "" {
			refuse("%s", m.disabled)
		}
		if m.disabledMaxEffort != "" && (effort == "xhigh" || effort == "max") {
			refuse("thinking cannot be disabled at effort %q on %s; use effort %q or lower", effort, m.family, m.disabledMaxEffort)
		}
		an.thinks, an.progress = false, false
	case "between_tools":
		if m.known() && !m.betweenTools {
			refuse(`thinking.type: "between_tools" is not supported on %s`, m.family)
		}
		if effort == "xhigh" || effort == "max" {
			refuse(`thinking.type: "between_tools" is not supported at effort %q; use adaptive thinking`, effort)
		}
		an.thinks = false
	default:
		return invalid("thinking.type: Input tag %q found using 'type' does not match any of the expected tags: 'adaptive', 'enabled', 'disabled', 'between_tools'", t.Type)
	}
	return nil
}

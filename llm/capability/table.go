package capability

// AsOf is when the embedded table was read from its sources. The
// providers change these rules with each model: check them, and override
// or extend the table in config.yaml (capabilities:) where they differ.
const AsOf = "2026-11-28"

// Sources are the pages the embedded table was read from, on AsOf.
var Sources = []string{
	"https://platform.claude.com/docs/en/models/overview and the model pages (models/<model>/overview) of Fable 5.x, Opus 5.5, Opus 5, Sonnet 5.5, Sonnet 5: context window, max output, thinking mode, default effort",
	"https://platform.claude.com/docs/en/models/sonnet-5-5/whats-new-sonnet-5-5 and the migration guides (models/sonnet-5-5/migration-guide, models/opus-5-5/migration-guide): non-default temperature, top_p and top_k return 400 on Sonnet 5 and 5.5, Opus 5 and 5.5 and Fable; manual (budget) thinking returns 400",
	"https://platform.claude.com/docs/en/build-with-claude/effort: output_config.effort levels per model (xhigh from Opus 4.7 and Sonnet 5, max from Opus 4.6 and Sonnet 4.6, Opus 4.5 low to high; Opus 5.5 defaults to medium)",
	"https://platform.claude.com/docs/en/build-with-claude/extended-thinking: budget_tokens of at least 1024 on the Claude 4.5 and earlier models; thinking is not compatible with a modified temperature or top_k",
	"https://developers.openai.com/api/docs/guides/reasoning and https://developers.openai.com/api/docs/models (each model's page): reasoning.effort values (gpt-5: minimal to high; gpt-5.1: none to high, default none; gpt-5.2 to 5.5: none to xhigh; gpt-5.6: none to max; o-series: low to high), context windows and max output; reasoning models take only the default temperature and top_p (gpt-5.1 to 5.5 take them at effort none)",
	"https://ai.google.dev/gemini-api/docs/models and https://ai.google.dev/gemini-api/docs/thinking: input and output token limits; Gemini 3's thinkingLevel (3 Pro: low, high; 3 Flash: minimal, low, medium, high); Gemini 2.5's thinkingBudget ranges (Pro 128-32768, cannot be turned off; Flash 0-24576; Flash-Lite 512-24576)",
}

var (
	// sampling is all three sampling parameters.
	sampling = []string{Temperature, TopP, TopK}
	// openAISampling is what OpenAI's reasoning models refuse: temperature
	// and top_p at anything but 1 (OpenAI has no top_k at all).
	openAISampling = []string{Temperature, TopP}

	claudeFive  = []string{"low", "medium", "high", "xhigh", "max"}
	claudeMax   = []string{"low", "medium", "high", "max"}
	claudeThree = []string{"low", "medium", "high"}

	// budgetLevels are deputy's effort levels on a ThinkingBudget model:
	// the adapter turns them into a budget.
	budgetLevels = []string{"low", "medium", "high"}
)

const (
	anthropicModels = "platform.claude.com models overview and model pages, effort and extended-thinking pages, read 2026-11-28"
	openAIModels    = "developers.openai.com reasoning guide and model pages, read 2026-11-28"
	geminiModels    = "ai.google.dev Gemini models and thinking pages, read 2026-11-28"
)

// builtin is keyed by "provider/model family" (see Lookup for how a model
// finds its family).
var builtin = map[string]Model{
	// Anthropic. From Claude Opus 4.7 and Sonnet 5 on, non-default
	// sampling parameters are a 400, thinking is adaptive only (the
	// budget form is a 400) and effort takes xhigh; Fable and Opus 5.5
	// cannot turn thinking off. Max output counts thinking.
	"anthropic/claude-fable-5":    claude(ThinkingAdaptiveAlways, claudeFive, "high", 128_000, 1_000_000),
	"anthropic/claude-opus-5-5":   claude(ThinkingAdaptiveAlways, claudeFive, "medium", 128_000, 1_000_000),
	"anthropic/claude-opus-5":     claude(ThinkingAdaptive, claudeFive, "high", 128_000, 1_000_000),
	"anthropic/claude-sonnet-5-5": claude(ThinkingAdaptive, claudeFive, "high", 128_000, 1_000_000),
	"anthropic/claude-sonnet-5":   claude(ThinkingAdaptive, claudeFive, "high", 128_000, 1_000_000),
	"anthropic/claude-opus-4-8":   claude(ThinkingAdaptive, claudeFive, "high", 128_000, 1_000_000),
	"anthropic/claude-opus-4-7":   claude(ThinkingAdaptive, claudeFive, "high", 128_000, 1_000_000),
	// Claude Opus 4.6 and Sonnet 4.6 take effort (no xhigh) with adaptive
	// thinking, and still take sampling parameters.
	"anthropic/claude-opus-4-6":   {Efforts: claudeMax, DefaultEffort: "high", Thinking: ThinkingAdaptive, MaxOutput: 128_000, Context: 1_000_000, Source: anthropicModels},
	"anthropic/claude-sonnet-4-6": {Efforts: claudeMax, DefaultEffort: "high", Thinking: ThinkingAdaptive, MaxOutput: 64_000, Context: 1_000_000, Source: anthropicModels},
	// Claude Opus 4.5 takes output_config.effort (low to high) without
	// adaptive thinking. The other 4.x and 3.7 models take no effort
	// parameter: deputy's levels become a thinking budget, and while
	// thinking is on a modified temperature or top_k is refused.
	"anthropic/claude-opus-4-5":   {Efforts: claudeThree, DefaultEffort: "high", Thinking: ThinkingEffort, MaxOutput: 64_000, Context: 200_000, Source: anthropicModels},
	"anthropic/claude-sonnet-4-5": claudeBudget(budgetLevels, 64_000, 200_000),
	"anthropic/claude-haiku-4-5":  claudeBudget(budgetLevels, 64_000, 200_000),
	"anthropic/claude-opus-4-1":   claudeBudget(budgetLevels, 32_000, 200_000),
	"anthropic/claude-opus-4-0":   claudeBudget(budgetLevels, 32_000, 200_000),
	"anthropic/claude-opus-4":     claudeBudget(budgetLevels, 32_000, 200_000),
	"anthropic/claude-sonnet-4-0": claudeBudget(budgetLevels, 64_000, 200_000),
	"anthropic/claude-sonnet-4":   claudeBudget(budgetLevels, 64_000, 200_000),
	"anthropic/claude-3-7-sonnet": claudeBudget(budgetLevels, 64_000, 200_000),
	"anthropic/claude-3-5-haiku":  {NoEffort: true, MaxOutput: 8_192, Context: 200_000, Source: anthropicModels},
	"anthropic/claude-3-haiku":    {NoEffort: true, MaxOutput: 4_096, Context: 200_000, Source: anthropicModels},

	// OpenAI. Reasoning models take only the default temperature and
	// top_p; GPT-5.1 to 5.5 take them at effort none (5.1's default).
	"openai/gpt-5.6":      gpt([]string{"none", "low", "medium", "high", "xhigh", "max"}, "", nil, 128_000, 1_050_000),
	"openai/gpt-5.6-luna": gpt([]string{"none", "low", "medium", "high", "xhigh", "max"}, "", nil, 128_000, 400_000),
	"openai/gpt-5.5":      gpt([]string{"none", "low", "medium", "high", "xhigh"}, "", atNone, 128_000, 1_050_000),
	"openai/gpt-5.4":      gpt([]string{"none", "low", "medium", "high", "xhigh"}, "", atNone, 128_000, 1_050_000),
	"openai/gpt-5.4-mini": gpt([]string{"none", "low", "medium", "high", "xhigh"}, "", atNone, 128_000, 400_000),
	"openai/gpt-5.4-nano": gpt([]string{"none", "low", "medium", "high", "xhigh"}, "", atNone, 128_000, 400_000),
	"openai/gpt-5.2":      gpt([]string{"none", "low", "medium", "high", "xhigh"}, "none", atNoneOrDefault, 128_000, 400_000),
	"openai/gpt-5.1":      gpt([]string{"none", "low", "medium", "high"}, "none", atNoneOrDefault, 128_000, 400_000),
	"openai/gpt-5":        gpt([]string{"minimal", "low", "medium", "high"}, "medium", nil, 128_000, 400_000),
	// gpt-5-chat-latest is the non-reasoning GPT-5 of ChatGPT: it takes
	// temperature and no effort.
	"openai/gpt-5-chat": {NoEffort: true, MaxOutput: 16_384, Context: 128_000, Source: openAIModels},
	"openai/gpt-4.1":    {NoEffort: true, MaxOutput: 32_768, Context: 1_047_576, Source: openAIModels},
	"openai/gpt-4o":     {NoEffort: true, MaxOutput: 16_384, Context: 128_000, Source: openAIModels},
	"openai/o1":         gpt([]string{"low", "medium", "high"}, "medium", nil, 100_000, 200_000),
	"openai/o3":         gpt([]string{"low", "medium", "high"}, "medium", nil, 100_000, 200_000),
	"openai/o4-mini":    gpt([]string{"low", "medium", "high"}, "medium", nil, 100_000, 200_000),

	// Gemini. Sampling parameters are accepted (Google recommends leaving
	// Gemini 3's temperature at its default of 1.0, but does not refuse
	// another). Gemini 3 takes thinkingLevel, 2.5 a thinkingBudget.
	"gemini/gemini-3-pro":   {Efforts: []string{"low", "high"}, DefaultEffort: "high", Thinking: ThinkingLevel, MaxOutput: 65_536, Context: 1_048_576, Source: geminiModels},
	"gemini/gemini-3-flash": {Efforts: []string{"minimal", "low", "medium", "high"}, DefaultEffort: "high", Thinking: ThinkingLevel, MaxOutput: 65_536, Context: 1_048_576, Source: geminiModels},
	// A later Gemini 3.x the table does not name: thinkingLevel, values
	// passed on as given.
	"gemini/gemini-3":              {Thinking: ThinkingLevel, MaxOutput: 65_536, Context: 1_048_576, Source: geminiModels},
	"gemini/gemini-2.5-pro":        {Efforts: budgetLevels, Thinking: ThinkingBudget, BudgetMin: 128, BudgetMax: 32_768, MaxOutput: 65_536, Context: 1_048_576, Source: geminiModels},
	"gemini/gemini-2.5-flash":      {Efforts: budgetLevels, Thinking: ThinkingBudget, BudgetMin: 0, BudgetMax: 24_576, MaxOutput: 65_536, Context: 1_048_576, Source: geminiModels},
	"gemini/gemini-2.5-flash-lite": {Efforts: budgetLevels, Thinking: ThinkingBudget, BudgetMin: 512, BudgetMax: 24_576, MaxOutput: 65_536, Context: 1_048_576, Source: geminiModels},
}

var (
	atNone          = []string{"none"}
	atNoneOrDefault = []string{"", "none"}
)

// claude is an Anthropic model of the Claude 4.7 and 5 generations.
func claude(thinking string, efforts []string, def string, out, ctx int) Model {
	return Model{Refuses: sampling, Efforts: efforts, DefaultEffort: def, Thinking: thinking, MaxOutput: out, Context: ctx, Source: anthropicModels}
}

// claudeBudget is an Anthropic model with budget thinking, off by
// default: sampling parameters are accepted while it is off (no effort
// set), temperature and top_k refused while it is on.
func claudeBudget(efforts []string, out, ctx int) Model {
	return Model{Refuses: []string{Temperature, TopK}, SamplingEfforts: []string{""}, Efforts: efforts, Thinking: ThinkingBudget, BudgetMin: 1024, MaxOutput: out, Context: ctx, Source: anthropicModels}
}

// gpt is an OpenAI reasoning model.
func gpt(efforts []string, def string, samplingAt []string, out, ctx int) Model {
	return Model{Refuses: openAISampling, SamplingEfforts: samplingAt, Efforts: efforts, DefaultEffort: def, Thinking: ThinkingEffort, MaxOutput: out, Context: ctx, Source: openAIModels}
}

package llmtest

import (
	"fmt"
	"slices"
	"strings"
)

// The rules OpenAI's API applies per model family, as the fake emulates
// them on /v1/chat/completions and /v1/responses. Read 2026-11-28 from:
//
//   - developers.openai.com/api/docs/guides/reasoning and each model's
//     page under /api/docs/models: the reasoning.effort values per model
//     and their default (gpt-5: minimal to high, default medium; gpt-5.1:
//     none to high, default none; gpt-5.2 to 5.5: none to xhigh, default
//     none; gpt-5.6: none to max, default medium; o-series: low to high,
//     default medium). Reasoning models take only the default (1)
//     temperature and top_p; gpt-5.1 to 5.5 take them at effort none.
//     gpt-4.1, gpt-4o and gpt-5-chat do not reason.
//   - the API's own 400s, as quoted in openai/openai-openapi#541 (gpt-5.4,
//     2026-05), LibreChat#14231 and litellm#34569 (gpt-5.6, 2026-07):
//     /v1/chat/completions refuses function tools with reasoning_effort for
//     gpt-5.4 and later; gpt-5.6 reasons by default there, so it refuses
//     tools unless reasoning_effort is "none".
//   - the error texts ("Unsupported value: 'temperature' does not support
//     0.2 with this model. Only the default (1) value is supported.",
//     "Unsupported value: 'minimal' is not supported with the 'gpt-5.1'
//     model. Supported values are: ...") as the API writes them.
//
// A model of no family here (gpt-test, llama3.2, conformance-model) gets
// none of these rules: the fake stays the lenient server it was for them.

// oaModel is what one OpenAI model family accepts.
type oaModel struct {
	// reasons: the model produces reasoning (items on /v1/responses) at
	// any effort but "none".
	reasons bool
	// efforts are the reasoning efforts the model takes; defaultEffort is
	// the one it uses when none is sent.
	efforts       []string
	defaultEffort string
	// samplingAtNone: temperature and top_p other than 1 are taken at
	// effort none; a reasoning model refuses them otherwise.
	samplingAtNone bool
	// chatToolsNeedNone: /v1/chat/completions refuses function tools
	// unless the effective effort is none (gpt-5.4 and later).
	chatToolsNeedNone bool
}

var (
	effortsGPT5    = []string{"minimal", "low", "medium", "high"}
	effortsGPT51   = []string{"none", "low", "medium", "high"}
	effortsGPT52   = []string{"none", "low", "medium", "high", "xhigh"}
	effortsGPT56   = []string{"none", "low", "medium", "high", "xhigh", "max"}
	effortsOSeries = []string{"low", "medium", "high"}
)

// oaModels is keyed by family; see oaModelOf for how a model finds its
// family.
var oaModels = map[string]oaModel{
	"gpt-5.6":    {reasons: true, efforts: effortsGPT56, defaultEffort: "medium", chatToolsNeedNone: true},
	"gpt-5.5":    {reasons: true, efforts: effortsGPT52, defaultEffort: "none", samplingAtNone: true, chatToolsNeedNone: true},
	"gpt-5.4":    {reasons: true, efforts: effortsGPT52, defaultEffort: "none", samplingAtNone: true, chatToolsNeedNone: true},
	"gpt-5.2":    {reasons: true, efforts: effortsGPT52, defaultEffort: "none", samplingAtNone: true},
	"gpt-5.1":    {reasons: true, efforts: effortsGPT51, defaultEffort: "none", samplingAtNone: true},
	"gpt-5":      {reasons: true, efforts: effortsGPT5, defaultEffort: "medium"},
	"gpt-5-chat": {},
	"gpt-4.1":    {},
	"gpt-4o":     {},
	"o1":         {reasons: true, efforts: effortsOSeries, defaultEffort: "medium"},
	"o3":         {reasons: true, efforts: effortsOSeries, defaultEffort: "medium"},
	"o4-mini":    {reasons: true, efforts: effortsOSeries, defaultEffort: "medium"},
}

// oaModelOf returns the family of model: the longest key that is the
// model itself or that the model continues after a '-' or '.' (a dated
// snapshot, a -mini, a later point release).
func oaModelOf(model string) (oaModel, bool) {
	best := ""
	for key := range oaModels {
		if len(key) > len(best) && (model == key || strings.HasPrefix(model, key) && strings.ContainsRune("-.", rune(model[len(key)]))) {
			best = key
		}
	}
	if best == "" {
		return oaModel{}, false
	}
	return oaModels[best], true
}

// effortOf is the effort the model runs at for a request that sent effort
// ("" when it sent none).
func (m oaModel) effortOf(effort string) string {
	if effort == "" {
		return m.defaultEffort
	}
	return effort
}

// thinks reports whether the model reasons at the request's effort.
func (m oaModel) thinks(effort string) bool {
	return m.reasons && m.effortOf(effort) != "none"
}

// checkParams applies the family's rules on the reasoning effort and the
// sampling parameters; effortParam and the error's wording name the
// endpoint's field ("reasoning.effort" or "reasoning_effort").
func (m oaModel) checkParams(model, effort, effortParam string, temperature *float64) *httpError {
	if effort != "" {
		if !m.reasons {
			return oaParamError("unsupported_parameter", effortParam,
				"Unsupported parameter: '%s' is not supported with this model.", effortParam)
		}
		if !slices.Contains(m.efforts, effort) {
			return oaParamError("unsupported_value", effortParam,
				"Unsupported value: '%s' is not supported with the '%s' model. Supported values are: %s.", effort, model, quotedList(m.efforts))
		}
	}
	if t := temperature; t != nil && *t != 1 && m.reasons && !(m.samplingAtNone && m.effortOf(effort) == "none") {
		return oaParamError("unsupported_value", "temperature",
			"Unsupported value: 'temperature' does not support %v with this model. Only the default (1) value is supported.", *t)
	}
	return nil
}

// oaParamError is OpenAI's 400 about one parameter.
func oaParamError(code, param, format string, args ...any) *httpError {
	e := newHTTPError(errBadRequest, format, args...)
	e.code, e.param = code, param
	return e
}

// quotedList writes values as the API lists them: 'a', 'b', and 'c'.
func quotedList(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = fmt.Sprintf("'%s'", v)
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + ", and " + q[len(q)-1]
}

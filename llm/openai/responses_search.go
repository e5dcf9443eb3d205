package openai

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/deputyhq/deputy/llm"
)

// The web search tool of the Responses API (developers.openai.com/api/
// docs/guides/tools-web-search and the pricing page, read 2026-11-28):
// {"type": "web_search", "filters": {"allowed_domains": [...]}} (up to 100
// domains without a scheme, each with its subdomains). The model searches
// inside the call: each search is a web_search_call output item (its
// action the query), and the answer's output_text carries its citations
// inline, as links, with url_citation annotations. With store false the
// items come back with the turn: a reasoning item must be followed by
// the item it preceded, a search's among them. Each search costs $10 per
// 1,000 calls besides the tokens of its results. Not on gpt-4.1-nano, nor
// on gpt-5 at effort minimal. Chat completions have no such tool: a model
// there lists none.

// webSearchRE matches the models with the web search tool: the GPT-5.x
// family, GPT-4.1 and GPT-4o but gpt-4.1-nano, o3 and o4-mini.
var webSearchRE = regexp.MustCompile(`^(gpt-5|gpt-4\.1|gpt-4o|o3|o4-mini)`)

// searches reports whether model has the web search tool.
func searches(model string) bool {
	m := strings.TrimPrefix(strings.ToLower(model), "ft:")
	return webSearchRE.MatchString(m) && !strings.HasPrefix(m, "gpt-4.1-nano")
}

// ServerTools implements llm.ServerTools: OpenAI's models on the
// Responses API run web_search themselves, kept to allowed domains.
func (p *Provider) ServerTools(model string) []string {
	if !p.usesResponses(model) || !searches(model) {
		return nil
	}
	return []string{llm.ServerWebSearch, llm.ServerWebSearch + llm.ServerDomains}
}

var _ llm.ServerTools = (*Provider)(nil)

// webSearchTool is the Responses API's tool for a spec with Server, and
// MaxUses as max_tool_calls (the only built-in tool deputy offers).
func webSearchTool(t llm.ToolSpec, model string, params *responses.ResponseNewParams) (responses.ToolUnionParam, error) {
	st := t.Server
	if st.Kind != llm.ServerWebSearch || !searches(model) {
		return responses.ToolUnionParam{}, fmt.Errorf("tool %q: model %s has no server-side %s tool", t.Name, model, st.Kind)
	}
	tool := &responses.WebSearchToolParam{Type: responses.WebSearchToolTypeWebSearch}
	tool.Filters.AllowedDomains = st.AllowedDomains
	if st.MaxUses > 0 {
		params.MaxToolCalls = param.NewOpt(int64(st.MaxUses))
	}
	if params.Reasoning.Effort == shared.ReasoningEffortMinimal {
		// gpt-5 at minimal cannot search: low is the nearest it can.
		params.Reasoning.Effort = shared.ReasoningEffortLow
	}
	return responses.ToolUnionParam{OfWebSearch: tool}, nil
}

// rsSearch is what the adapter reads of a web_search_call item: a search
// is billed, opening or reading a page is part of it.
type rsSearch struct {
	Action *struct {
		Type string `json:"type"`
	} `json:"action"`
}

// billed reports whether the item is a search, as OpenAI counts calls.
func (s rsSearch) billed() bool {
	return s.Action == nil || s.Action.Type == "" || s.Action.Type == "search"
}

package anthropic

import (
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/param"

	"github.com/deputyhq/deputy/llm"
)

// Anthropic's web search tool (platform.claude.com, read 2026-11-28:
// agents-and-tools/tool-use/web-search-tool, its supportedModels;
// tool-reference; server-tools). The API runs the searches inside the
// model call: the answer holds a server_tool_use block for each search
// and, right after it, a web_search_tool_result block with the results
// (encrypted page content the next request sends back), and the text
// that uses them carries web_search_result_location citations. None of
// them is a call deputy runs. A turn that also calls one of deputy's
// tools may end with a server_tool_use block still without its result,
// which the API completes when the tool results come back; a long
// server-side loop ends with stop_reason pause_turn, and the turn goes
// on when its content is sent back as it is (provider.go). Each search
// is billed ($10 per 1,000), counted in usage.server_tool_use.
//
// Tool versions: web_search_20260209 adds dynamic filtering (Claude
// writes code, run on Anthropic's side, that filters the results before
// they reach its context) and is what the docs' examples give the
// current models; it works on Claude 4.6 and later and Mythos. The 4.5
// models take web_search_20250305. (web_search_20260318 only adds
// response_inclusion, for results consumed by programmatic tool calls,
// which deputy does not make.)

// Web search tool versions.
const (
	webSearchBasic     = "web_search_20250305"
	webSearchFiltering = "web_search_20260209"
)

// webSearchModels are the models with the web search tool (the page's
// supportedModels) and the version each takes. A model matches its own
// name and its dated or suffixed forms (claude-haiku-4-5-20251001).
var webSearchModels = map[string]string{
	"claude-fable-5-2":      webSearchFiltering,
	"claude-mythos-5-2":     webSearchFiltering,
	"claude-fable-5-1":      webSearchFiltering,
	"claude-mythos-5-1":     webSearchFiltering,
	"claude-fable-5":        webSearchFiltering,
	"claude-mythos-5":       webSearchFiltering,
	"claude-mythos-preview": webSearchFiltering,
	"claude-opus-5-5":       webSearchFiltering,
	"claude-opus-5":         webSearchFiltering,
	"claude-sonnet-5-5":     webSearchFiltering,
	"claude-sonnet-5":       webSearchFiltering,
	"claude-haiku-5-5":      webSearchFiltering,
	"claude-opus-4-8":       webSearchFiltering,
	"claude-opus-4-7":       webSearchFiltering,
	"claude-opus-4-6":       webSearchFiltering,
	"claude-sonnet-4-6":     webSearchFiltering,
	"claude-haiku-4-5":      webSearchBasic,
	"claude-opus-4-5":       webSearchBasic,
	"claude-sonnet-4-5":     webSearchBasic,
}

// webSearchVersion is the web search tool version model takes, "" when
// it has none. The longest name model starts with wins, so that
// claude-opus-5-5 is not taken for a dated claude-opus-5.
func webSearchVersion(model string) string {
	best, version := "", ""
	for name, v := range webSearchModels {
		if (model == name || strings.HasPrefix(model, name+"-")) && len(name) > len(best) {
			best, version = name, v
		}
	}
	return version
}

// ServerTools implements llm.ServerTools: the models that have Anthropic's
// web search tool run deputy's web_search themselves, kept to allowed
// domains.
func (p *Provider) ServerTools(model string) []string {
	if webSearchVersion(model) == "" {
		return nil
	}
	return []string{llm.ServerWebSearch, llm.ServerWebSearch + llm.ServerDomains}
}

var _ llm.ServerTools = (*Provider)(nil)

// buildServerTool is the provider's own tool a spec with Server asks for:
// the web search tool of model's version, kept to the allowed domains
// (each with its subdomains, as the API reads them) and to at most
// MaxUses searches a call.
func buildServerTool(t llm.ToolSpec, model string) (sdk.ToolUnionParam, error) {
	st := t.Server
	version := webSearchVersion(model)
	if st.Kind != llm.ServerWebSearch || version == "" {
		return sdk.ToolUnionParam{}, fmt.Errorf("tool %q: model %s has no server-side %s tool", t.Name, model, st.Kind)
	}
	var maxUses param.Opt[int64]
	if st.MaxUses > 0 {
		maxUses = param.NewOpt(int64(st.MaxUses))
	}
	if version == webSearchBasic {
		return sdk.ToolUnionParam{OfWebSearchTool20250305: &sdk.WebSearchTool20250305Param{
			AllowedDomains: st.AllowedDomains, MaxUses: maxUses}}, nil
	}
	return sdk.ToolUnionParam{OfWebSearchTool20260209: &sdk.WebSearchTool20260209Param{
		AllowedDomains: st.AllowedDomains, MaxUses: maxUses}}, nil
}

package llmtest

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/deputyhq/deputy/llm"
)

// The Responses API's web search tool, as developers.openai.com documents
// it (api/docs/guides/tools-web-search and the API reference, read
// 2026-11-28):
//
//   - {"type": "web_search", "filters": {"allowed_domains": [...]}}: up to
//     100 domains, without the http(s) prefix, each with its subdomains.
//     gpt-4.1-nano has no web search, nor gpt-5 at effort minimal.
//   - Each search is a web_search_call output item ({"action": {"type":
//     "search", "query": ...}}, its sources with include
//     web_search_call.action.sources), before the message; the message's
//     output_text cites the pages inline, as links, each with a
//     url_citation annotation (start_index, end_index, url, title).
//   - Stateless, the items come back with the turn; a reasoning item is
//     followed by the item it preceded, a search among them.
//
// The fake cites every result its allowed domains keep as a link after
// the scripted text, and, in strict mode, refuses a turn that comes back
// without the web_search_call items it was given out with.

// rsWebSearch reads tools[i], a web_search tool.
func rsWebSearch(i int, t rsTool, model, effort string) (llm.ToolSpec, *httpError) {
	var domains []string
	if t.Filters != nil {
		domains = t.Filters.AllowedDomains
	}
	if len(domains) > 100 {
		return llm.ToolSpec{}, oaParamError("invalid_request_error", fmt.Sprintf("tools[%d].filters.allowed_domains", i), "Too many allowed domains: at most 100 are allowed, got %d.", len(domains))
	}
	for _, d := range domains {
		if strings.Contains(d, "://") {
			return llm.ToolSpec{}, oaParamError("invalid_request_error", fmt.Sprintf("tools[%d].filters.allowed_domains", i), "Invalid domain %q: omit the http or https prefix.", d)
		}
	}
	switch {
	case strings.HasPrefix(model, "gpt-4.1-nano"):
		return llm.ToolSpec{}, oaParamError("unsupported_parameter", fmt.Sprintf("tools[%d]", i), "Web search is not supported with the '%s' model.", model)
	case effort == "minimal":
		return llm.ToolSpec{}, oaParamError("unsupported_parameter", fmt.Sprintf("tools[%d]", i), "Web search is not supported with reasoning.effort 'minimal'.")
	}
	return llm.ToolSpec{Name: "web_search", Server: &llm.ServerTool{Kind: llm.ServerWebSearch, AllowedDomains: domains}}, nil
}

// rsSearches are the web_search_call items of an answer's searches, and
// the results its text cites.
func rsSearches(c *call, a *Answer, id string) (items []map[string]any, cited []ResultReply) {
	var allowed []string
	if st := serverTool(c.req, llm.ServerWebSearch); st != nil {
		allowed = st.AllowedDomains
	}
	for i, s := range a.Searches {
		kept := s.kept(allowed, nil)
		cited = append(cited, kept...)
		action := map[string]any{"type": "search", "query": s.Query}
		if c.sources {
			sources := []any{}
			for _, r := range kept {
				sources = append(sources, map[string]any{"type": "url", "url": r.URL})
			}
			action["sources"] = sources
		}
		items = append(items, map[string]any{"type": "web_search_call", "id": "ws_" + id + "_" + strconv.Itoa(i+1), "status": "completed", "action": action})
	}
	return items, cited
}

// rsCitedText is the answer's text with its sources cited inline, as
// links after it, and their url_citation annotations.
func rsCitedText(text string, cited []ResultReply) (string, []any) {
	annotations := []any{}
	if text == "" {
		return text, annotations
	}
	var b strings.Builder
	b.WriteString(text)
	for _, r := range cited {
		label := r.Title
		if u, err := url.Parse(r.URL); err == nil && u.Hostname() != "" {
			label = u.Hostname()
		}
		b.WriteString(" (")
		start := b.Len()
		b.WriteString("[" + label + "](" + r.URL + ")")
		annotations = append(annotations, map[string]any{"type": "url_citation", "start_index": start, "end_index": b.Len(), "url": r.URL, "title": r.Title})
		b.WriteString(")")
	}
	return b.String(), annotations
}

// searchesKey is the key the web_search_call items given out with an
// output item are remembered by.
func searchesKey(it *rsItem) string { return "searches:" + issuedKey(it) }

// missingSearches is what a strict server refuses: an output item the
// fake gave out after web_search_call items, sent back without them in
// its turn.
func missingSearches(items []rsItem, issued *issuedReasoning) *httpError {
	if it, ws := unsentItem(items, issued, "web_search_call", searchesKey); it != nil {
		return oaParamError("", "input", "llmtest (strict): the %s came back without the web_search_call item %s it was given out with: a turn's items go back with it, in place", it.Type, ws)
	}
	return nil
}

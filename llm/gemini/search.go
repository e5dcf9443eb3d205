package gemini

import (
	"fmt"
	"regexp"
	"strconv"

	"google.golang.org/genai"

	"github.com/deputyhq/deputy/llm"
)

// Grounding with Google Search (ai.google.dev/gemini-api/docs, read
// 2026-11-28: google-search, tool-combination, pricing). The googleSearch
// tool lets the model search while it answers; the answer's candidate
// carries groundingMetadata: the queries run (webSearchQueries), the
// pages used (groundingChunks, each a Google redirect URI and a title)
// and which passages they support (groundingSupports). Built-in tools
// and function declarations together are Gemini 3 only (a preview), and
// need toolConfig.includeServerSideToolInvocations: the answer then
// holds the search as toolCall and toolResponse parts, which the next
// request sends back with the turn ("circulated"), as the parts of the
// turn's State already are. deputy's agents have functions besides
// web_search, so only Gemini 3 and later run it. The Gemini API's search
// takes no allowed domains (excludeDomains is Vertex AI's): an agent
// whose allowed_hosts narrow its search is not given Gemini's (the
// engine asks llm.ServerToolFits). Gemini 3 bills each query run ($14
// per 1,000 beyond the monthly free ones), counted as
// Usage.WebSearches.

// gemini3 matches Gemini model names with their major version.
var gemini3 = regexp.MustCompile(`^(?:models/)?gemini-(\d+)`)

// combinesTools reports whether model takes built-in tools with function
// declarations: Gemini 3 and later.
func combinesTools(model string) bool {
	m := gemini3.FindStringSubmatch(model)
	if m == nil {
		return false
	}
	major, err := strconv.Atoi(m[1])
	return err == nil && major >= 3
}

// ServerTools implements llm.ServerTools: Gemini 3 and later run
// deputy's web_search as Google Search grounding, without allowed
// domains.
func (p *Provider) ServerTools(model string) []string {
	if !combinesTools(model) {
		return nil
	}
	return []string{llm.ServerWebSearch}
}

var _ llm.ServerTools = (*Provider)(nil)

// searchTool checks a spec with Server: Google Search on a model that
// takes it, with nothing it cannot keep to.
func searchTool(t llm.ToolSpec, model string) error {
	st := t.Server
	switch {
	case st.Kind != llm.ServerWebSearch || !combinesTools(model):
		return fmt.Errorf("tool %q: model %s has no server-side %s tool", t.Name, model, st.Kind)
	case len(st.AllowedDomains) > 0:
		return fmt.Errorf("tool %q: Gemini's Google Search cannot keep to allowed domains", t.Name)
	}
	return nil
}

// groundingSources lists the pages an answer's grounding cites: those its
// supports point to, in order, else every page found. The answer's
// Content ends with the list, as the metadata comes after the text.
func groundingSources(g *genai.GroundingMetadata) string {
	if g == nil {
		return ""
	}
	var src llm.Sources
	cite := func(i int32) {
		if i >= 0 && int(i) < len(g.GroundingChunks) {
			if c := g.GroundingChunks[i]; c != nil && c.Web != nil && c.Web.URI != "" {
				src.Cite(c.Web.URI, c.Web.Title)
			}
		}
	}
	for _, s := range g.GroundingSupports {
		if s != nil {
			for _, i := range s.GroundingChunkIndices {
				cite(i)
			}
		}
	}
	if src.String() == "" {
		for i := range g.GroundingChunks {
			cite(int32(i))
		}
	}
	return src.String()
}

// groundedText is an answer's text followed by the sources its grounding
// cites; a turn without text (its function calls) gets none.
func groundedText(text string, g *genai.GroundingMetadata) string {
	if text == "" {
		return ""
	}
	return text + groundingSources(g)
}

// searches counts the queries a grounded answer ran: what Gemini 3 bills.
func searches(g *genai.GroundingMetadata) int64 {
	if g == nil {
		return 0
	}
	return int64(len(g.WebSearchQueries))
}

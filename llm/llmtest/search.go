package llmtest

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"text/template"

	"github.com/deputyhq/deputy/llm"
)

// SearchReply is one search the provider's own web search tool runs while
// the model answers, before its text (the request must offer that tool:
// an llm.ToolSpec with Server of kind llm.ServerWebSearch). Each wire
// answers with its provider's shape: Anthropic's server_tool_use and
// web_search_tool_result blocks, the Responses API's web_search_call
// items, Gemini's grounding metadata. The reply's text cites every result
// that the request's allowed domains keep.
type SearchReply struct {
	// Query is what the model searched for, a template like Text.
	Query string `yaml:"query"`
	// Results are the pages found.
	Results []ResultReply `yaml:"results"`
	// Pause ends the answer after this search, as a provider does whose
	// server-side loop ran long (Anthropic's stop_reason pause_turn): the
	// rest of the reply comes when the paused turn is sent back. Only the
	// Anthropic endpoint pauses; the others ignore it.
	Pause bool `yaml:"pause"`
}

// ResultReply is one page a search found.
type ResultReply struct {
	Title string `yaml:"title"`
	URL   string `yaml:"url"`
	// Snippet is the text of the page the answer cites.
	Snippet string `yaml:"snippet"`
}

// Search is one search of an Answer, its query rendered.
type Search struct {
	Query   string
	Results []ResultReply
	Pause   bool
}

// compileSearches checks reply.searches and compiles their queries.
func compileSearches(searches []SearchReply) ([]*template.Template, error) {
	var queries []*template.Template
	for i, s := range searches {
		what := fmt.Sprintf("reply.searches[%d]", i)
		if strings.TrimSpace(s.Query) == "" {
			return nil, fmt.Errorf("%s.query: a search needs a query", what)
		}
		t, err := parseTemplate(what+".query", s.Query)
		if err != nil {
			return nil, err
		}
		for j, r := range s.Results {
			if u, err := url.Parse(r.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return nil, fmt.Errorf("%s.results[%d].url: %q is not an absolute http(s) URL", what, j, r.URL)
			}
		}
		queries = append(queries, t)
	}
	return queries, nil
}

// renderSearches renders the searches of rule c for a request, which must
// offer the provider's web search.
func renderSearches(c *compiledRule, req *llm.Request, data *TemplateData) ([]Search, error) {
	searches := c.rule.Reply.Searches
	if len(searches) == 0 {
		return nil, nil
	}
	if serverTool(req, llm.ServerWebSearch) == nil {
		return nil, fmt.Errorf("reply.searches: the request offers no web search of the provider's own (match it with server_tool: web_search)")
	}
	out := make([]Search, len(searches))
	for i, s := range searches {
		q, err := render(c.queries[i], s.Query, data)
		if err != nil {
			return nil, fmt.Errorf("reply.searches[%d].query: %w", i, err)
		}
		out[i] = Search{Query: q, Results: slices.Clone(s.Results), Pause: s.Pause}
	}
	return out, nil
}

// serverTool is the request's provider-run tool of kind, nil when it
// offers none.
func serverTool(req *llm.Request, kind string) *llm.ServerTool {
	for _, t := range req.Tools {
		if t.Server != nil && t.Server.Kind == kind {
			return t.Server
		}
	}
	return nil
}

// domainAllowed reports whether rawURL's host is one of domains or under
// one, as the providers read allowed domains (none: every host).
func domainAllowed(rawURL string, domains []string) bool {
	if len(domains) == 0 {
		return true
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	host := strings.ToLower(u.Hostname())
	for _, d := range domains {
		d = strings.ToLower(d)
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return false
}

// kept is the results of s the search's domains keep.
func (s Search) kept(allowed, blocked []string) []ResultReply {
	var out []ResultReply
	for _, r := range s.Results {
		if domainAllowed(r.URL, allowed) && (len(blocked) == 0 || !domainAllowed(r.URL, blocked)) {
			out = append(out, r)
		}
	}
	return out
}

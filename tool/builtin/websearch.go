package builtin

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
)

// WebSearch is the web search tool's name: axe's web_search, Claude Code's
// WebSearch, opencode's websearch.
const WebSearch = "web_search"

// The search APIs web_search can call when the agent's provider has no
// search of its own (Options.Search).
const (
	// SearchBrave is the Brave Search API (an API key, a free tier).
	SearchBrave = "brave"
	// SearchSearXNG is a SearXNG instance's JSON API (self-hosted, no key;
	// its settings must allow the json format).
	SearchSearXNG = "searxng"
)

// DefaultBraveURL is the Brave Search API's web search endpoint.
const DefaultBraveURL = "https://api.search.brave.com/res/v1/web/search"

// Search limits: how many results a call returns by default and at most,
// and how much of an API's answer is read.
const (
	DefaultSearchResults = 5
	MaxSearchResults     = 20
	searchBodyMaxBytes   = 2 << 20
)

// SearchAPI is the search API web_search calls.
type SearchAPI struct {
	// Kind is SearchBrave or SearchSearXNG.
	Kind string
	// URL is the endpoint: Brave's (DefaultBraveURL when empty), or the
	// SearXNG instance's base URL (https://searx.example.org).
	URL string
	// APIKey is Brave's subscription token. It is sent only to URL's host
	// (a redirect elsewhere is refused), and never shown in a result or an
	// error. KeyEnv names the variable it
	// comes from, for the message when it is not set.
	APIKey, KeyEnv string
	// MaxResults is a call's default number of results (default
	// DefaultSearchResults, at most MaxSearchResults).
	MaxResults int
	// HTTPClient calls the API (default: a client with a 30 s timeout).
	// The API's host is the user's choice, so it may be on loopback or a
	// private network (a SearXNG at home), unlike fetch's hosts.
	HTTPClient *http.Client
}

// SearchResult is one hit.
type SearchResult struct {
	Title, URL, Snippet string
}

type webSearchArgs struct {
	Query          string   `json:"query" jsonschema:"what to search the web for"`
	MaxResults     int      `json:"max_results,omitempty" jsonschema:"how many results to return (default 5, at most 20)"`
	AllowedDomains []string `json:"allowed_domains,omitempty" jsonschema:"only return results from these domains and their subdomains (optional)"`
	BlockedDomains []string `json:"blocked_domains,omitempty" jsonschema:"never return results from these domains (optional)"`
}

// webSearchTool is web_search over Options.Search. HostNarrower keeps an
// agent's results to its allowed_hosts.
type webSearchTool struct {
	tool.Tool
	e *env
	// hosts are the allow-lists the tool was narrowed to (an agent's
	// allowed_hosts, the run's grant): only results whose host passes
	// each are shown.
	hosts hostLists
}

func newWebSearchTool(e *env, hosts hostLists) *webSearchTool {
	w := &webSearchTool{e: e, hosts: hosts}
	desc := "Search the web. Returns the results' titles, URLs and snippets; read a page with fetch."
	if len(hosts) > 0 {
		desc += " Only results from these hosts are returned: " + strings.Join(hosts.entries(), ", ") + "."
	}
	w.Tool = tool.New(WebSearch, desc, w.search)
	return w
}

// Name is the embedded tool's, without inferring its schema (tool.Name).
func (w *webSearchTool) Name() string { return tool.Name(w.Tool) }

// NarrowHosts implements tool.HostNarrower.
func (w *webSearchTool) NarrowHosts(hosts []string) tool.Tool {
	if len(hosts) == 0 {
		return w
	}
	n := newWebSearchTool(w.e, w.hosts.and(hosts))
	if len(n.hosts.entries()) == 0 {
		// Not a ServerBacked tool: a provider's search given no domains
		// would search every host.
		return tool.New(WebSearch, "Search the web (no host's results may be shown to this agent).",
			func(context.Context, webSearchArgs) (tool.Result, error) {
				return tool.Errorf("web_search may return results from no host: the lists of hosts this agent may reach (allowed_hosts, permissions.hosts in config.yaml) share none"), nil
			})
	}
	return n
}

// ServerTool implements tool.ServerBacked: the provider's own search,
// kept to the agent's hosts (whose results deputy never sees to filter),
// each given as the domain the providers take (example.org, which keeps
// its subdomains; no port, no "*.").
func (w *webSearchTool) ServerTool() llm.ServerTool {
	var domains []string
	for _, h := range w.hosts.entries() {
		if d := hostEntry(h); d != "" && !slices.Contains(domains, d) {
			domains = append(domains, d)
		}
	}
	return llm.ServerTool{Kind: llm.ServerWebSearch, AllowedDomains: domains}
}

// Runnable implements tool.ServerBacked: web_search has an API to call.
func (w *webSearchTool) Runnable() bool { return w.e.opts.Search != nil }

func (w *webSearchTool) search(ctx context.Context, a webSearchArgs) (tool.Result, error) {
	api := w.e.opts.Search
	if api == nil {
		return tool.Errorf("web_search is not available: no search API is configured (search in config.yaml)"), nil
	}
	q := strings.TrimSpace(a.Query)
	if q == "" {
		return tool.Errorf("query must not be empty"), nil
	}
	n := a.MaxResults
	switch {
	case n < 0 || n > MaxSearchResults:
		return tool.Errorf("max_results must be between 1 and %d (got %d)", MaxSearchResults, n), nil
	case n == 0:
		n = api.MaxResults
		if n <= 0 {
			n = DefaultSearchResults
		}
	}
	results, err := api.search(ctx, q, n)
	if err != nil {
		return tool.Errorf("web_search failed: %v", err), nil
	}
	kept := results[:0]
	for _, r := range results {
		if w.keeps(r.URL, a.AllowedDomains, a.BlockedDomains) {
			kept = append(kept, r)
		}
	}
	if len(kept) > n {
		kept = kept[:n]
	}
	return tool.Text(FormatSearchResults(q, kept)), nil
}

// keeps reports whether a result's URL may be shown: an http(s) URL whose
// host passes the agent's hosts and the call's allowed and blocked domains.
func (w *webSearchTool) keeps(raw string, allowed, blocked []string) bool {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return false
	}
	if !w.hosts.allows(u) {
		return false
	}
	if len(allowed) > 0 && !hostInList(u, allowed) {
		return false
	}
	return len(blocked) == 0 || !hostInList(u, blocked)
}

// FormatSearchResults is what the model reads of a search: one numbered
// entry a result, its title, URL and snippet.
func FormatSearchResults(query string, results []SearchResult) string {
	if len(results) == 0 {
		return fmt.Sprintf("No results for %q.", query)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Results for %q:\n", query)
	for i, r := range results {
		fmt.Fprintf(&b, "\n%d. %s\n   %s\n", i+1, oneLineText(r.Title), r.URL)
		if s := oneLineText(r.Snippet); s != "" {
			fmt.Fprintf(&b, "   %s\n", s)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// oneLineText is a title or snippet as one line of plain text (APIs mark
// the matched words with HTML).
func oneLineText(s string) string { return strings.Join(strings.Fields(htmlToText([]byte(s))), " ") }

var defaultSearchClient = &http.Client{Timeout: 30 * time.Second}

// search asks the API for n results (more when the API pages in larger
// steps; the caller cuts).
func (api *SearchAPI) search(ctx context.Context, query string, n int) ([]SearchResult, error) {
	var req *http.Request
	var err error
	switch api.Kind {
	case SearchBrave:
		if api.APIKey == "" {
			return nil, fmt.Errorf("Brave Search needs an API key: %s is not set", cmp.Or(api.KeyEnv, "the key's variable"))
		}
		req, err = api.braveRequest(ctx, query, n)
	case SearchSearXNG:
		req, err = api.searxngRequest(ctx, query)
	default:
		return nil, fmt.Errorf("unknown search API %q", api.Kind)
	}
	if err != nil {
		return nil, err
	}
	client := api.HTTPClient
	if client == nil {
		client = defaultSearchClient
	}
	if api.APIKey != "" {
		client = keyStaysHome(client)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, api.redact(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, searchBodyMaxBytes+1))
	if err != nil {
		return nil, api.redact(err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the search API answered %s: %s", resp.Status, api.redactText(llm.ClipMessage(string(body), 300)))
	}
	if len(body) > searchBodyMaxBytes {
		return nil, fmt.Errorf("the search API's answer is larger than %d bytes", searchBodyMaxBytes)
	}
	if api.Kind == SearchBrave {
		return parseBrave(body)
	}
	return parseSearXNG(body)
}

// keyStaysHome is client refusing to follow a redirect to another host
// or scheme: net/http copies a header it does not know (Brave's
// X-Subscription-Token) to wherever a redirect leads, and the key is for
// the API's host only.
func keyStaysHome(client *http.Client) *http.Client {
	c := *client
	next := client.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if from := via[0].URL; req.URL.Host != from.Host || req.URL.Scheme != from.Scheme {
			return fmt.Errorf("the search API redirected to another host (%s://%s); its key is sent only to %s://%s",
				req.URL.Scheme, req.URL.Host, from.Scheme, from.Host)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &c
}

func (api *SearchAPI) braveRequest(ctx context.Context, query string, n int) (*http.Request, error) {
	base := api.URL
	if base == "" {
		base = DefaultBraveURL
	}
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("search URL: %w", err)
	}
	v := u.Query()
	v.Set("q", query)
	v.Set("count", fmt.Sprint(n))
	u.RawQuery = v.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Subscription-Token", api.APIKey)
	return req, nil
}

func (api *SearchAPI) searxngRequest(ctx context.Context, query string) (*http.Request, error) {
	u, err := url.Parse(strings.TrimRight(api.URL, "/") + "/search")
	if err != nil {
		return nil, fmt.Errorf("search URL: %w", err)
	}
	v := u.Query()
	v.Set("q", query)
	v.Set("format", "json")
	u.RawQuery = v.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	return req, nil
}

// redact keeps the API key out of an error (a proxy or server may echo
// the request).
func (api *SearchAPI) redact(err error) error {
	if api.APIKey == "" || !strings.Contains(err.Error(), api.APIKey) {
		return err
	}
	return errors.New(api.redactText(err.Error()))
}

func (api *SearchAPI) redactText(s string) string {
	if api.APIKey == "" {
		return s
	}
	return strings.ReplaceAll(s, api.APIKey, "[REDACTED]")
}

// parseBrave reads a Brave Search API answer (web.results[]: title, url,
// description).
func parseBrave(body []byte) ([]SearchResult, error) {
	var v struct {
		Web struct {
			Results []struct {
				Title       string `json:"title"`
				URL         string `json:"url"`
				Description string `json:"description"`
			} `json:"results"`
		} `json:"web"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, fmt.Errorf("the search API's answer is not Brave's JSON: %v", err)
	}
	out := make([]SearchResult, 0, len(v.Web.Results))
	for _, r := range v.Web.Results {
		out = append(out, SearchResult{Title: r.Title, URL: r.URL, Snippet: r.Description})
	}
	return out, nil
}

// parseSearXNG reads a SearXNG JSON answer (results[]: title, url,
// content).
func parseSearXNG(body []byte) ([]SearchResult, error) {
	var v struct {
		Results []struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Content string `json:"content"`
		} `json:"results"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, fmt.Errorf("the search API's answer is not SearXNG's JSON (does its settings.yml allow the json format?): %v", err)
	}
	out := make([]SearchResult, 0, len(v.Results))
	for _, r := range v.Results {
		out = append(out, SearchResult{Title: r.Title, URL: r.URL, Snippet: r.Content})
	}
	return out, nil
}

package builtin

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
)

// searchServer answers like a SearXNG instance (/search?format=json) and
// like the Brave Search API (any other path, with X-Subscription-Token),
// and notes what it was asked.
func searchServer(t *testing.T) (*httptest.Server, *[]*http.Request) {
	t.Helper()
	var seen []*http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Clone(r.Context()))
		q := r.URL.Query().Get("q")
		if r.URL.Path == "/html/search" { // a SearXNG without the json format
			w.Write([]byte("<html><body>results</body></html>"))
			return
		}
		if r.URL.Path == "/search" {
			if r.URL.Query().Get("format") != "json" {
				http.Error(w, "format not allowed", http.StatusForbidden)
				return
			}
			json.NewEncoder(w).Encode(map[string]any{"query": q, "results": []map[string]string{
				{"title": "Go <b>generics</b>", "url": "https://go.dev/doc/generics", "content": "An introduction to\n  generics."},
				{"title": "Spam", "url": "https://spam.example/x", "content": "buy"},
				{"title": "Not a web page", "url": "javascript:alert(1)", "content": "x"},
				{"title": "Blog", "url": "https://blog.go.dev/intro", "content": "The blog."},
			}})
			return
		}
		if r.Header.Get("X-Subscription-Token") != "brave-key-123" {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":"bad token ` + r.Header.Get("X-Subscription-Token") + `"}`))
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"web": map[string]any{"results": []map[string]string{
			{"title": "Brave hit", "url": "https://example.org/a", "description": "the <strong>first</strong> hit"},
			{"title": "Brave two", "url": "https://example.org/b", "description": "second"},
		}}})
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func TestWebSearchSearXNG(t *testing.T) {
	srv, seen := searchServer(t)
	r, _ := testRegistry(t, Options{Search: &SearchAPI{Kind: SearchSearXNG, URL: srv.URL + "/"}}, nil)
	res := call(t, r, WebSearch, `{"query":"go generics"}`)
	want := "Results for \"go generics\":\n\n1. Go generics\n   https://go.dev/doc/generics\n   An introduction to generics.\n\n2. Spam\n   https://spam.example/x\n   buy\n\n3. Blog\n   https://blog.go.dev/intro\n   The blog."
	if res.IsError || res.Content != want {
		t.Fatalf("got %+v\nwant %q", res, want)
	}
	if q := (*seen)[0].URL.Query(); q.Get("q") != "go generics" || q.Get("format") != "json" {
		t.Fatalf("asked %s", (*seen)[0].URL)
	}
	// The call's own domains, and max_results.
	res = call(t, r, WebSearch, `{"query":"go","allowed_domains":["go.dev"],"max_results":1}`)
	if !strings.Contains(res.Content, "https://go.dev/doc/generics") || strings.Contains(res.Content, "blog.go.dev") || strings.Contains(res.Content, "spam") {
		t.Fatalf("allowed_domains and max_results: %q", res.Content)
	}
	res = call(t, r, WebSearch, `{"query":"go","blocked_domains":["spam.example","blog.go.dev"]}`)
	if strings.Contains(res.Content, "spam.example") || strings.Contains(res.Content, "blog.go.dev") || !strings.Contains(res.Content, "go.dev/doc") {
		t.Fatalf("blocked_domains: %q", res.Content)
	}
}

// An agent's allowed_hosts narrow the results, and the provider's own
// search is asked to keep to them too.
func TestWebSearchNarrowedToAgentHosts(t *testing.T) {
	srv, _ := searchServer(t)
	r, _ := testRegistry(t, Options{Search: &SearchAPI{Kind: SearchSearXNG, URL: srv.URL}}, nil)
	tl, _ := r.Get(WebSearch)
	narrowed := tl.(tool.HostNarrower).NarrowHosts([]string{"go.dev"})
	res := runTool(t, narrowed, `{"query":"go"}`)
	if strings.Contains(res.Content, "spam.example") || !strings.Contains(res.Content, "blog.go.dev") {
		t.Fatalf("narrowed results: %q", res.Content)
	}
	if !strings.Contains(narrowed.Spec().Description, "go.dev") {
		t.Errorf("the description does not say the hosts: %q", narrowed.Spec().Description)
	}
	st := narrowed.(tool.ServerBacked).ServerTool()
	if st.Kind != llm.ServerWebSearch || len(st.AllowedDomains) != 1 || st.AllowedDomains[0] != "go.dev" {
		t.Fatalf("server tool %+v", st)
	}
	// The hosts as an allowed_hosts list spells them are given to the
	// provider as domains: no port, no wildcard, each once.
	wide := tl.(tool.HostNarrower).NarrowHosts([]string{"*.Go.dev", "go.dev:443", ".example.org", "[::1]:8080"})
	if got := wide.(tool.ServerBacked).ServerTool().AllowedDomains; !slices.Equal(got, []string{"go.dev", "example.org", "::1"}) {
		t.Errorf("allowed domains %q", got)
	}
}

func TestWebSearchBrave(t *testing.T) {
	srv, seen := searchServer(t)
	r, _ := testRegistry(t, Options{Search: &SearchAPI{Kind: SearchBrave, URL: srv.URL + "/res/v1/web/search", APIKey: "brave-key-123", MaxResults: 1}}, nil)
	res := call(t, r, WebSearch, `{"query":"deputy"}`)
	want := "Results for \"deputy\":\n\n1. Brave hit\n   https://example.org/a\n   the first hit"
	if res.IsError || res.Content != want {
		t.Fatalf("got %+v", res)
	}
	if q := (*seen)[0].URL.Query(); q.Get("count") != "1" || q.Get("q") != "deputy" {
		t.Fatalf("asked %s", (*seen)[0].URL)
	}
	// A refused key: the error says the status, never the key, even when
	// the server echoes it.
	r, _ = testRegistry(t, Options{Search: &SearchAPI{Kind: SearchBrave, URL: srv.URL, APIKey: "wrong-key-456"}}, nil)
	res = call(t, r, WebSearch, `{"query":"deputy"}`)
	if !res.IsError || !strings.HasPrefix(res.Content, "web_search failed: the search API answered 401 Unauthorized") || strings.Contains(res.Content, "wrong-key-456") {
		t.Fatalf("got %+v", res)
	}
	r, _ = testRegistry(t, Options{Search: &SearchAPI{Kind: SearchBrave, URL: srv.URL, KeyEnv: "BRAVE_API_KEY"}}, nil)
	res = call(t, r, WebSearch, `{"query":"deputy"}`)
	if res.Content != "web_search failed: Brave Search needs an API key: BRAVE_API_KEY is not set" {
		t.Fatalf("no key: %+v", res)
	}
}

func TestWebSearchErrors(t *testing.T) {
	srv, _ := searchServer(t)
	r, _ := testRegistry(t, Options{}, nil)
	if res := call(t, r, WebSearch, `{"query":"x"}`); res.Content != "web_search is not available: no search API is configured (search in config.yaml)" {
		t.Fatalf("unconfigured: %+v", res)
	}
	r, _ = testRegistry(t, Options{Search: &SearchAPI{Kind: SearchSearXNG, URL: srv.URL}}, nil)
	for args, want := range map[string]string{
		`{"query":"  "}`:                 "query must not be empty",
		`{"query":"x","max_results":21}`: "max_results must be between 1 and 20 (got 21)",
		`{"query":"x","max_results":-1}`: "max_results must be between 1 and 20 (got -1)",
		`{}`:                             `invalid arguments for web_search: missing required field "query"`,
	} {
		if res := call(t, r, WebSearch, args); !res.IsError || res.Content != want {
			t.Errorf("%s: got %+v, want %q", args, res, want)
		}
	}
	// A SearXNG whose settings refuse the json format.
	r, _ = testRegistry(t, Options{Search: &SearchAPI{Kind: SearchSearXNG, URL: srv.URL + "/html"}}, nil)
	if res := call(t, r, WebSearch, `{"query":"x"}`); !res.IsError || !strings.Contains(res.Content, "not SearXNG's JSON") {
		t.Fatalf("got %+v", res)
	}
}

func runTool(t *testing.T, tl tool.Tool, args string) tool.Result {
	t.Helper()
	res, err := tl.Run(context.Background(), json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s: Go error %v", tl.Spec().Name, err)
	}
	return res
}

// FuzzSearchAnswer: whatever a search API answers, its parser returns
// results or an error, and what the model reads keeps each result to its
// three lines.
func FuzzSearchAnswer(f *testing.F) {
	f.Add(true, []byte(`{"web":{"results":[{"title":"a <b>b</b>","url":"https://x.org","description":"c\nd"}]}}`))
	f.Add(false, []byte(`{"query":"q","results":[{"title":"t","url":"https://y.org/p","content":"<p>s</p>"}]}`))
	f.Add(false, []byte(`{"results":null}`))
	f.Add(true, []byte(`{"web":null}`))
	f.Add(false, []byte(`<html>`))
	f.Add(true, []byte(`{"web":{"results":[{"title":"\u2028","url":1}]}}`))
	f.Fuzz(func(t *testing.T, brave bool, body []byte) {
		parse := parseSearXNG
		if brave {
			parse = parseBrave
		}
		results, err := parse(body)
		if err != nil {
			return
		}
		out := FormatSearchResults("q", results)
		for _, r := range results {
			if strings.ContainsAny(oneLineText(r.Title)+oneLineText(r.Snippet), "\n\r") {
				t.Fatalf("a title or snippet spans lines in %q", out)
			}
		}
	})
}

// A tool narrowed twice (an agent's allowed_hosts, then the run's
// permissions.hosts) keeps to the hosts both lists allow: each narrowing
// only takes hosts away, for the results and for the provider's search.
// Lists that share no host leave a web_search that refuses, with no
// provider search (whose empty list of domains would mean every host).
func TestWebSearchNarrowedTwiceOnlyNarrows(t *testing.T) {
	srv, seen := searchServer(t)
	r, _ := testRegistry(t, Options{Search: &SearchAPI{Kind: SearchSearXNG, URL: srv.URL}}, nil)
	tl, _ := r.Get(WebSearch)
	narrow := func(t tool.Tool, hosts ...string) tool.Tool { return t.(tool.HostNarrower).NarrowHosts(hosts) }

	both := narrow(narrow(tl, "go.dev"), "blog.go.dev")
	res := runTool(t, both, `{"query":"go"}`)
	if !strings.Contains(res.Content, "blog.go.dev") || strings.Contains(res.Content, "https://go.dev/doc") {
		t.Errorf("go.dev, then blog.go.dev: %q", res.Content)
	}
	if got := both.(tool.ServerBacked).ServerTool().AllowedDomains; !slices.Equal(got, []string{"blog.go.dev"}) {
		t.Errorf("go.dev, then blog.go.dev: allowed domains %q", got)
	}
	if d := both.Spec().Description; !strings.HasSuffix(d, "Only results from these hosts are returned: blog.go.dev.") {
		t.Errorf("description %q", d)
	}

	asked := len(*seen)
	none := narrow(narrow(tl, "go.dev"), "example.org")
	if _, ok := none.(tool.ServerBacked); ok {
		t.Errorf("a web_search that may show no host is offered as the provider's search")
	}
	res = runTool(t, none, `{"query":"go"}`)
	if !res.IsError || res.Content != "web_search may return results from no host: the lists of hosts this agent may reach (allowed_hosts, permissions.hosts in config.yaml) share none" {
		t.Errorf("go.dev, then example.org: %+v", res)
	}
	if len(*seen) != asked {
		t.Errorf("the search API was called")
	}
}

// Brave's key goes to the API's own host only: a redirect to another host
// (a proxy's, an open redirect's) is refused, not followed with the key,
// which net/http copies to any host for a header it does not know.
func TestWebSearchBraveKeyStaysWithItsHost(t *testing.T) {
	var sawKey []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawKey = append(sawKey, r.Header.Get("X-Subscription-Token"))
		w.Write([]byte(`{"web":{"results":[]}}`))
	}))
	t.Cleanup(other.Close)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			w.Write([]byte(`{"web":{"results":[{"title":"t","url":"https://example.org/","description":"d"}]}}`))
			return
		}
		if r.URL.Query().Get("q") == "same host" {
			http.Redirect(w, r, "/moved", http.StatusFound)
			return
		}
		http.Redirect(w, r, other.URL+"/elsewhere", http.StatusFound)
	}))
	t.Cleanup(api.Close)
	r, _ := testRegistry(t, Options{Search: &SearchAPI{Kind: SearchBrave, URL: api.URL, APIKey: "brave-key-123"}}, nil)
	res := call(t, r, WebSearch, `{"query":"deputy"}`)
	if len(sawKey) > 0 {
		t.Fatalf("the other host was asked, with key %q", sawKey)
	}
	if !res.IsError || !strings.Contains(res.Content, "web_search failed: ") || !strings.Contains(res.Content, "the search API redirected to another host") {
		t.Fatalf("got %+v", res)
	}
	// A redirect on the API's own host is followed.
	if res := call(t, r, WebSearch, `{"query":"same host"}`); res.IsError || !strings.Contains(res.Content, "https://example.org/") {
		t.Fatalf("same host: %+v", res)
	}
}

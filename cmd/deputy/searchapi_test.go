package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
)

type searchKey struct{}

// searchAPI is a search server on loopback shaped like a SearXNG
// instance (GET /search?q=...&format=json) and like the Brave Search API
// (GET /res/v1/web/search?q=...&count=N with X-Subscription-Token), for
// web_search's scripts. Its results name the query, so a script can see
// which search an answer came from.
type searchAPI struct {
	mu  sync.Mutex
	log []string
}

func (s *searchAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("q")
	s.mu.Lock()
	s.log = append(s.log, fmt.Sprintf("%s q=%q token=%v", r.URL.Path, q, r.Header.Get("X-Subscription-Token") != ""))
	s.mu.Unlock()
	hits := []map[string]string{
		{"title": "About " + q, "url": "https://docs.example.org/" + strings.ReplaceAll(q, " ", "-"), "text": "All about <b>" + q + "</b>."},
		{"title": "Elsewhere", "url": "https://other.example.net/x", "text": "Not relevant."},
	}
	switch r.URL.Path {
	case "/search":
		var res []map[string]string
		for _, h := range hits {
			res = append(res, map[string]string{"title": h["title"], "url": h["url"], "content": h["text"]})
		}
		json.NewEncoder(w).Encode(map[string]any{"query": q, "results": res})
	case "/res/v1/web/search":
		if r.Header.Get("X-Subscription-Token") != "brave-test-key-0000" {
			http.Error(w, `{"type":"ErrorResponse","error":{"code":"SUBSCRIPTION_TOKEN_INVALID"}}`, http.StatusUnauthorized)
			return
		}
		var res []map[string]string
		for _, h := range hits {
			res = append(res, map[string]string{"title": h["title"], "url": h["url"], "description": h["text"]})
		}
		json.NewEncoder(w).Encode(map[string]any{"web": map[string]any{"results": res}})
	default:
		http.NotFound(w, r)
	}
}

// cmdSearchAPI drives the search server:
//
//	searchapi start    start it on 127.0.0.1; sets SEARCH_URL
//	searchapi log      print one line per request: path, query, whether a token came
func cmdSearchAPI(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: searchapi start|log")
	}
	switch args[0] {
	case "start":
		s := ts.Value(searchKey{}).(*searchAPI)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		ts.Check(err)
		srv := &http.Server{Handler: s}
		go srv.Serve(ln)
		ts.Defer(func() { srv.Close() })
		ts.Setenv("SEARCH_URL", "http://"+ln.Addr().String())
	case "log":
		s := ts.Value(searchKey{}).(*searchAPI)
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, l := range s.log {
			fmt.Fprintln(ts.Stdout(), l)
		}
	default:
		ts.Fatalf("usage: searchapi start|log")
	}
}

package builtin

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/deputyhq/deputy/tool"
)

func fetchServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/text", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, "plain hello")
	})
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"ok":true}`)
	})
	mux.HandleFunc("/html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<html><head><title>Doc</title><style>body{color:red}</style><script>var x = "hidden";</script></head>
<body><h1>Heading</h1><p>First   paragraph
 with <a href="/x">a link</a>.</p><ul><li>one</li><li>two</li></ul><pre>  indented
    code</pre></body></html>`)
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such page here", http.StatusNotFound)
	})
	mux.HandleFunc("/broken", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, strings.Repeat("0123456789", 100))
	})
	mux.HandleFunc("/image", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n"))
	})
	mux.HandleFunc("/unlabelled", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil // stop net/http from sniffing for us
		fmt.Fprint(w, "<!DOCTYPE html><p>sniffed</p>")
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/text", http.StatusFound)
	})
	mux.HandleFunc("/redirect-away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://elsewhere.invalid/", http.StatusFound)
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	srv := httptest.NewServer(mux) // binds 127.0.0.1
	t.Cleanup(srv.Close)
	return srv
}

func TestFetch(t *testing.T) {
	srv := fetchServer(t)
	r, _ := testRegistry(t, Options{HTTPClient: srv.Client(), FetchMaxBytes: 500}, nil)
	tests := []struct {
		url     string
		exact   string
		want    []string
		not     []string
		isError bool
	}{
		{url: srv.URL + "/text", exact: "plain hello"},
		{url: srv.URL + "/json", exact: `{"ok":true}`},
		{url: srv.URL + "/html", exact: "Doc\n# Heading\nFirst paragraph with a link.\n- one\n- two\n  indented\n    code"},
		{url: srv.URL + "/unlabelled", exact: "sniffed"},
		{url: srv.URL + "/redirect", exact: "plain hello"},
		{url: srv.URL + "/big", want: []string{"0123456789", "[truncated: only the first 500 bytes were fetched]"}},

		{url: srv.URL + "/missing", isError: true, want: []string{"HTTP 404 Not Found from " + srv.URL + "/missing", "no such page here"}},
		{url: srv.URL + "/broken", isError: true, want: []string{"HTTP 502 Bad Gateway"}},
		{url: srv.URL + "/image", isError: true, want: []string{`content type "image/png"`}},
		{url: "ftp://example.com/x", isError: true, want: []string{"not an http or https URL"}},
		{url: "no scheme", isError: true, want: []string{"not an http or https URL"}},
		{url: "http://", isError: true, want: []string{"not an http or https URL"}},
		{url: strings.Replace(srv.URL, "http://", "http://user:hunter2@", 1) + "/missing", isError: true,
			want: []string{"HTTP 404"}, not: []string{"hunter2"}},
	}
	for _, tt := range tests {
		res := call(t, r, Fetch, map[string]any{"url": tt.url})
		if res.IsError != tt.isError {
			t.Errorf("fetch(%q) IsError = %v: %s", tt.url, res.IsError, res.Content)
			continue
		}
		if tt.exact != "" && res.Content != tt.exact {
			t.Errorf("fetch(%q) = %q, want %q", tt.url, res.Content, tt.exact)
		}
		wantParts(t, res, tt.want)
		for _, n := range tt.not {
			if strings.Contains(res.Content, n) {
				t.Errorf("fetch(%q) = %q, must not contain %q", tt.url, res.Content, n)
			}
		}
	}
}

func TestFetchAllowHosts(t *testing.T) {
	srv := fetchServer(t)
	deny, _ := testRegistry(t, Options{HTTPClient: srv.Client(), FetchAllowHosts: []string{"example.com"}}, nil)
	wantErr(t, call(t, deny, Fetch, map[string]any{"url": srv.URL + "/text"}), `fetching from host "127.0.0.1" is not allowed (allowed: example.com)`)

	allow, _ := testRegistry(t, Options{HTTPClient: srv.Client(), FetchAllowHosts: []string{"127.0.0.1"}}, nil)
	wantOK(t, call(t, allow, Fetch, map[string]any{"url": srv.URL + "/redirect"}), "plain hello")
	// The allow-list holds across redirects too.
	wantErr(t, call(t, allow, Fetch, map[string]any{"url": srv.URL + "/redirect-away"}), `redirect to host "elsewhere.invalid" is not allowed`)

	e := newEnv(Options{Workdir: "/", FetchAllowHosts: []string{"Example.com", "*.go.dev", "pkg.test:8080"}})
	for host, want := range map[string]bool{
		"example.com": true, "EXAMPLE.com": true, "docs.example.com": true, "example.com.": true,
		"badexample.com": false, "example.org": false, "go.dev": true, "pkg.go.dev": true, "pkg.test": true,
	} {
		u := mustURL(t, "https://"+host+"/")
		if got := e.hostAllowed(u); got != want {
			t.Errorf("hostAllowed(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestFetchCancel(t *testing.T) {
	srv := fetchServer(t)
	r, _ := testRegistry(t, Options{HTTPClient: srv.Client()}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan tool.Result, 1)
	tl, _ := r.Get(Fetch)
	go func() {
		res, _ := tl.Run(ctx, []byte(`{"url":"`+srv.URL+`/hang"}`))
		done <- res
	}()
	cancel()
	select {
	case res := <-done:
		wantErr(t, res, "context canceled")
	case <-time.After(20 * time.Second): // hang guard only
		t.Fatal("fetch did not return after cancel")
	}
}

func TestFetchConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := strings.Replace(srv.URL, "http://", "http://user:hunter2@", 1)
	srv.Close()
	r, _ := testRegistry(t, Options{}, nil)
	res := call(t, r, Fetch, map[string]any{"url": url})
	wantErr(t, res, "fetch http://user:xxxxx@127.0.0.1")
	if strings.Contains(res.Content, "hunter2") {
		t.Errorf("password leaked: %s", res.Content)
	}
}

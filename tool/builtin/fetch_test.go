package builtin

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
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
	mux.HandleFunc("/redirect-loopback", func(w http.ResponseWriter, r *http.Request) {
		_, port, _ := net.SplitHostPort(r.Host)
		http.Redirect(w, r, "http://127.0.0.1:"+port+"/text", http.StatusFound)
	})
	srv := httptest.NewServer(&countingMux{mux: mux}) // binds 127.0.0.1
	t.Cleanup(srv.Close)
	return srv
}

func TestFetch(t *testing.T) {
	srv := fetchServer(t)
	// The test server is on loopback, which fetch reaches only when allowed
	// by name.
	r, _ := testRegistry(t, Options{HTTPClient: srv.Client(), FetchMaxBytes: 500, FetchAllowHosts: []string{"127.0.0.1"}}, nil)
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
	r, _ := testRegistry(t, Options{HTTPClient: srv.Client(), FetchAllowHosts: []string{"127.0.0.1"}}, nil)
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
	r, _ := testRegistry(t, Options{FetchAllowHosts: []string{"127.0.0.1"}}, nil)
	res := call(t, r, Fetch, map[string]any{"url": url})
	wantErr(t, res, "fetch http://user:xxxxx@127.0.0.1")
	if strings.Contains(res.Content, "hunter2") {
		t.Errorf("password leaked: %s", res.Content)
	}
}

// Without a host allowed by name, fetch reaches no loopback, private,
// link-local or metadata address, however it is spelled or resolved; the
// refusal comes at connection time, before any byte is sent.
func TestNumericHost(t *testing.T) {
	for h, want := range map[string]bool{
		"0x7f000001": true, "2130706433": true, "127.1": true, "0177.0.0.1": true, "0x7f.1": true,
		"127.0.0.1": false, "::1": false, "example.com": false, "cafe.be": false, "deadbeef.com": false, "1.example": false,
	} {
		if got := numericHost(h); got != want {
			t.Errorf("numericHost(%q) = %v, want %v", h, got, want)
		}
	}
}

func TestFetchRefusesPrivateAddresses(t *testing.T) {
	srv := fetchServer(t)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	r, _ := testRegistry(t, Options{}, nil)
	for _, host := range []string{
		"127.0.0.1", "localhost", "0x7f000001", "2130706433", "127.1", "[::1]", "[::ffff:127.0.0.1]",
		"10.0.0.1", "192.168.1.1", "169.254.169.254", "[fd00:ec2::254]", "0.0.0.0", "100.64.0.1",
	} {
		u := "http://" + host + ":" + port + "/text"
		res := call(t, r, Fetch, map[string]any{"url": u})
		if !res.IsError || !strings.Contains(res.Content, "is a loopback, private, link-local or metadata address") &&
			!strings.Contains(res.Content, "is an address in a non-standard spelling") {
			t.Errorf("fetch(%s) = %q, want a refusal", u, res.Content)
		}
	}
	// Loopback or not, the test server saw no request.
	if n := srv.Config.Handler.(*countingMux).n.Load(); n != 0 {
		t.Errorf("the server got %d requests", n)
	}

	// A redirect from an allowed host to a loopback address is refused.
	via, _ := testRegistry(t, Options{FetchAllowHosts: []string{"localhost"}}, nil)
	res := call(t, via, Fetch, map[string]any{"url": "http://localhost:" + port + "/redirect-loopback"})
	wantErr(t, res, `redirect to host "127.0.0.1" is not allowed`)

	// An agent's allowed_hosts narrows further, and names its own exception.
	f := newFetchTool(newEnv(Options{Workdir: "/", FetchAllowHosts: []string{"localhost", "example.com"}}), nil)
	narrowed := f.NarrowHosts([]string{"example.com"})
	rr := tool.NewRegistry(narrowed)
	wantErr(t, call(t, rr, Fetch, map[string]any{"url": "http://localhost:" + port + "/text"}), `fetching from host "localhost" is not allowed (allowed: example.com)`)
}

// countingMux counts the requests a test server received.
type countingMux struct {
	mux *http.ServeMux
	n   atomic.Int64
}

func (c *countingMux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.n.Add(1)
	c.mux.ServeHTTP(w, r)
}

// A fetch narrowed twice (an agent's allowed_hosts, then the run's
// permissions.hosts) reaches only the hosts both lists allow.
func TestFetchNarrowedTwiceOnlyNarrows(t *testing.T) {
	srv := fetchServer(t)
	r, _ := testRegistry(t, Options{HTTPClient: srv.Client()}, nil)
	tl, _ := r.Get(Fetch)
	narrow := func(t tool.Tool, hosts ...string) tool.Tool { return t.(tool.HostNarrower).NarrowHosts(hosts) }

	twice := tool.NewRegistry(narrow(narrow(tl, "127.0.0.1", "example.com"), "example.com"))
	wantErr(t, call(t, twice, Fetch, map[string]any{"url": srv.URL + "/text"}), `fetching from host "127.0.0.1" is not allowed (allowed: example.com)`)
	disjoint := tool.NewRegistry(narrow(narrow(tl, "127.0.0.1"), "example.com"))
	wantErr(t, call(t, disjoint, Fetch, map[string]any{"url": srv.URL + "/text"}), `fetching from host "127.0.0.1" is not allowed (allowed: no host)`)
	again := tool.NewRegistry(narrow(narrow(tl, "127.0.0.1"), "127.0.0.1:8080"))
	wantOK(t, call(t, again, Fetch, map[string]any{"url": srv.URL + "/text"}), "plain hello")
}

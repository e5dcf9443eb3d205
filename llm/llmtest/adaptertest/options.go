package adaptertest

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/deputyhq/deputy/llm"
)

// testNoRuleMatched: the fake's 400 for a request no rule answers is
// KindBadRequest and keeps the server's explanation.
func testNoRuleMatched(t *testing.T, a Adapter) {
	p, _ := Start(t, a, `
rules:
  - match: { model: "^other$" }
    reply: { text: "x" }
`)
	_, err := p.Generate(Context(t), a.request("hi"), nil)
	e := WantKind(t, err, llm.KindBadRequest, Key)
	if !strings.Contains(e.Message, "no rule matched") {
		t.Errorf("message %q does not carry the server's explanation", e.Message)
	}
}

// testInvalidRequests: requests no server could accept are refused as
// KindBadRequest before anything is sent.
func testInvalidRequests(t *testing.T, a Adapter) {
	p, srv := Start(t, a, helloScript)
	bad := map[string]*llm.Request{
		"nil":             nil,
		"no model":        {Messages: []llm.Message{llm.UserMessage("x")}},
		"unknown role":    {Model: a.model(), Messages: []llm.Message{{Role: "system", Content: "x"}}},
		"schema not JSON": {Model: a.model(), Messages: []llm.Message{llm.UserMessage("x")}, Tools: []llm.ToolSpec{{Name: "t", Parameters: json.RawMessage(`{"type":`)}}},
	}
	maps.Copy(bad, a.Invalid)
	for _, name := range slices.Sorted(maps.Keys(bad)) {
		_, err := p.Generate(Context(t), bad[name], nil)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if k := llm.KindOf(err); k != llm.KindBadRequest {
			t.Errorf("%s: error %v has kind %v, want bad request", name, err, k)
		}
		NoSecret(t, err, Key)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d invalid requests reached the server", n)
	}
}

// testHeaders: extra headers from the options are sent.
func testHeaders(t *testing.T, a Adapter) {
	p, srv := Start(t, a, helloScript, func(o *Options) {
		o.Headers = map[string]string{"X-Deputy-Test": "yes"}
	})
	for _, stream := range []bool{false, true} {
		var rec Recorder
		if _, err := p.Generate(Context(t), a.request("x"), rec.Func(stream)); err != nil {
			t.Fatalf("%s: Generate: %v", streamName(stream), err)
		}
	}
	for i, r := range srv.Requests() {
		if got := r.Header.Get("X-Deputy-Test"); got != "yes" {
			t.Errorf("request %d: extra header = %q, want yes", i, got)
		}
	}
}

// testEnvironment: the variables an SDK would read on its own change
// nothing; explicit options win.
func testEnvironment(t *testing.T, a Adapter) {
	if len(a.Env) == 0 {
		t.Skip("the adapter names no environment variables")
	}
	for k, v := range a.Env {
		t.Setenv(k, v)
	}
	p, srv := Start(t, a, helloScript)
	for _, stream := range []bool{false, true} {
		var rec Recorder
		if _, err := p.Generate(Context(t), a.request("x"), rec.Func(stream)); err != nil {
			t.Fatalf("%s: Generate: %v", streamName(stream), err)
		}
	}
	for i, r := range srv.Requests() {
		if got, want := r.Header.Get(a.KeyHeader), a.KeyPrefix+Key; got != want {
			t.Errorf("request %d: %s = %q, want the explicit key", i, a.KeyHeader, got)
		}
		for name, values := range r.Header {
			for _, v := range values {
				if strings.Contains(strings.ToLower(name+": "+v), "junk") {
					t.Errorf("request %d: header %s: %s came from the environment", i, name, v)
				}
			}
		}
	}
}

// countingTransport counts the requests that pass through it.
type countingTransport struct {
	base http.RoundTripper
	n    atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.base.RoundTrip(r)
}

// testHTTPClient: a caller's client carries the requests, plain and
// streamed, and is not modified.
func testHTTPClient(t *testing.T, a Adapter) {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	counting := &countingTransport{base: tr}
	client := &http.Client{Transport: counting}
	p, srv := Start(t, a, helloScript, func(o *Options) { o.HTTPClient = client })
	for _, stream := range []bool{false, true} {
		var rec Recorder
		if _, err := p.Generate(Context(t), a.request("x"), rec.Func(stream)); err != nil {
			t.Fatalf("%s: Generate: %v", streamName(stream), err)
		}
	}
	if client.Transport != counting {
		t.Error("the provider modified the caller's http.Client")
	}
	if n := counting.n.Load(); n != 2 {
		t.Errorf("%d requests went through the caller's client, want 2", n)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("server got %d requests, want 2", n)
	}
}

// testBaseURLSuffix: a base URL copied with its version suffix still
// reaches the right path.
func testBaseURLSuffix(t *testing.T, a Adapter) {
	if a.BaseURLSuffix == "" {
		t.Skip("the adapter names no tolerated suffix")
	}
	p, srv := Start(t, a, helloScript, func(o *Options) { o.BaseURL += a.BaseURLSuffix })
	if _, err := p.Generate(Context(t), a.request("x"), nil); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if got, want := srv.Requests()[0].Path, a.Path(a.model(), false); got != want {
		t.Errorf("path = %q, want %q", got, want)
	}
}

// testCustomName: a name given in the options is the provider's name and
// the one its errors carry.
func testCustomName(t *testing.T, a Adapter) {
	const name = "conformance-custom"
	p, _ := Start(t, a, faultScript("auth", ""), func(o *Options) { o.Name = name })
	if p.Name() != name {
		t.Errorf("Name() = %q, want %q", p.Name(), name)
	}
	_, err := p.Generate(Context(t), a.request("hi"), nil)
	if e := WantKind(t, err, llm.KindAuth, Key); e.Provider != name {
		t.Errorf("error provider %q, want %q", e.Provider, name)
	}
}

package llmtest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/deputyhq/deputy/llm"
)

// endpoint is one dialect as a test client sees it.
type endpoint struct {
	protocol string
	path     func(model string, stream bool) string
	body     func(model string, stream bool) string
	// errType reads the dialect's error kind out of an error body.
	errType func(v map[string]any) any
}

var endpoints = []endpoint{
	{
		protocol: "openai",
		path:     func(string, bool) string { return "/v1/chat/completions" },
		body: func(model string, stream bool) string {
			return `{"model": "` + model + `", "stream": ` + boolJSON(stream) + `, "messages": [{"role": "user", "content": "some question"}]}`
		},
		errType: func(v map[string]any) any { return path(v, "error", "type") },
	},
	{
		protocol: "anthropic",
		path:     func(string, bool) string { return "/v1/messages" },
		body: func(model string, stream bool) string {
			return `{"model": "` + model + `", "max_tokens": 100, "stream": ` + boolJSON(stream) + `, "messages": [{"role": "user", "content": "some question"}]}`
		},
		errType: func(v map[string]any) any { return path(v, "error", "type") },
	},
	{
		protocol: "gemini",
		path: func(model string, stream bool) string {
			if stream {
				return "/v1beta/models/" + model + ":streamGenerateContent?alt=sse"
			}
			return "/v1beta/models/" + model + ":generateContent"
		},
		body: func(string, bool) string {
			return `{"contents": [{"role": "user", "parts": [{"text": "some question"}]}]}`
		},
		errType: func(v map[string]any) any { return path(v, "error", "status") },
	},
}

func boolJSON(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

const faultScript = `
rules:
  - {name: limited, match: {model: "^rate_limit$"}, fault: rate_limit, retry_after: 2}
  - {name: broken, match: {model: "^server_error$"}, fault: server_error}
  - {name: busy, match: {model: "^overloaded$"}, fault: overloaded}
  - {name: denied, match: {model: "^auth$"}, fault: auth}
  - {name: refused, match: {model: "^bad_request$"}, fault: bad_request}
  - {name: garbled, match: {model: "^malformed$"}, fault: malformed, reply: {text: "a reply long enough to stream"}}
  - {name: cut, match: {model: "^drop$"}, fault: drop, reply: {text: "a reply long enough to stream"}}
  - {name: silent, match: {model: "^stall$"}, fault: stall, reply: {text: "a reply long enough to stream"}}
  - {name: oops, match: {model: "^template$"}, reply: {text: "{{ .Missing }}"}}
  - {name: fine, match: {model: "^ok$"}, reply: {text: "fine"}}
`

func TestErrorAnswers(t *testing.T) {
	tests := []struct {
		model   string
		status  map[string]int
		errType map[string]string
		message string
	}{
		{"rate_limit", map[string]int{"openai": 429, "anthropic": 429, "gemini": 429},
			map[string]string{"openai": "requests", "anthropic": "rate_limit_error", "gemini": "RESOURCE_EXHAUSTED"}, "limited"},
		{"server_error", map[string]int{"openai": 500, "anthropic": 500, "gemini": 500},
			map[string]string{"openai": "server_error", "anthropic": "api_error", "gemini": "INTERNAL"}, "broken"},
		{"overloaded", map[string]int{"openai": 503, "anthropic": 529, "gemini": 503},
			map[string]string{"openai": "server_error", "anthropic": "overloaded_error", "gemini": "UNAVAILABLE"}, "busy"},
		{"auth", map[string]int{"openai": 401, "anthropic": 401, "gemini": 401},
			map[string]string{"openai": "invalid_request_error", "anthropic": "authentication_error", "gemini": "UNAUTHENTICATED"}, "denied"},
		{"bad_request", map[string]int{"openai": 400, "anthropic": 400, "gemini": 400},
			map[string]string{"openai": "invalid_request_error", "anthropic": "invalid_request_error", "gemini": "INVALID_ARGUMENT"}, "refused"},
		{"template", map[string]int{"openai": 500, "anthropic": 500, "gemini": 500},
			map[string]string{"openai": "server_error", "anthropic": "api_error", "gemini": "INTERNAL"}, "rule 9 (oops)"},
		{"no-such-model", map[string]int{"openai": 400, "anthropic": 400, "gemini": 400},
			map[string]string{"openai": "invalid_request_error", "anthropic": "invalid_request_error", "gemini": "INVALID_ARGUMENT"},
			`llmtest: no rule matched (model "no-such-model", last message "some question")`},
	}
	srv := StartServer(t, MustParseScript(faultScript))
	c := testClient(t)
	for _, ep := range endpoints {
		for _, tt := range tests {
			for _, stream := range []bool{false, true} {
				name := ep.protocol + "/" + tt.model + map[bool]string{true: "/stream"}[stream]
				t.Run(name, func(t *testing.T) {
					resp, body := postJSON(t, c, srv.URL()+ep.path(tt.model, stream), ep.body(tt.model, stream))
					v := decode(t, string(body))
					if resp.StatusCode != tt.status[ep.protocol] || ep.errType(v) != tt.errType[ep.protocol] {
						t.Errorf("got %d %v, want %d %s: %s", resp.StatusCode, ep.errType(v), tt.status[ep.protocol], tt.errType[ep.protocol], body)
					}
					if msg, _ := path(v, "error", "message").(string); !strings.Contains(msg, tt.message) {
						t.Errorf("message %q does not contain %q", msg, tt.message)
					}
					if ep.protocol == "anthropic" && v["type"] != "error" {
						t.Errorf("anthropic error without type: error: %s", body)
					}
					if ep.protocol == "gemini" && path(v, "error", "code") != float64(resp.StatusCode) {
						t.Errorf("gemini error code %v, status %d", path(v, "error", "code"), resp.StatusCode)
					}
					if tt.model == "rate_limit" {
						if got := resp.Header.Get("Retry-After"); got != "2" {
							t.Errorf("Retry-After = %q, want 2", got)
						}
						if ep.protocol == "openai" && resp.Header.Get("Retry-After-Ms") != "2000" {
							t.Errorf("retry-after-ms = %q", resp.Header.Get("Retry-After-Ms"))
						}
						if ep.protocol == "gemini" && path(v, "error", "details", 0, "retryDelay") != "2s" {
							t.Errorf("gemini RetryInfo = %v", path(v, "error", "details"))
						}
					}
				})
			}
		}
	}
}

func TestMalformed(t *testing.T) {
	srv := StartServer(t, MustParseScript(faultScript))
	c := testClient(t)
	for _, ep := range endpoints {
		t.Run(ep.protocol, func(t *testing.T) {
			resp, body := postJSON(t, c, srv.URL()+ep.path("malformed", false), ep.body("malformed", false))
			if resp.StatusCode != 200 || json.Valid(body) || len(body) == 0 {
				t.Errorf("non-stream: status %d body %q, want 200 and broken JSON", resp.StatusCode, body)
			}
			resp, err := send(t.Context(), c, srv.URL()+ep.path("malformed", true), ep.body("malformed", true))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			events, err := readEvents(resp.Body)
			if err != nil || resp.StatusCode != 200 || len(events) != 2 {
				t.Fatalf("stream: status %d, %d events, %v", resp.StatusCode, len(events), err)
			}
			if !json.Valid([]byte(events[0].data)) || json.Valid([]byte(events[1].data)) {
				t.Errorf("stream: want a good event, then broken JSON: %q", events)
			}
		})
	}
}

func TestDrop(t *testing.T) {
	srv := StartServer(t, MustParseScript(faultScript))
	c := testClient(t)
	for _, ep := range endpoints {
		t.Run(ep.protocol, func(t *testing.T) {
			resp, err := send(t.Context(), c, srv.URL()+ep.path("drop", false), ep.body("drop", false))
			if err == nil {
				resp.Body.Close()
				t.Fatalf("non-stream: got status %d, want the connection dropped", resp.StatusCode)
			}
			resp, err = send(t.Context(), c, srv.URL()+ep.path("drop", true), ep.body("drop", true))
			if err != nil {
				t.Fatalf("stream: %v, want headers and a first event", err)
			}
			defer resp.Body.Close()
			events, err := readEvents(resp.Body)
			if len(events) != 1 || !json.Valid([]byte(events[0].data)) {
				t.Errorf("stream: events %q, want one good event", events)
			}
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("stream: read error %v, want unexpected EOF", err)
			}
		})
	}
	for _, r := range srv.Requests() {
		want := map[bool]int{false: 0, true: 200}[r.Stream]
		if r.Status != want || r.Rule != "cut" || r.Done.IsZero() {
			t.Errorf("log entry: stream %v status %d rule %q done %v", r.Stream, r.Status, r.Rule, r.Done)
		}
	}
}

func TestStallEndsWhenClientGoes(t *testing.T) {
	srv := StartServer(t, MustParseScript(faultScript))
	c := testClient(t)
	for i, ep := range endpoints {
		t.Run(ep.protocol, func(t *testing.T) {
			// Non-stream: nothing comes back until the client gives up.
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error)
			go func() {
				resp, err := send(ctx, c, srv.URL()+ep.path("stall", false), ep.body("stall", false))
				if err == nil {
					resp.Body.Close()
				}
				done <- err
			}()
			waitLogged(t, srv, 2*i+1)
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("non-stream: err = %v, want cancelled", err)
			}

			// Stream: a first event, then silence until the client gives up.
			ctx, cancel = context.WithCancel(t.Context())
			defer cancel()
			resp, err := send(ctx, c, srv.URL()+ep.path("stall", true), ep.body("stall", true))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			if ev := readOneEvent(t, br); !json.Valid([]byte(ev.data)) {
				t.Errorf("first event %q", ev.data)
			}
			cancel()
			if _, err := io.ReadAll(br); err == nil {
				t.Error("stream: read after cancel succeeded")
			}
		})
	}
	// The handlers notice the client went away; Close (in cleanup) waits for
	// them, and goleak would catch one left behind.
}

func TestCloseUnblocksStall(t *testing.T) {
	srv, err := NewServer(MustParseScript(faultScript), ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := testClient(t)
	ep := endpoints[0]
	// One stalled stream, reading its first event, and one stalled plain request.
	resp, err := send(t.Context(), c, srv.URL()+ep.path("stall", true), ep.body("stall", true))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	readOneEvent(t, br)
	plain := make(chan error)
	go func() {
		resp, err := send(context.Background(), c, srv.URL()+ep.path("stall", false), ep.body("stall", false))
		if err == nil {
			resp.Body.Close()
		}
		plain <- err
	}()
	waitLogged(t, srv, 2)
	if err := srv.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-plain; err == nil {
		t.Error("the stalled request got an answer after Close")
	}
	if _, err := io.ReadAll(br); err == nil {
		t.Error("the stalled stream ended cleanly after Close")
	}
	for _, r := range srv.Requests() {
		if r.Done.IsZero() {
			t.Errorf("request still in flight after Close: %+v", r)
		}
	}
	if err := srv.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := send(t.Context(), c, srv.URL()+ep.path("ok", false), ep.body("ok", false)); err == nil {
		t.Error("a closed server answered")
	}
}

func TestLatencyCutShortByClient(t *testing.T) {
	srv := StartServer(t, MustParseScript("rules:\n  - {name: slow, latency: 1h, reply: {text: late}}\n"))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() {
		resp, err := send(ctx, testClient(t), srv.URL()+"/v1/chat/completions", endpoints[0].body("m", false))
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	waitLogged(t, srv, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
}

func TestChunkDelayAndLatencyStillAnswer(t *testing.T) {
	srv := StartServer(t, MustParseScript("rules:\n  - {latency: 2ms, chunk_delay: 1ms, reply: {text: a few words to stream}}\n"))
	resp, err := send(t.Context(), testClient(t), srv.URL()+"/v1/chat/completions", endpoints[0].body("m", true))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events, err := readEvents(resp.Body)
	if err != nil || len(events) < 4 || events[len(events)-1].data != "[DONE]" {
		t.Errorf("%d events, %v", len(events), err)
	}
}

func TestRequestLogShowsConcurrency(t *testing.T) {
	srv, err := NewServer(MustParseScript(faultScript), ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := testClient(t)
	// Three streams stall after their first event; once all three have sent
	// one, all three are in flight at once.
	const n = 3
	var bodies []io.Closer
	for i := range n {
		ep := endpoints[i]
		resp, err := send(t.Context(), c, srv.URL()+ep.path("stall", true), ep.body("stall", true), "Authorization", "Bearer sk-secret")
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, resp.Body)
		readOneEvent(t, bufio.NewReader(resp.Body))
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	for _, b := range bodies {
		b.Close()
	}
	reqs := srv.Requests()
	if len(reqs) != n {
		t.Fatalf("%d requests logged", len(reqs))
	}
	for i, r := range reqs {
		if r.Protocol != endpoints[i].protocol || !r.Stream || r.Status != 200 || r.Rule != "silent" {
			t.Errorf("request %d: %+v", i, r)
		}
		if r.Header.Get("Authorization") != "Bearer sk-secret" || len(r.Body) == 0 || r.Parsed == nil || r.Parsed.Messages[0].Content != "some question" {
			t.Errorf("request %d: header, body or parsed request missing", i)
		}
		for _, other := range reqs {
			if !r.Received.Before(other.Done) {
				t.Errorf("request %d arrived after another was done: the server did not answer concurrently", i)
			}
		}
		if i > 0 && r.Received.Before(reqs[i-1].Received) {
			t.Errorf("log not in arrival order")
		}
	}
}

func TestRequestsEndpoint(t *testing.T) {
	srv := StartServer(t, MustParseScript(faultScript))
	c := testClient(t)
	postJSON(t, c, srv.URL()+"/v1/chat/completions", `{"model": "ok", "messages": [{"role": "user", "content": "hi"},
		{"role": "assistant", "tool_calls": [{"id": "x", "type": "function", "function": {"name": "t", "arguments": "{broken"}}]}]}`,
		"Authorization", "Bearer sk-very-secret")
	postJSON(t, c, srv.URL()+"/v1/messages", `not json at all`, "X-Api-Key", "ak-very-secret")
	resp, err := c.Get(srv.URL() + "/_requests")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "very-secret") {
		t.Errorf("/_requests shows a credential:\n%s", raw)
	}
	var log []map[string]any
	if err := json.Unmarshal(raw, &log); err != nil {
		t.Fatalf("/_requests is not a JSON array: %v\n%s", err, raw)
	}
	if len(log) != 2 {
		t.Fatalf("%d entries, want 2 (the log does not log itself)", len(log))
	}
	first, second := log[0], log[1]
	if first["protocol"] != "openai" || first["rule"] != "fine" || first["status"] != 200.0 || path(first, "body", "model") != "ok" {
		t.Errorf("first entry: %v", first)
	}
	if path(first, "header", "Authorization", 0) != "[redacted]" {
		t.Errorf("authorization = %v", path(first, "header", "Authorization"))
	}
	if path(first, "parsed", "messages", 1, "tool_calls", 0, "arguments") != "{broken" {
		t.Errorf("broken arguments shown as %v", path(first, "parsed", "messages", 1, "tool_calls", 0, "arguments"))
	}
	if first["received"] == nil || first["done"] == nil {
		t.Errorf("timestamps missing: %v", first)
	}
	if second["body"] != "not json at all" || second["status"] != 400.0 || second["parsed"] != nil || path(second, "header", "X-Api-Key", 0) != "[redacted]" {
		t.Errorf("second entry: %v", second)
	}
	// The Go log keeps the header: tests check that keys are sent.
	if got := srv.Requests()[0].Header.Get("Authorization"); got != "Bearer sk-very-secret" {
		t.Errorf("Requests() header = %q", got)
	}
}

func TestUnknownPathIsLogged(t *testing.T) {
	srv := StartServer(t, MustParseScript(faultScript))
	c := testClient(t)
	resp, body := postJSON(t, c, srv.URL()+"/v1/completions", `{"prompt": "x"}`)
	if resp.StatusCode != 404 || !strings.Contains(string(body), "no such endpoint") {
		t.Errorf("status %d body %s", resp.StatusCode, body)
	}
	get, err := c.Get(srv.URL() + "/v1/chat/completions")
	if err != nil {
		t.Fatal(err)
	}
	get.Body.Close()
	if get.StatusCode != 404 {
		t.Errorf("GET on the chat path: status %d", get.StatusCode)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].Path != "/v1/completions" || reqs[0].Protocol != "" || reqs[0].Status != 404 || string(reqs[0].Body) != `{"prompt": "x"}` {
		t.Errorf("log: %+v", reqs)
	}
}

func TestNewServerAddresses(t *testing.T) {
	s := MustParseScript(faultScript)
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0", "example.com:0"} {
		if srv, err := NewServer(s, ServerOptions{Addr: addr}); err == nil {
			srv.Close()
			t.Errorf("NewServer(%q) listened on a non-loopback address", addr)
		} else if !strings.Contains(err.Error(), "loopback") {
			t.Errorf("NewServer(%q): %v, want a loopback refusal", addr, err)
		}
	}
	if _, err := NewServer(s, ServerOptions{Addr: "no port"}); err == nil {
		t.Error("NewServer accepted an address without a port")
	}
	if _, err := NewServer(nil, ServerOptions{}); err == nil {
		t.Error("NewServer accepted a nil script")
	}
	if _, err := NewServer(&Script{}, ServerOptions{}); err == nil {
		t.Error("NewServer accepted a script without rules")
	}
	srv, err := NewServer(s, ServerOptions{Addr: "localhost:0"})
	if err != nil {
		t.Fatalf("localhost: %v", err)
	}
	defer srv.Close()
	if !strings.HasPrefix(srv.URL(), "http://") || strings.HasSuffix(srv.URL(), "/") {
		t.Errorf("URL = %q", srv.URL())
	}
	srv2, err := NewServer(s, ServerOptions{Addr: "0.0.0.0:0", AllowNonLoopback: true})
	if err != nil {
		t.Fatalf("AllowNonLoopback: %v", err)
	}
	defer srv2.Close()
	if !strings.HasPrefix(srv2.URL(), "http://127.0.0.1:") {
		t.Errorf("URL of a wildcard listener = %q, want it reached over loopback", srv2.URL())
	}
}

func TestServe(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	urls := make(chan string, 1)
	var mu sync.Mutex
	var lines []string
	done := make(chan error)
	go func() {
		done <- Serve(ctx, MustParseScript(faultScript), ServerOptions{Logf: func(f string, a ...any) {
			mu.Lock()
			defer mu.Unlock()
			lines = append(lines, f)
		}}, func(url string) { urls <- url })
	}()
	url := <-urls
	resp, body := postJSON(t, testClient(t), url+"/v1/chat/completions", endpoints[0].body("ok", false))
	if resp.StatusCode != 200 || path(decode(t, string(body)), "choices", 0, "message", "content") != "fine" {
		t.Errorf("status %d body %s", resp.StatusCode, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve returned %v after ctx ended, want nil", err)
	}
	mu.Lock()
	if len(lines) == 0 {
		t.Error("Logf was not called")
	}
	mu.Unlock()
	if err := Serve(t.Context(), MustParseScript(faultScript), ServerOptions{Addr: "0.0.0.0:0"}, nil); err == nil {
		t.Error("Serve listened on a non-loopback address")
	}
}

func TestStartServer(t *testing.T) {
	var srv *Server
	t.Run("inner", func(t *testing.T) {
		srv = StartServer(t, MustParseScript(faultScript))
		if srv.URL() == "" {
			t.Fatal("no URL")
		}
	})
	// The inner test's cleanup closed the server.
	if _, err := send(t.Context(), testClient(t), srv.URL()+"/v1/chat/completions", endpoints[0].body("ok", false)); err == nil {
		t.Error("the server outlived its test")
	}
}

func TestProviderAndServerAgree(t *testing.T) {
	// The same script played in process and over HTTP gives the same text
	// and the same error kinds.
	p := NewProvider(MustParseScript(faultScript))
	resp, err := p.Generate(t.Context(), &llm.Request{Model: "ok", Messages: []llm.Message{llm.UserMessage("q")}}, nil)
	if err != nil || resp.Message.Content != "fine" {
		t.Fatalf("provider: %+v, %v", resp, err)
	}
	srv := StartServer(t, MustParseScript(faultScript))
	for _, model := range []string{"rate_limit", "server_error", "auth", "bad_request", "template"} {
		_, perr := p.Generate(t.Context(), &llm.Request{Model: model}, nil)
		hresp, _ := postJSON(t, testClient(t), srv.URL()+"/v1/chat/completions", endpoints[0].body(model, false))
		if llm.KindOf(perr) != llm.KindForStatus(hresp.StatusCode) {
			t.Errorf("%s: provider kind %v, server status %d", model, llm.KindOf(perr), hresp.StatusCode)
		}
	}
}

// The log keeps the newest requests within MaxLogBytes of bodies: a fake
// left serving drops its oldest entries instead of growing without end,
// and /_requests says how many it dropped.
func TestRequestLogIsBounded(t *testing.T) {
	srv, err := NewServer(MustParseScript(faultScript), ServerOptions{MaxLogBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c := testClient(t)
	const n = 40
	for i := range n {
		postJSON(t, c, srv.URL()+"/v1/chat/completions",
			fmt.Sprintf(`{"model": "ok", "messages": [{"role": "user", "content": "request %03d %s"}]}`, i, strings.Repeat("x", 60)))
	}
	reqs := srv.Requests()
	if len(reqs) == 0 || len(reqs) >= n {
		t.Fatalf("%d requests kept of %d", len(reqs), n)
	}
	kept := 0
	for i, r := range reqs {
		kept += len(r.Body)
		want := fmt.Sprintf("request %03d ", n-len(reqs)+i)
		if !strings.Contains(string(r.Body), want) {
			t.Errorf("entry %d is not %q: %s", i, want, r.Body)
		}
	}
	if kept > 1000 {
		t.Errorf("%d bytes of bodies kept, bound 1000", kept)
	}
	resp, err := c.Get(srv.URL() + "/_requests")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got, want := resp.Header.Get("X-Requests-Dropped"), fmt.Sprint(n-len(reqs)); got != want {
		t.Errorf("X-Requests-Dropped = %q, want %q", got, want)
	}
}

// The log keeps each answer's body as sent, a stream's as its events, and
// none for a fault.
func TestLogKeepsAnswers(t *testing.T) {
	srv := StartServer(t, MustParseScript(`rules:
  - {name: boom, match: {last: boom}, fault: server_error}
  - {reply: {text: "hello there"}}`))
	c := testClient(t)
	postJSON(t, c, srv.URL()+"/v1/chat/completions", `{"model": "m", "messages": [{"role": "user", "content": "hi"}]}`)
	postJSON(t, c, srv.URL()+"/v1/chat/completions", `{"model": "m", "stream": true, "messages": [{"role": "user", "content": "hi"}]}`)
	postJSON(t, c, srv.URL()+"/v1/chat/completions", `{"model": "m", "messages": [{"role": "user", "content": "boom"}]}`)
	log := srv.Requests()
	if len(log) != 3 {
		t.Fatalf("%d requests", len(log))
	}
	if a := string(log[0].Answer); !strings.HasPrefix(a, "{") || !strings.Contains(a, `"hello there"`) {
		t.Errorf("whole answer logged as %q", a)
	}
	if a := string(log[1].Answer); !strings.HasPrefix(a, "data: ") || !strings.Contains(a, "data: [DONE]") {
		t.Errorf("stream logged as %q", a)
	}
	if log[2].Answer != nil {
		t.Errorf("a fault's answer logged: %q", log[2].Answer)
	}
}

package llmtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// testClient is a plain HTTP client without keep-alive, so no idle
// connection goroutine outlives a test (goleak checks).
func testClient(t *testing.T) *http.Client {
	tr := &http.Transport{DisableKeepAlives: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// postJSON posts body (a string of JSON or a value to marshal) and returns
// the response with its body read.
func postJSON(t *testing.T, c *http.Client, url string, body any, header ...string) (*http.Response, []byte) {
	t.Helper()
	resp, err := send(context.Background(), c, url, body, header...)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("POST %s: reading body: %v", url, err)
	}
	return resp, b
}

// send posts without reading the body; header is name, value pairs.
func send(ctx context.Context, c *http.Client, url string, body any, header ...string) (*http.Response, error) {
	var data []byte
	switch b := body.(type) {
	case string:
		data = []byte(b)
	default:
		var err error
		if data, err = json.Marshal(b); err != nil {
			return nil, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return c.Do(req)
}

// event is one parsed server-sent event.
type event struct {
	name string
	data string
}

// readEvents parses an SSE body until it ends, returning the events and
// the read error, if any (a dropped connection).
func readEvents(r io.Reader) ([]event, error) {
	var events []event
	var cur event
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.name != "" || cur.data != "" {
				events = append(events, cur)
			}
			cur = event{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data += strings.TrimPrefix(line, "data: ")
		default:
			return events, &unexpectedLine{line}
		}
	}
	return events, sc.Err()
}

type unexpectedLine struct{ line string }

func (e *unexpectedLine) Error() string { return "unexpected SSE line " + e.line }

// readOneEvent reads lines until the first complete event.
func readOneEvent(t *testing.T, br *bufio.Reader) event {
	t.Helper()
	var ev event
	for range 100 {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the first event: %v", err)
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "":
			return ev
		case strings.HasPrefix(line, "event: "):
			ev.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.data += strings.TrimPrefix(line, "data: ")
		}
	}
	t.Fatal("no complete event in 100 lines")
	return ev
}

// decode unmarshals JSON into a generic value, failing the test if it is
// not valid.
func decode(t *testing.T, data string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, data)
	}
	return v
}

// path walks a decoded JSON value: keys for objects, ints for arrays.
func path(v any, steps ...any) any {
	for _, s := range steps {
		switch k := s.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// waitLogged waits until the server has logged n requests and the last
// has been matched to a rule, so a test knows its handler is past parsing.
// It gives up after about ten seconds.
func waitLogged(t *testing.T, srv *Server, n int) {
	t.Helper()
	for range 2000 {
		reqs := srv.Requests()
		if len(reqs) >= n && reqs[n-1].Rule != "" {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("the server did not log %d requests", n)
}

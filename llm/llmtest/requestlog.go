package llmtest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/deputyhq/deputy/llm"
)

// Request is one entry of a Server's request log. Every request is
// logged, failed ones included.
type Request struct {
	// Received is when the request arrived; Done when its answer was
	// finished, a stream's just before its last event went out (zero while
	// it is in flight): a client that has read its answer finds Done and
	// Status set. Tests compare them to prove that requests overlapped.
	Received time.Time
	Done     time.Time
	// Protocol is "openai", "anthropic" or "gemini"; empty for a path that
	// is none of them.
	Protocol string
	Method   string
	Path     string
	// Remote is the client's address (host:port) as the server saw it:
	// requests from one address came over one connection, so tests count
	// the connections a client opened.
	Remote string
	// Header is as received, auth headers included: the log is test
	// equipment, so tests can check that a key was sent. The JSON form
	// served at /_requests redacts them.
	Header http.Header
	Body   []byte
	Stream bool
	// Parsed is the request translated back to neutral form; nil when it
	// could not be parsed. Params fields are nil when the request did not
	// set them.
	Parsed *llm.Request
	// Rule is the rule that answered, "" if none did.
	Rule string
	// Status is the HTTP status written; 0 when no response was written
	// (a dropped connection, a stall or latency cut short).
	Status int
	// Answer is the body of the answer as sent, a stream's events as
	// server-sent events; nil for an error or a scripted fault. Tests find
	// in it what a later request must send back (signatures, reasoning
	// items).
	Answer []byte
}

func (r *Request) clone() Request {
	c := *r
	c.Header = r.Header.Clone()
	c.Body = bytes.Clone(r.Body)
	c.Answer = bytes.Clone(r.Answer)
	c.Parsed = cloneRequest(r.Parsed)
	return c
}

// Requests returns a copy of the request log, in arrival order: the
// newest entries, when older ones were dropped (ServerOptions.MaxLogBytes).
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.log))
	for i, r := range s.log {
		out[i] = r.clone()
	}
	return out
}

// logStart adds an entry for a request that just arrived.
func (s *Server) logStart(r *http.Request, protocol string) *Request {
	e := &Request{
		Received: time.Now(),
		Protocol: protocol,
		Method:   r.Method,
		Path:     r.URL.Path,
		Remote:   r.RemoteAddr,
		Header:   r.Header.Clone(),
	}
	s.mu.Lock()
	s.log = append(s.log, e)
	s.mu.Unlock()
	return e
}

// logBody sets e's body and drops the oldest entries while the bodies
// kept pass the server's bound; e and the entries after it always stay.
func (s *Server) logBody(e *Request, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e.Body = body
	s.logBytes += len(body)
	n := 0
	for n < len(s.log)-1 && s.logBytes > s.maxLogBytes && s.log[n] != e {
		s.logBytes -= len(s.log[n].Body) + len(s.log[n].Answer)
		n++
	}
	if n > 0 {
		s.dropped += n
		s.log = append(s.log[:0], s.log[n:]...)
		clear(s.log[len(s.log):cap(s.log)])
	}
}

// logUpdate changes an entry under the lock, as Requests may copy it at
// any time.
func (s *Server) logUpdate(e *Request, f func(e *Request)) {
	s.mu.Lock()
	f(e)
	s.mu.Unlock()
}

// secretHeaders are the headers that carry credentials.
var secretHeaders = []string{"Authorization", "Proxy-Authorization", "X-Api-Key", "Api-Key", "X-Goog-Api-Key", "Cookie"}

// requestJSON is the form of a log entry served at /_requests.
type requestJSON struct {
	Received time.Time       `json:"received"`
	Done     *time.Time      `json:"done,omitempty"`
	Protocol string          `json:"protocol"`
	Method   string          `json:"method"`
	Path     string          `json:"path"`
	Remote   string          `json:"remote"`
	Header   http.Header     `json:"header"`
	Body     json.RawMessage `json:"body,omitempty"`
	Stream   bool            `json:"stream"`
	Parsed   *parsedJSON     `json:"parsed,omitempty"`
	Rule     string          `json:"rule"`
	Status   int             `json:"status"`
}

type parsedJSON struct {
	Model    string            `json:"model"`
	System   string            `json:"system,omitempty"`
	Messages []llm.Message     `json:"messages"`
	Tools    []llm.ToolSpec    `json:"tools,omitempty"`
	Params   llm.Params        `json:"params"`
	Output   *llm.OutputSchema `json:"output,omitempty"`
}

// toJSON renders the entry for /_requests: secrets redacted, a JSON body
// inline and any other body as a string.
func (r *Request) toJSON() requestJSON {
	j := requestJSON{
		Received: r.Received, Protocol: r.Protocol, Method: r.Method, Path: r.Path, Remote: r.Remote,
		Header: r.Header.Clone(), Stream: r.Stream, Rule: r.Rule, Status: r.Status,
	}
	if !r.Done.IsZero() {
		d := r.Done
		j.Done = &d
	}
	for _, h := range secretHeaders {
		if _, ok := j.Header[h]; ok {
			j.Header[h] = []string{"[redacted]"}
		}
	}
	switch {
	case len(r.Body) == 0:
	case json.Valid(r.Body):
		var b bytes.Buffer
		if json.Compact(&b, r.Body) == nil {
			j.Body = b.Bytes()
		}
	default:
		j.Body, _ = json.Marshal(strings.ToValidUTF8(string(r.Body), "\uFFFD"))
	}
	if p := r.Parsed; p != nil {
		c := cloneRequest(p)
		// RawMessage fields must hold valid JSON to be encoded; what a
		// client sent broken is shown as a string instead.
		for i := range c.Messages {
			for k := range c.Messages[i].ToolCalls {
				c.Messages[i].ToolCalls[k].Arguments = validJSON(c.Messages[i].ToolCalls[k].Arguments)
			}
		}
		for i := range c.Tools {
			c.Tools[i].Parameters = validJSON(c.Tools[i].Parameters)
		}
		if c.Output != nil {
			c.Output.Schema = validJSON(c.Output.Schema)
		}
		j.Parsed = &parsedJSON{Model: c.Model, System: c.System, Messages: c.Messages, Tools: c.Tools, Params: c.Params, Output: c.Output}
	}
	return j
}

// validJSON returns raw if it is valid JSON (or empty), and otherwise raw
// as a JSON string.
func validJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	if json.Valid(raw) {
		return raw
	}
	b, _ := json.Marshal(strings.ToValidUTF8(string(raw), "\uFFFD"))
	return b
}

// serveLog answers GET /_requests with the log as a JSON array.
func (s *Server) serveLog(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	out := make([]requestJSON, len(s.log))
	for i, e := range s.log {
		out[i] = e.toJSON()
	}
	dropped := s.dropped
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	// The array holds the entries kept; this many older ones were dropped.
	w.Header().Set("X-Requests-Dropped", strconv.Itoa(dropped))
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(out)
}

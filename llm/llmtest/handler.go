package llmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"
)

// maxBody bounds a request body; prompts in tests are far smaller.
const maxBody = 32 << 20

// llmHandler serves one dialect. With a nil wire it answers every request
// with 404, logging it all the same.
func (s *Server) llmHandler(wr wire) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.enter() {
			http.Error(w, "llmtest: server is closing", http.StatusServiceUnavailable)
			return
		}
		defer s.handlers.Done()
		protocol := ""
		if wr != nil {
			protocol = wr.protocol()
		}
		e := s.logStart(r, protocol)
		sw := &statusWriter{ResponseWriter: w}
		sw.done = func() {
			s.logUpdate(e, func(e *Request) {
				if e.Done.IsZero() {
					e.Done = time.Now()
					e.Status = sw.status
				}
			})
		}
		s.serveLLM(sw, r, wr, e)
		// A whole answer is complete for the client only once the handler
		// returns (net/http then sends Content-Length or the last chunk), so
		// a client that has read an answer finds it logged as done. A stream
		// is logged as done before its last event (stream), which a client
		// may act on without waiting for the end of the body.
		sw.done()
		if s.logf != nil {
			s.logf("llmtest: %s %s %s -> %d rule=%q stream=%v", protocol, r.Method, r.URL.Path, sw.status, e.Rule, e.Stream)
		}
	})
}

func (s *Server) serveLLM(w *statusWriter, r *http.Request, wr wire, e *Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	s.logBody(e, body)
	if wr == nil {
		writeJSONError(w, http.StatusNotFound, map[string]any{"error": map[string]any{
			"message": "llmtest: no such endpoint: " + r.Method + " " + r.URL.Path +
				" (the fake serves POST /v1/chat/completions, POST /v1/responses, POST /v1/messages, POST /v1beta/models/{model}:generateContent and :streamGenerateContent)",
			"type": "not_found_error", "code": 404}})
		return
	}
	if err != nil {
		wr.writeError(w, newHTTPError(errBadRequest, "llmtest: reading the request body: %v", err))
		return
	}
	c, err := wr.parse(r, body)
	if err != nil {
		var he *httpError
		if !errors.As(err, &he) {
			he = newHTTPError(errBadRequest, "llmtest: %v", err)
		}
		wr.writeError(w, he)
		return
	}
	s.logUpdate(e, func(e *Request) {
		e.Stream = c.stream
		e.Parsed = cloneRequest(c.req)
	})
	if c.strict != nil && s.script.Strict {
		wr.writeError(w, c.strict)
		return
	}
	if !s.admit() {
		he := newHTTPError(errRateLimit, "llmtest: more than %d concurrent requests", s.maxConcurrent)
		he.retryAfter = s.limitRetryAfter
		wr.writeError(w, he)
		return
	}
	defer s.leave()
	a, rule, err := c.resumed, "", error(nil)
	if a != nil {
		rule = a.Rule
	} else {
		a, rule, err = s.script.answer(c.req, wr.idPrefix())
	}
	s.logUpdate(e, func(e *Request) { e.Rule = rule })
	if err != nil {
		wr.writeError(w, answerHTTPError(err))
		return
	}
	if !s.wait(r.Context(), a.Latency) {
		return
	}
	if he := faultHTTPError(a); he != nil {
		wr.writeError(w, he)
		return
	}
	id := s.nextID()
	if !c.stream {
		body := wr.response(c, a, id)
		s.logAnswer(e, a, body)
		s.respond(w, r, wr, a, body)
		return
	}
	events := wr.events(c, a, id)
	if a.Fault == FaultNone {
		var b bytes.Buffer
		for _, ev := range events {
			_ = writeEvent(&b, ev)
		}
		s.logAnswer(e, a, b.Bytes())
	}
	s.stream(w, r, wr, a, events)
}

// logAnswer keeps the body of an answer that is sent whole (no fault) in
// its log entry, before it is sent: a client may act on it at once.
func (s *Server) logAnswer(e *Request, a *Answer, body []byte) {
	if a.Fault != FaultNone {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e.Answer = body
	s.logBytes += len(body)
}

// respond writes a whole (non-streamed) answer, or acts out a fault.
func (s *Server) respond(w *statusWriter, r *http.Request, wr wire, a *Answer, body []byte) {
	switch a.Fault {
	case FaultStall:
		// Block before any header, as a server that never answers.
		s.wait(r.Context(), -1)
		return
	case FaultDrop:
		hangUp(w)
		return
	case FaultMalformed:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"id": "llmtest-malformed", "choices": [{"index": 0, `))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// stream writes an answer as server-sent events, or acts out a fault after
// the first event.
func (s *Server) stream(w *statusWriter, r *http.Request, wr wire, a *Answer, events []sseEvent) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	for i, ev := range events {
		if i > 0 && !s.wait(r.Context(), a.ChunkDelay) {
			return
		}
		if i == len(events)-1 && (i > 0 || a.Fault == FaultNone) {
			// A client may return as soon as it has the last event, before
			// this handler does: the answer is logged as done first, so a
			// test reading the log then finds it (status included).
			w.done()
		}
		if writeEvent(w, ev) != nil || rc.Flush() != nil {
			return
		}
		if i > 0 {
			continue
		}
		// After the first event a fault strikes, so clients see a stream
		// that started well.
		switch a.Fault {
		case FaultStall:
			s.wait(r.Context(), -1)
			return
		case FaultDrop:
			hangUp(w)
			return
		case FaultMalformed:
			w.done() // as for a last event: the client fails on this one
			_ = writeEvent(w, wr.brokenEvent())
			_ = rc.Flush()
			return
		}
	}
}

// wait waits d (forever when d < 0) and reports whether it ran out, false
// when the client went away or the server is closing.
func (s *Server) wait(ctx context.Context, d time.Duration) bool {
	if d == 0 {
		return ctx.Err() == nil
	}
	var timeout <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-ctx.Done():
		return false
	case <-s.closing:
		return false
	case <-timeout:
		return true
	}
}

// admit counts a model request in, or refuses it when MaxConcurrent are
// already being answered.
func (s *Server) admit() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.maxConcurrent > 0 && s.active >= s.maxConcurrent {
		return false
	}
	s.active++
	return true
}

func (s *Server) leave() {
	s.mu.Lock()
	s.active--
	s.mu.Unlock()
}

func (s *Server) nextID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return "llmtest" + strconv.FormatInt(s.seq, 10)
}

// hangUp closes the connection under the response, so the client sees a
// connection that dropped. What was flushed before stays sent; nothing is
// flushed here, so a response with no header yet gets none. The request is
// logged as done first: the client learns of the drop at once.
func hangUp(w *statusWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	w.done()
	_ = conn.Close()
}

// writeEvent writes one server-sent event.
func writeEvent(w io.Writer, ev sseEvent) error {
	var b bytes.Buffer
	if ev.name != "" {
		b.WriteString("event: ")
		b.WriteString(ev.name)
		b.WriteByte('\n')
	}
	b.WriteString("data: ")
	b.Write(ev.data)
	b.WriteString("\n\n")
	_, err := w.Write(b.Bytes())
	return err
}

// writeJSONError writes v as a JSON error answer with status.
func writeJSONError(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// mustJSON marshals values built by this package, which cannot fail.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("llmtest: " + err.Error())
	}
	return b
}

// statusWriter remembers the status written, for the log. Unwrap lets
// http.ResponseController reach Flush and Hijack underneath.
type statusWriter struct {
	http.ResponseWriter
	status int
	done   func() // logs the request as done, once
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

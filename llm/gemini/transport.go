package gemini

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/deputyhq/deputy/llm"
)

// callState collects what the SDK does not hand back to its caller: the
// headers of the last response (genai's APIError has no headers, and
// Retry-After lives there) and the error that cut a streamed body short.
type callState struct {
	stream bool

	mu      sync.Mutex
	header  http.Header
	bodyErr error
}

type stateKey struct{}

func withState(ctx context.Context, st *callState) context.Context {
	return context.WithValue(ctx, stateKey{}, st)
}

func (st *callState) setHeader(h http.Header) {
	st.mu.Lock()
	st.header = h.Clone()
	st.mu.Unlock()
}

func (st *callState) responseHeader() http.Header {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.header
}

func (st *callState) setBodyErr(err error) {
	st.mu.Lock()
	if st.bodyErr == nil {
		st.bodyErr = err
	}
	st.mu.Unlock()
}

func (st *callState) streamErr() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.bodyErr
}

// stateTransport records into the request's callState, when it has one.
type stateTransport struct {
	base http.RoundTripper
}

func (t *stateTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	st, _ := req.Context().Value(stateKey{}).(*callState)
	if err != nil || st == nil {
		return resp, err
	}
	st.setHeader(resp.Header)
	if st.stream && resp.StatusCode >= 200 && resp.StatusCode < 300 {
		resp.Body = &quietBody{rc: resp.Body, st: st}
	}
	return resp, nil
}

// quietBody hands genai's stream reader a clean end of input when reading
// fails, and keeps the real error in the callState. genai would otherwise
// write the error to the standard logger (stderr), which a library below
// the CLI must not do; the adapter reports the kept error instead.
type quietBody struct {
	rc io.ReadCloser
	st *callState
}

func (b *quietBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		b.st.setBodyErr(err)
		return n, io.EOF
	}
	return n, err
}

func (b *quietBody) Close() error { return b.rc.Close() }

// httpClient returns a client whose transport records call state and
// enforces llm.WithIdleTimeout. The given client is never modified.
func httpClient(c *http.Client) *http.Client {
	cp := *llm.IdleClient(c)
	cp.Transport = &stateTransport{base: cp.Transport}
	return &cp
}

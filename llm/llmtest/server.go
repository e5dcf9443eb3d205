package llmtest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// ServerOptions configure a fake server. The zero value listens on a free
// loopback port.
type ServerOptions struct {
	// Addr is host:port to listen on; default "127.0.0.1:0". A host that is
	// not loopback (127.0.0.0/8, ::1, localhost) is refused unless
	// AllowNonLoopback is set: the fake has no authentication.
	Addr             string
	AllowNonLoopback bool
	// Logf, when set, gets one line per request (never headers or bodies)
	// and the HTTP server's own errors. It is called from the handlers'
	// goroutines, so it must be safe for concurrent use.
	Logf func(format string, args ...any)
	// MaxConcurrent, when above 0, makes the server behave like a
	// provider with a concurrency limit: a model request that arrives
	// while MaxConcurrent others are being answered gets a 429 in its
	// dialect's error shape, with Retry-After (and, on the OpenAI
	// endpoint, retry-after-ms) set to LimitRetryAfter. The script is not
	// consulted for it, so rule counters see only accepted requests.
	MaxConcurrent   int
	LimitRetryAfter time.Duration
	// MaxLogBytes bounds the request and answer bodies the log keeps; 0 means
	// DefaultMaxLogBytes. Past it the oldest entries are dropped (the
	// newest one always stays), so a fake left running serves on in
	// bounded memory; /_requests says how many were dropped in its
	// X-Requests-Dropped header.
	MaxLogBytes int
}

// DefaultMaxLogBytes is the request log's bound on bodies kept: a test or
// a bench row logs far less, a fake left serving for hours would not stop
// growing without it (with each body go its parsed copy and headers, so
// the log holds about twice this).
const DefaultMaxLogBytes = 64 << 20

// Server is a fake LLM server speaking the OpenAI, Anthropic and Gemini
// wire formats, answering from a Script. It logs every request it gets.
type Server struct {
	script *Script
	logf   func(format string, args ...any)
	// maxConcurrent and limitRetryAfter are ServerOptions'; active counts
	// the model requests being answered, under mu.
	maxConcurrent   int
	limitRetryAfter time.Duration
	active          int
	srv             *http.Server
	url             string
	closing         chan struct{} // closed by Close: releases stalls and waits

	serveDone chan struct{} // closed when srv.Serve returned
	serveErr  error         // what it returned; read after serveDone

	mu       sync.Mutex
	closed   bool
	handlers sync.WaitGroup // handlers in flight; Add only under mu while !closed
	log      []*Request
	// logBytes is the bodies' size in log; dropped counts the entries
	// dropped from its front to stay under maxLogBytes.
	logBytes, maxLogBytes, dropped int
	seq                            int64 // numbers response IDs
	// openAI is the OpenAI API's memory: its prompt cache, shared by its
	// two endpoints, and the reasoning items it gave out.
	openAI openAIState

	// anthropic is the Anthropic API's memory: its prompt cache and the
	// thinking blocks it gave out.
	anthropic anthropicState

	closeOnce sync.Once
	closeErr  error
}

// NewServer starts a fake server for s. It is listening when NewServer
// returns; Close stops it.
func NewServer(s *Script, opts ServerOptions) (*Server, error) {
	if s == nil {
		return nil, errors.New("llmtest: NewServer: nil script")
	}
	if err := s.init(); err != nil {
		return nil, err
	}
	addr := opts.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("llmtest: server address %q: %w", addr, err)
	}
	if !opts.AllowNonLoopback && !isLoopback(host) {
		return nil, fmt.Errorf("llmtest: refusing to listen on %q: not a loopback address (the fake server has no authentication; set AllowNonLoopback to insist)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("llmtest: %w", err)
	}
	srv := &Server{
		script: s,
		logf:   opts.Logf,

		maxConcurrent:   opts.MaxConcurrent,
		limitRetryAfter: opts.LimitRetryAfter,
		maxLogBytes:     cmp.Or(opts.MaxLogBytes, DefaultMaxLogBytes),
		closing:         make(chan struct{}),
		serveDone:       make(chan struct{}),
		url:             "http://" + urlHost(ln.Addr(), host),
	}
	errorLog := log.New(io.Discard, "", 0)
	if opts.Logf != nil {
		errorLog = log.New(logfWriter(opts.Logf), "llmtest: ", 0)
	}
	srv.srv = &http.Server{
		Handler:           srv.routes(),
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          errorLog,
	}
	go func() {
		srv.serveErr = srv.srv.Serve(ln)
		close(srv.serveDone)
	}()
	return srv, nil
}

// StartServer starts a fake server for s on a free loopback port and
// closes it when the test ends. It fails t if the server cannot start.
func StartServer(t testing.TB, s *Script) *Server {
	t.Helper()
	// t.Logf panics once the test is over; a connection goroutine of the
	// http.Server may still report an error then, so stop forwarding.
	var mu sync.Mutex
	live := true
	logf := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if live {
			t.Logf(format, args...)
		}
	}
	srv, err := NewServer(s, ServerOptions{Logf: logf})
	if err != nil {
		t.Fatalf("llmtest: start server: %v", err)
	}
	t.Cleanup(func() {
		err := srv.Close()
		mu.Lock()
		live = false
		mu.Unlock()
		if err != nil {
			t.Errorf("llmtest: close server: %v", err)
		}
	})
	return srv
}

// Serve runs a fake server for s until ctx is done, then closes it. ready,
// when set, is called with the server's URL once it is listening. It
// returns nil after a shutdown caused by ctx, or the error that stopped the
// server.
func Serve(ctx context.Context, s *Script, opts ServerOptions, ready func(url string)) error {
	srv, err := NewServer(s, opts)
	if err != nil {
		return err
	}
	if ready != nil {
		ready(srv.URL())
	}
	select {
	case <-ctx.Done():
		return srv.Close()
	case <-srv.serveDone:
		srv.Close()
		return fmt.Errorf("llmtest: server stopped: %w", srv.serveErr)
	}
}

// URL is the server's base URL, "http://127.0.0.1:PORT", without a
// trailing slash.
func (s *Server) URL() string { return s.url }

// Close stops the server: it closes the listener and every connection,
// releases stalled and waiting handlers, and returns once all handlers have
// finished. Calling it again returns the first result.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		// Closing the connections first means a released stall cannot
		// answer a client that is still listening.
		err := s.srv.Close()
		close(s.closing)
		s.handlers.Wait()
		<-s.serveDone
		if err == nil && !errors.Is(s.serveErr, http.ErrServerClosed) {
			err = s.serveErr
		}
		if err != nil {
			s.closeErr = fmt.Errorf("llmtest: close: %w", err)
		}
	})
	return s.closeErr
}

// enter registers a handler in flight, or reports that the server is
// closing. Add happens under mu while !closed, so it never races Wait.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.handlers.Add(1)
	return true
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST /v1/chat/completions", s.llmHandler(openAIWire{cache: &s.openAI.cache}))
	mux.Handle("POST /v1/responses", s.llmHandler(responsesWire{st: &s.openAI}))
	mux.Handle("POST /v1/messages", s.llmHandler(anthropicWire{st: &s.anthropic}))
	mux.Handle("POST /v1beta/models/{call}", s.llmHandler(geminiWire{}))
	mux.Handle("POST /v1/models/{call}", s.llmHandler(geminiWire{}))
	mux.HandleFunc("GET /_requests", s.serveLog)
	mux.Handle("/", s.llmHandler(nil))
	return mux
}

// isLoopback reports whether host names this machine only.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// urlHost is the host:port for the server's URL. A wildcard listener
// (0.0.0.0, ::, or no host) is reached through loopback, IPv6 only when the
// address asked for was IPv6.
func urlHost(a net.Addr, askedHost string) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String()
	}
	ip := tcp.IP
	if ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1)
		if strings.Contains(askedHost, ":") {
			ip = net.IPv6loopback
		}
	}
	return net.JoinHostPort(ip.String(), fmt.Sprint(tcp.Port))
}

// logfWriter adapts a Logf function to an io.Writer for http.Server.
type logfWriter func(format string, args ...any)

func (f logfWriter) Write(p []byte) (int, error) {
	f("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

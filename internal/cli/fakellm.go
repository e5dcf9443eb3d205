package cli

import (
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/deputyhq/deputy/llm/llmtest"
)

type fakeLLMFlags struct {
	maxConcurrent   int
	limitRetryAfter time.Duration
	addr            string
	script          string
	allowRemote     bool
	quiet           bool
}

func newFakeLLMCmd() *cobra.Command {
	f := &fakeLLMFlags{}
	cmd := &cobra.Command{
		Use:   "fake-llm --script FILE [--addr HOST:PORT]",
		Short: "Serve a scripted fake model over the real provider wire formats",
		Long: `Run a fake LLM server that answers from a script, speaking the wire formats
of OpenAI chat completions (also Ollama's /v1 and any OpenAI-compatible
client), OpenAI's Responses API, Anthropic messages and Gemini generateContent,
streaming included, with each provider's documented rules for its current
models (a script's "strict: true" also refuses a turn sent back without the
state the provider requires). It is test equipment: for trying deputy, demos
and benchmarks without an API key or network. It runs until interrupted
(Ctrl-C).

A script is YAML: a list of rules, tried in order for every request; the first
that matches and has uses left answers.

  rules:
    - name: lead
      match: {system: "team lead", turn: 1}    # regexps on the request
      reply:
        text: "Asking the researcher."
        tool_calls:
          - name: call_agent
            arguments: {agent: researcher, task: "{{ .LastUser }}"}
    - match: {last_role: tool}
      reply: {text: "Done: {{ join .ToolResults \"; \" }}"}
      latency: 50ms
    - fault: rate_limit                         # or server_error, stall, drop, ...
      retry_after: 1
      times: 1

Point deputy at it with OPENAI_BASE_URL=http://ADDR/v1/ and any
OPENAI_API_KEY, then use a model such as openai/gpt-test (openai/... then speaks
chat completions; for OpenAI's current models, such as gpt-5.6, which need the
Responses API for tools, set providers: {openai: {wire_api: responses}} in
config.yaml); ANTHROPIC_BASE_URL=http://ADDR for anthropic/...,
GOOGLE_GEMINI_BASE_URL=http://ADDR for gemini/...; or define a custom provider
in config.yaml with base_url http://ADDR/v1/. GET /_requests returns the log of
requests received (credential headers redacted).

The full script reference is in docs/fake-llm.md. The server listens on
loopback only: it has no authentication, so another address is refused unless
--allow-remote is given.`,
		Example: `  deputy fake-llm --script team.yaml
  deputy fake-llm --addr 127.0.0.1:9000 --script team.yaml &
  OPENAI_BASE_URL=http://127.0.0.1:9000/v1/ OPENAI_API_KEY=x deputy run lead "plan it"
  curl -s http://127.0.0.1:9000/_requests | jq length`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return serveFakeLLM(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", "127.0.0.1:8089", "host:port to listen on (port 0 picks a free one)")
	fl.StringVar(&f.script, "script", "", "script file (YAML) saying how the fake model answers (required)")
	fl.BoolVar(&f.allowRemote, "allow-remote", false, "allow listening on a non-loopback address (the server has no authentication)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "do not log each request on stderr")
	fl.IntVar(&f.maxConcurrent, "max-concurrent", 0, "act as a provider with a concurrency limit: answer 429 to a model request above this many in flight (0: no limit)")
	fl.DurationVar(&f.limitRetryAfter, "limit-retry-after", 100*time.Millisecond, "the Retry-After (and retry-after-ms) of a --max-concurrent refusal")
	_ = cmd.MarkFlagRequired("script")
	return cmd
}

func serveFakeLLM(cmd *cobra.Command, f *fakeLLMFlags) error {
	host, _, err := net.SplitHostPort(f.addr)
	if err != nil {
		return configErr(fmt.Errorf("--addr %q: want host:port, such as 127.0.0.1:8089: %w", f.addr, err))
	}
	if !f.allowRemote && !loopbackHost(host) {
		return configErrf("--addr %q is not a loopback address; the fake server has no authentication, so give --allow-remote to listen there anyway", f.addr)
	}
	script, err := llmtest.LoadScript(f.script)
	if err != nil {
		return configErr(fmt.Errorf("--script %s: %w", f.script, err))
	}
	stderr := &lockedWriter{w: cmd.ErrOrStderr()}
	if f.maxConcurrent < 0 {
		return configErrf("--max-concurrent must not be negative (got %d)", f.maxConcurrent)
	}
	opts := llmtest.ServerOptions{Addr: f.addr, AllowNonLoopback: f.allowRemote, MaxConcurrent: f.maxConcurrent, LimitRetryAfter: f.limitRetryAfter}
	if !f.quiet {
		opts.Logf = func(format string, args ...any) {
			fmt.Fprintf(stderr, "fake-llm: %s\n", strings.TrimRight(fmt.Sprintf(format, args...), "\n"))
		}
	}
	// Ctrl-C and SIGTERM are how this command is meant to end: shut the
	// server down cleanly and exit 0.
	ctx, stop := interruptible(cmd.Context())
	defer stop()
	err = llmtest.Serve(ctx, script, opts, func(url string) {
		fmt.Fprintf(stderr, "fake-llm listening on %s\n", url)
	})
	if err != nil {
		return fmt.Errorf("fake-llm: %w", err)
	}
	return nil
}

// loopbackHost reports whether host names the loopback interface only.
// An empty host or 0.0.0.0 listens on every interface, so it is not.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// lockedWriter serializes writes: the server logs from its handlers'
// goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

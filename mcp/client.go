// Package mcp connects deputy to the Model Context Protocol both ways, on
// the official Go SDK: as a client, the tools of MCP servers become deputy
// tools (Manager); as a server, deputy's agents become MCP tools (Server).
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
)

// Server states, as `deputy mcp list` shows them.
const (
	StateIdle    = "not started" // no agent has needed it yet
	StateRunning = "running"
	StateFailed  = "failed" // it could not start, or crashed after its one restart
	StateClosed  = "closed"
)

// Defaults of a Manager.
const (
	DefaultStartTimeout   = 30 * time.Second
	DefaultOutputMaxBytes = 32 << 10
	stderrTailBytes       = 2 << 10
)

// ToolPrefix starts the name of every MCP tool: mcp__<server>__<tool>, as
// Claude Code names them, so its agents' tools lists bind.
const ToolPrefix = delegate.MCPToolPrefix

// Manager owns the MCP servers of one run: it starts each the first time
// an agent that may use it runs, shares it between every agent of the run
// that declares the same server, restarts it once should it crash, and
// stops them all on Close. The zero value is not usable; see NewManager.
type Manager struct {
	// Global are the servers every agent may use (config.yaml, .mcp.json).
	global []config.MCPServer
	// Referable are servers an agent may name in Claude Code's mcpServers
	// list without their being for every agent (Claude Code's user file).
	Referable []config.MCPServer
	// Logger receives start failures and restarts; nil discards them.
	Logger *slog.Logger
	// Dir resolves a stdio server's relative cwd; "" = the process's.
	Dir string
	// StartTimeout bounds connecting and listing tools (default 30s).
	StartTimeout time.Duration
	// OutputMaxBytes caps what one call returns to the model (default 32 KiB).
	OutputMaxBytes int
	// Secrets are redacted from every server's errors, besides each
	// server's own (see remote.secrets): the provider keys, which a stdio
	// server inherits with deputy's environment and may print as it fails.
	Secrets *llm.Secrets

	mu      sync.Mutex
	servers map[string]*remote // by config.MCPServer.Fingerprint
	order   []*remote
	closed  bool
}

// NewManager returns a manager for the servers every agent may use.
func NewManager(global []config.MCPServer) *Manager {
	return &Manager{global: slices.Clone(global), servers: map[string]*remote{}}
}

// Servers are the servers every agent may use.
func (m *Manager) Servers() []config.MCPServer { return slices.Clone(m.global) }

// serversFor lists the servers agent a may use: the ones it declares
// (resolving Claude Code references to global servers by name), then the
// global ones it does not shadow. own marks the agent's own.
func (m *Manager) serversFor(a *config.Agent) (list []config.MCPServer, own map[string]bool, warnings []string) {
	own = map[string]bool{}
	for _, s := range a.MCPServers {
		if s.Ref {
			known := append(slices.Clone(m.global), m.Referable...)
			i := slices.IndexFunc(known, func(g config.MCPServer) bool { return g.Name == s.Name })
			if i < 0 {
				warnings = append(warnings, fmt.Sprintf("%s: agent %q names MCP server %q, which is configured nowhere (config.yaml mcp_servers, .mcp.json or Claude Code's ~/.claude.json)", s.Origin, a.Name, s.Name))
				continue
			}
			s = known[i]
		}
		if !own[s.Name] {
			own[s.Name] = true
			list = append(list, s)
		}
	}
	for _, g := range m.global {
		if !own[g.Name] {
			list = append(list, g)
		}
	}
	return list, own, warnings
}

// selection says which tools of a server an agent is given: all of them,
// or the named ones.
type selection struct {
	all   bool
	names map[string]bool // server's own tool names
}

// selectFor applies an agent's tools list to its servers. A server whose
// tools the list names (mcp__srv__tool, or mcp__srv / mcp__srv__* for all
// of them) gives those; otherwise an agent's own server gives all its
// tools, and a global one gives all of them only to an agent whose tools
// list is not set or is "*" (Claude Code's "inherits every tool").
func selectFor(a *config.Agent, servers []config.MCPServer, own map[string]bool) map[string]selection {
	out := map[string]selection{}
	named := map[string]selection{}
	for _, t := range a.Tools {
		srv, tl, ok := SplitToolName(t)
		if !ok {
			continue
		}
		sel := named[srv]
		if tl == "" || tl == "*" {
			sel.all = true
		} else {
			if sel.names == nil {
				sel.names = map[string]bool{}
			}
			sel.names[tl] = true
		}
		named[srv] = sel
	}
	for _, s := range servers {
		key := ToolName(s.Name, "")
		switch sel, ok := named[key]; {
		case a.Disallows(key):
			// Every tool of the server is taken out: it is not started.
		case ok:
			out[s.Name] = sel
		case own[s.Name] || a.Tools == nil || slices.Contains(a.Tools, config.ToolsAll):
			out[s.Name] = selection{all: true}
		}
	}
	return out
}

// SplitToolName splits mcp__server__tool into its sanitized server part
// ("mcp__server") and the tool ("" for mcp__server). ok is false for a
// name that is not an MCP tool name.
func SplitToolName(name string) (server, tool string, ok bool) {
	rest, ok := strings.CutPrefix(name, ToolPrefix)
	if !ok || rest == "" {
		return "", "", false
	}
	srv, tl, _ := strings.Cut(rest, "__")
	return ToolPrefix + srv, tl, true
}

// ToolName is the name the model sees for tool t of server s:
// mcp__<s>__<t>, characters a tool name cannot hold replaced by '_'. With
// t empty it is the server's prefix, mcp__<s>.
func ToolName(server, t string) string {
	n := config.MCPToolPrefix(server)
	if t != "" {
		n += "__" + sanitize(t)
	}
	return n
}

func sanitize(s string) string { return config.MCPSanitize(s) }

// AgentTools returns the MCP tools agent a may use, starting the servers
// they come from if no earlier agent of the run did. A server that cannot
// start still gives the model a tool for each tool it was meant to give
// (or one, mcp__<server>, when the agent takes all of them): calling it
// answers with the error, naming the server and the tail of its stderr.
//
// allowServer, when not nil, says whether a server's tools (named by
// their prefix, mcp__<server>) may be used at all in this run (the
// permission grant); a server it refuses is not started.
func (m *Manager) AgentTools(a *config.Agent, allowServer func(prefix string) bool) []tool.Tool {
	servers, own, warnings := m.serversFor(a)
	for _, w := range warnings {
		m.log().Warn(w)
	}
	sel := selectFor(a, servers, own)
	var out []tool.Tool
	for _, cfg := range servers {
		want, ok := sel[cfg.Name]
		if !ok || (allowServer != nil && !allowServer(ToolName(cfg.Name, ""))) {
			continue
		}
		r, err := m.server(cfg)
		if err == nil {
			err = r.ensure(context.Background())
		}
		if err != nil {
			out = append(out, m.unavailable(cfg, want, err)...)
			continue
		}
		tools := r.toolList()
		seen := map[string]bool{}
		for _, t := range tools {
			if !want.all && !want.names[sanitize(t.tool.Name)] && !want.names[t.tool.Name] {
				continue
			}
			seen[sanitize(t.tool.Name)] = true
			out = append(out, t)
		}
		for n := range want.names {
			if !seen[sanitize(n)] {
				m.log().Warn("MCP server has no such tool", "agent", a.Name, "server", cfg.Name, "tool", n)
			}
		}
	}
	return out
}

// unavailable stands in for the tools of a server that did not start.
func (m *Manager) unavailable(cfg config.MCPServer, want selection, err error) []tool.Tool {
	m.log().Warn("MCP server unavailable", "server", cfg.Name, "error", err)
	if want.all {
		return []tool.Tool{&brokenTool{name: ToolName(cfg.Name, ""), server: cfg.Name, err: err}}
	}
	var out []tool.Tool
	names := make([]string, 0, len(want.names))
	for n := range want.names {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		out = append(out, &brokenTool{name: ToolName(cfg.Name, n), server: cfg.Name, err: err})
	}
	return out
}

func (m *Manager) log() *slog.Logger {
	if m.Logger != nil {
		return m.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// server returns the shared handle of cfg, created (not started) on first
// use.
func (m *Manager) server(cfg config.MCPServer) (*remote, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errors.New("the run is over")
	}
	fp := cfg.Fingerprint()
	if r, ok := m.servers[fp]; ok {
		return r, nil
	}
	r := &remote{cfg: cfg, m: m, state: StateIdle}
	m.servers[fp] = r
	m.order = append(m.order, r)
	return r, nil
}

// Status is one server as `deputy mcp list` shows it.
type Status struct {
	Server config.MCPServer
	State  string
	Tools  []ToolInfo
	Err    string
}

// ToolInfo is one tool of a server.
type ToolInfo struct {
	Name        string // as the model sees it: mcp__<server>__<tool>
	Description string
}

// Probe starts each server (if it is not running yet) and reports its
// state and tools.
func (m *Manager) Probe(ctx context.Context, servers []config.MCPServer) []Status {
	out := make([]Status, 0, len(servers))
	for _, cfg := range servers {
		st := Status{Server: cfg}
		r, err := m.server(cfg)
		if err == nil {
			err = r.ensure(ctx)
		}
		if err != nil {
			st.State, st.Err = StateFailed, err.Error()
		} else {
			st.State = r.currentState()
			for _, t := range r.toolList() {
				st.Tools = append(st.Tools, ToolInfo{Name: t.spec.Name, Description: t.spec.Description})
			}
		}
		out = append(out, st)
	}
	return out
}

// Close stops every server the run started and waits for their processes
// to end. Tools called afterwards answer with an error.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	servers := slices.Clone(m.order)
	m.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, len(servers))
	for i, r := range servers {
		wg.Go(func() { errs[i] = r.close() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// remote is one MCP server: its connection, its tools and its process.
type remote struct {
	cfg config.MCPServer
	m   *Manager

	mu       sync.Mutex
	state    string
	session  *sdk.ClientSession
	proc     *exec.Cmd
	stderr   *tailBuffer
	tools    []*remoteTool
	err      error // why it is StateFailed
	restarts int
	done     chan struct{} // closed when the session ends
	// secrets are what the server's configuration holds that no message
	// may show (set by transport): the values its ${VAR}s expanded to in
	// its URL, headers, env and args, its headers' values, and its URL's
	// query values and password. An unreachable server's error repeats
	// its URL, query and all, and its stderr may repeat its env.
	secrets *llm.Secrets
}

func (r *remote) currentState() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state
}

func (r *remote) toolList() []*remoteTool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.tools)
}

// ensure starts the server unless it runs already; a server that failed
// stays failed for the rest of the run (its error is repeated).
func (r *remote) ensure(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch r.state {
	case StateRunning:
		return nil
	case StateFailed:
		return r.err
	case StateClosed:
		return errors.New("the run is over")
	}
	if err := r.startLocked(ctx); err != nil {
		r.state, r.err = StateFailed, err
		return err
	}
	return nil
}

// startLocked connects to the server and lists its tools.
func (r *remote) startLocked(ctx context.Context) error {
	timeout := r.m.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	transport, err := r.transport()
	if err != nil {
		return r.failure("cannot start", err)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "deputy", Version: "1"}, nil)
	session, err := client.Connect(ctx, transport, nil)
	if err != nil {
		r.reapLocked()
		return r.failure("did not start", err)
	}
	var tools []*remoteTool
	names := map[string]string{} // deputy's name -> the server's
	for t, err := range session.Tools(ctx, nil) {
		if err != nil {
			_ = session.Close()
			r.reapLocked()
			return r.failure("did not list its tools", err)
		}
		rt, err := newRemoteTool(r, t)
		if err != nil {
			r.m.log().Warn("MCP tool left out", "server", r.cfg.Name, "tool", t.Name, "error", err)
			continue
		}
		if first, dup := names[rt.spec.Name]; dup {
			// Two names that differ only in characters a tool name cannot
			// hold ("a.b", "a_b"): the model could not tell them apart,
			// and a provider refuses a request with the name twice.
			r.m.log().Warn("MCP tool left out", "server", r.cfg.Name, "tool", t.Name,
				"error", fmt.Sprintf("its name is %s, as %q's is", rt.spec.Name, first))
			continue
		}
		names[rt.spec.Name] = t.Name
		tools = append(tools, rt)
	}
	done := make(chan struct{})
	go func() {
		_ = session.Wait()
		close(done)
	}()
	r.session, r.tools, r.state, r.done = session, tools, StateRunning, done
	return nil
}

// failure is a start error: the server's name, what went wrong, and the
// tail of what it wrote on stderr.
func (r *remote) failure(what string, err error) error {
	msg := fmt.Sprintf("MCP server %q %s: %v", r.cfg.Name, what, err)
	if r.stderr != nil {
		if tail := strings.TrimSpace(r.stderr.String()); tail != "" {
			msg += "\nits stderr ends with:\n" + tail
		}
	}
	return errors.New(r.secrets.Redact(msg))
}

// transport builds the SDK transport for the server, expanding ${VAR}
// references in its env, args and headers from deputy's environment. The
// expanded values live only in the process and the requests.
func (r *remote) transport() (sdk.Transport, error) {
	c := r.cfg
	x := &expander{}
	defer func() { r.secrets = r.m.Secrets.With(x.values...) }()
	switch c.Transport {
	case config.MCPStdio:
		cmd := exec.Command(expand(c.Command), x.all(c.Args)...)
		cmd.Env = os.Environ()
		for k, v := range c.Env {
			cmd.Env = append(cmd.Env, k+"="+x.expand(v))
		}
		if c.Cwd != "" {
			dir := expand(c.Cwd)
			if !filepath.IsAbs(dir) && r.m.Dir != "" {
				dir = filepath.Join(r.m.Dir, dir)
			}
			cmd.Dir = dir
		} else {
			cmd.Dir = r.m.Dir
		}
		r.stderr = &tailBuffer{max: stderrTailBytes}
		cmd.Stderr = r.stderr
		ownGroup(cmd)
		r.proc = cmd
		return &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil
	case config.MCPHTTP, config.MCPSSE:
		headers := make(map[string]string, len(c.Headers))
		for k, v := range c.Headers {
			headers[k] = x.expand(v)
			// A header is a credential even when written out.
			x.values = append(x.values, headers[k])
		}
		hc := &http.Client{Transport: headerTransport{headers: headers, base: http.DefaultTransport}}
		u := x.expand(c.URL)
		if pu, err := url.Parse(u); err == nil {
			// A key in the query or the userinfo, even written out.
			if pw, ok := pu.User.Password(); ok {
				x.values = append(x.values, pw)
			}
			for _, vs := range pu.Query() {
				x.values = append(x.values, vs...)
			}
		}
		if c.Transport == config.MCPSSE {
			return &sdk.SSEClientTransport{Endpoint: u, HTTPClient: hc}, nil
		}
		return &sdk.StreamableClientTransport{Endpoint: u, HTTPClient: hc, MaxRetries: 1}, nil
	}
	return nil, fmt.Errorf("unknown transport %q", c.Transport)
}

// expand replaces $VAR, ${VAR} and ${VAR:-default} (Claude Code's
// .mcp.json form) with values from deputy's environment.
func expand(s string) string {
	return os.Expand(s, lookupVar)
}

func lookupVar(v string) string {
	name, def, hasDef := strings.Cut(v, ":-")
	if val, ok := os.LookupEnv(name); ok && (val != "" || !hasDef) {
		return val
	}
	return def
}

// expander expands like expand and keeps every value it put in: the
// secrets of a server's configuration.
type expander struct{ values []string }

func (x *expander) expand(s string) string {
	return os.Expand(s, func(v string) string {
		val := lookupVar(v)
		x.values = append(x.values, val)
		return val
	})
}

func (x *expander) all(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = x.expand(s)
	}
	return out
}

// headerTransport adds the configured headers to every request.
type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (h headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(h.headers) > 0 {
		req = req.Clone(req.Context())
		for k, v := range h.headers {
			req.Header.Set(k, v)
		}
	}
	return h.base.RoundTrip(req)
}

// call runs one tool call. When the connection turns out to be gone (the
// server crashed), the server is restarted once per run and the call
// repeated; a second crash leaves it failed.
func (r *remote) call(ctx context.Context, name string, args map[string]any) (*sdk.CallToolResult, error) {
	r.mu.Lock()
	session, state, err, secrets := r.session, r.state, r.err, r.secrets
	r.mu.Unlock()
	switch state {
	case StateFailed:
		return nil, err
	case StateClosed:
		return nil, fmt.Errorf("MCP server %q is closed: the run is over", r.cfg.Name)
	}
	if session == nil {
		return nil, fmt.Errorf("MCP server %q is not running", r.cfg.Name)
	}
	res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err == nil || ctx.Err() != nil || !r.gone(session, err) {
		return res, secrets.Error(err)
	}
	session, err = r.restart(ctx, session)
	if err != nil {
		return nil, err
	}
	res, err = session.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	return res, secrets.Error(err)
}

// gone reports whether a failed call means the server is no longer
// there: the SDK says the connection or session is gone, or the session
// ends (its process exited) shortly after the failure.
func (r *remote) gone(session *sdk.ClientSession, err error) bool {
	if errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, sdk.ErrSessionMissing) {
		return true
	}
	r.mu.Lock()
	done := r.done
	r.mu.Unlock()
	if r.session != session || done == nil {
		return true
	}
	select {
	case <-done:
		return true
	case <-time.After(time.Second):
		return false
	}
}

// restart replaces a crashed session, once per run.
func (r *remote) restart(ctx context.Context, crashed *sdk.ClientSession) (*sdk.ClientSession, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.session != crashed { // another call restarted it already, or the run ended
		switch {
		case r.state == StateRunning && r.session != nil:
			return r.session, nil
		case r.state == StateFailed && r.err != nil:
			return nil, r.err
		}
		return nil, fmt.Errorf("MCP server %q is closed: the run is over", r.cfg.Name)
	}
	_ = crashed.Close()
	r.reapLocked()
	if r.restarts >= 1 {
		r.state, r.err = StateFailed, r.failure("crashed again after its restart", errors.New("connection lost"))
		return nil, r.err
	}
	r.restarts++
	r.m.log().Warn("MCP server crashed; restarting it once", "server", r.cfg.Name)
	if err := r.startLocked(ctx); err != nil {
		r.state, r.err = StateFailed, fmt.Errorf("restarting after a crash: %w", err)
		return nil, r.err
	}
	return r.session, nil
}

// close ends the session and the server's process group.
func (r *remote) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var err error
	if r.session != nil {
		err = r.session.Close()
		r.session = nil
	}
	r.reapLocked()
	r.state = StateClosed
	// A server that exits on stdin's close reports its exit status; that
	// is how it should stop, not an error.
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		err = nil
	}
	return err
}

// reapLocked kills whatever is left of the server's process group (npx
// starts node as a child that would otherwise outlive it).
func (r *remote) reapLocked() {
	if r.proc != nil && r.proc.Process != nil {
		killGroup(r.proc)
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = slices.Clone(t.buf[over:])
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.ToValidUTF8(string(t.buf), "")
}

// jsonObject decodes a model's arguments: an object, or nothing.
func jsonObject(raw json.RawMessage) (map[string]any, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return map[string]any{}, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("arguments are not valid JSON: %v", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("arguments must be a JSON object")
	}
	return obj, nil
}

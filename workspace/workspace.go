// Package workspace builds a ready delegation engine from a user's
// configuration, exactly as the deputy command does: settings files, agent
// directories, skills, subquery specializations, providers, built-in tools
// and the ledger. The command itself is built on it, so a program that
// loads a workspace runs the same agents the same way `deputy run` would.
//
//	w, err := workspace.Load(workspace.Options{Dir: dir})
//	a, warnings, err := w.Agent("reviewer")
//	ledger, err := w.OpenLedger(ctx) // or nil: record nothing
//	env := w.Engine(ledger).Run(ctx, delegate.RunRequest{Agent: a, Task: "check the diff", Workdir: dir})
//
// Loading reads files only; no provider is contacted until a run starts.
package workspace

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/trace"

	"github.com/deputyhq/deputy/approval"
	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/claude"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/isolate"
	"github.com/deputyhq/deputy/ledger"
	"github.com/deputyhq/deputy/llm/capability"
	"github.com/deputyhq/deputy/llm/price"
	"github.com/deputyhq/deputy/llm/providers"
	"github.com/deputyhq/deputy/mcp"
	"github.com/deputyhq/deputy/permission"
	"github.com/deputyhq/deputy/store"
	"github.com/deputyhq/deputy/telemetry"
	"github.com/deputyhq/deputy/tool"
	"github.com/deputyhq/deputy/tool/builtin"
)

// Options say where a workspace looks. The zero value looks where the
// deputy command looks when started in the current directory without
// flags.
type Options struct {
	// Dir is the project directory (the command's working directory);
	// "" means the process's.
	Dir string
	// AgentsDirs are extra agent directories, searched before the
	// project's and the user's (the --agents-dir flag).
	AgentsDirs []string
	// ConfigFile is one more settings file, read after the user's and the
	// project's config.yaml (the --config flag, $DEPUTY_CONFIG); it must
	// exist.
	ConfigFile string
	// Subqueries is one more subqueries.ini, read after the user's and the
	// project's (the --subqueries flag).
	Subqueries string
	// DB is the ledger's path (the --db flag); "" means $DEPUTY_DB, then
	// config.yaml's store.path, then the data directory.
	DB string
	// Logger receives the engine's warnings and, when the settings enable
	// it, sub-agent telemetry; nil discards them.
	Logger *slog.Logger
	// TracerProvider, when set, receives OpenTelemetry spans of every run
	// (telemetry.TraceListener); nil traces nothing, at no cost.
	TracerProvider trace.TracerProvider
	// Lazy loads an agent's file only when a run asks for the agent
	// (config.OpenAgents), finding it through an index kept in the user's
	// cache directory, rather than every agent file at Load: for a
	// program that runs agents instead of listing them. Diagnostics then
	// holds nothing at Load; Agent checks the agents it returns and those
	// they can run.
	Lazy bool
}

// Workspace is a loaded configuration. Its fields are what was loaded; a
// program may adjust them before calling Engine.
type Workspace struct {
	Dir      string
	Settings *config.Settings
	Agents   *config.AgentSet
	// Diagnostics are the agent files' problems, from loading and linting.
	// Agent reports the ones that concern the agent asked for.
	Diagnostics config.Diagnostics
	// Warnings are the other configuration files' warnings (a near-miss
	// section name in subqueries.ini, an unset variable), for the caller to
	// show once.
	Warnings        config.Diagnostics
	Specializations []config.Specialization
	Models          *providers.Registry
	Logger          *slog.Logger
	// TracerProvider receives the runs' spans; nil traces nothing.
	TracerProvider trace.TracerProvider
	// Person is whoever runs the roots of the runs: the approvals that
	// permission rules ask for and ask_user's questions, from any depth,
	// go to it. nil is nobody: an ask is a deny at once, and ask_user
	// answers that nobody is there. Set it before building an engine.
	Person approval.Asker
	// Permissions are the permission rules and mode of every run:
	// config.yaml's permissions and those of Claude Code's settings.json
	// files. A front end may add its own (--ask-tool) before building an
	// engine; each agent's own rules come below them.
	Permissions permission.Rules
	// Grant is what every run may use; New sets it from config.yaml's
	// permissions, and a front end may narrow it further (--allow-tool,
	// --deny-tool) before building an engine.
	Grant *delegate.Grant

	// MCP holds the MCP servers every agent may use (config.yaml's
	// mcp_servers and xzatoma's mcp section, then the project's .mcp.json)
	// and starts each when an agent that may use it first runs. Close stops
	// them.
	MCP *mcp.Manager

	// Isolation makes the git worktrees of isolated children, under the
	// data directory's worktrees/ (nil when there is no data directory:
	// children then work in the shared directory, with a warning).
	Isolation *isolate.Manager

	opts  Options
	tools sync.Map // workdir -> *tool.Registry
	// For a lazy workspace: the agents Lint has checked, and what it said.
	lintMu sync.Mutex
	linted map[*config.Agent]bool
	lints  config.Diagnostics
}

// Load reads the user's configuration. An error names the file, key or
// option at fault; problems of single agent files are not errors here but
// Diagnostics, reported by Agent for the agents that are run.
func Load(opts Options) (*Workspace, error) {
	dir, err := projectDir(opts.Dir)
	if err != nil {
		return nil, err
	}
	opts.Dir = dir
	w := &Workspace{Dir: dir, Logger: opts.Logger, TracerProvider: opts.TracerProvider, opts: opts}
	if w.Logger == nil {
		w.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ConfigFile != "" {
		if fi, err := os.Stat(opts.ConfigFile); err != nil || fi.IsDir() {
			return nil, fmt.Errorf("--config %s: not a readable file", opts.ConfigFile)
		}
	}
	if w.Settings, err = LoadSettings(SettingsPaths(opts)); err != nil {
		return nil, err
	}
	claude.ApplySessionModel(w.Settings, dir)
	for _, d := range opts.AgentsDirs {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("--agents-dir %s: not a directory", d)
		}
	}
	if w.Specializations, err = loadSpecializations(opts, func(d config.Diagnostic) { w.Warnings = append(w.Warnings, d) }); err != nil {
		return nil, err
	}
	servers, err := mcpServers(w.Settings, dir, func(d config.Diagnostic) { w.Warnings = append(w.Warnings, d) })
	if err != nil {
		return nil, err
	}
	w.Isolation = Worktrees()
	w.MCP = mcp.NewManager(servers)
	w.MCP.Logger, w.MCP.Dir = w.Logger, dir
	w.MCP.OutputMaxBytes = w.Settings.Limits.ToolOutputMaxBytes
	// Claude Code agents may name the servers `claude mcp add` put in the
	// user's ~/.claude.json; those are for them only, not for every agent.
	if p := claude.UserMCPPath(); p != "" {
		w.MCP.Referable = claude.LoadUserMCP(p, dir)
	}
	if opts.Lazy {
		w.Agents = config.OpenAgents(AgentDirs(dir, opts.AgentsDirs), AgentLoadOptions(dir), indexPath())
	} else {
		var diags config.Diagnostics
		w.Agents, diags = LoadAgents(dir, opts.AgentsDirs)
		w.Diagnostics = append(diags, config.Lint(w.Agents, w.LintOptions())...)
	}
	w.Models = NewModels(w.Settings, dir)
	w.MCP.Secrets = w.Models.Secrets()
	w.Grant = GrantOf(w.Settings.Permissions, dir)
	// Claude Code's settings files' permissions bound every run too.
	fromClaude, diags := claude.Permissions(claude.Dirs(dir))
	w.Warnings = append(w.Warnings, diags...)
	w.Permissions = MergeRules(w.Settings.Permissions.Rules, fromClaude)
	w.Grant = w.Grant.Restrict(nil, BareDenies(w.Permissions))
	return w, nil
}

// MergeRules adds the rules of b to a's (a's mode wins when it has one):
// rules from every source add up, so none takes back another's deny.
func MergeRules(a, b permission.Rules) permission.Rules {
	out := permission.Rules{Mode: a.Mode}
	if out.Mode == permission.ModeNone {
		out.Mode = b.Mode
	}
	out.Allow = append(slices.Clone(a.Allow), b.Allow...)
	out.Ask = append(slices.Clone(a.Ask), b.Ask...)
	out.Deny = append(slices.Clone(a.Deny), b.Deny...)
	return out
}

// BareDenies are the tools a deny rule without a pattern names exactly
// (terminal, mcp__github): no agent is offered them, as in Claude Code,
// where such a rule takes the tool out of the model's context.
func BareDenies(rs permission.Rules) []string {
	var out []string
	for _, r := range rs.Deny {
		if r.Pattern == "" && !strings.Contains(r.Tool, "*") && !slices.Contains(out, r.Tool) {
			out = append(out, r.Tool)
		}
	}
	return out
}

// mcpServers are the MCP servers every agent may use: config.yaml's, then
// the project's .mcp.json (Claude Code's), whose server of the same name
// wins.
func mcpServers(s *config.Settings, dir string, warn func(config.Diagnostic)) ([]config.MCPServer, error) {
	servers := slices.Clone(s.MCPServers)
	fromJSON, diags := claude.LoadMCPJSON(filepath.Join(dir, claude.MCPJSONName))
	if err := diags.Err(); err != nil {
		return nil, err
	}
	for _, d := range append(s.Warnings, diags.Warnings()...) {
		warn(d)
	}
	for _, m := range fromJSON {
		if m.Ref {
			continue
		}
		servers = slices.DeleteFunc(servers, func(o config.MCPServer) bool { return o.Name == m.Name })
		servers = append(servers, m)
	}
	return servers, nil
}

// Close stops what the workspace's runs started: the MCP servers. A
// program calls it once its runs are over.
func (w *Workspace) Close() error {
	if w.MCP == nil {
		return nil
	}
	return w.MCP.Close()
}

// SettingsPaths are the settings files a workspace reads, lowest
// precedence first: the user's config.yaml, the project's, then
// opts.ConfigFile.
func SettingsPaths(opts Options) []string {
	dir, _ := projectDir(opts.Dir)
	paths := config.SettingsPaths(dir)
	if opts.ConfigFile != "" {
		p := opts.ConfigFile
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		paths = append(paths, p)
	}
	return paths
}

func projectDir(dir string) (string, error) {
	if dir == "" {
		return os.Getwd()
	}
	return filepath.Abs(dir)
}

// NewModels returns the provider registry the settings describe: the
// built-in providers, the custom ones, retries, the stream idle timeout and
// the response timeout of non-streaming calls.
// A scripted model's relative path starts at dir.
func NewModels(s *config.Settings, dir string) *providers.Registry {
	idle := s.StreamIdleTimeout
	if idle == 0 {
		idle = -1 // stream_idle_timeout: 0 means never; to the adapters 0 means their default
	}
	custom := map[string]providers.Custom{}
	for name, p := range s.Providers {
		custom[name] = providers.Custom{Type: p.Type, BaseURL: p.BaseURL, APIKeyEnv: p.APIKeyEnv, WireAPI: p.WireAPI}
	}
	resp := s.ResponseTimeout
	if resp == 0 {
		resp = -1 // as for idle
	}
	return providers.NewRegistry(providers.Config{Custom: custom, BuiltinWireAPI: s.BuiltinWireAPI, Retry: s.Retry,
		IdleTimeout: idle, ResponseTimeout: resp, Dir: dir, OtherKeyEnv: searchKeyEnv(s.Search),
		Capabilities: capability.NewTable(s.Capabilities)})
}

// LintOptions are the checks Load applies to agent files: which providers
// and tools exist in this workspace.
func (w *Workspace) LintOptions() config.LintOptions {
	return config.LintOptions{KnownProvider: w.Settings.KnownProvider, KnownTool: w.KnownTool, Cwd: w.Dir}
}

// KnownTool says whether an agent's tools entry names something deputy
// has: a built-in tool or group, a delegation tool or a specialization.
// An MCP tool (mcp__<server>__<tool>) is known when a configured server
// could provide it; which tools a server has is known once it starts.
func (w *Workspace) KnownTool(name string) bool {
	if _, door := frontDoors()[name]; door {
		return true // call_agent, subagent, llm_query
	}
	if strings.HasPrefix(name, delegate.MCPToolPrefix) {
		if w.MCP == nil {
			return false
		}
		for _, s := range w.MCP.Servers() {
			p := config.MCPToolPrefix(s.Name)
			if name == p || strings.HasPrefix(name, p+"__") {
				return true
			}
		}
		return false
	}
	if ReservedToolName(name) {
		return true
	}
	return slices.ContainsFunc(w.Specializations, func(s config.Specialization) bool { return s.ToolName == name })
}

// frontDoors are the delegation tools every engine offers by itself, by
// name (the specializations aside).
var frontDoors = sync.OnceValue(func() map[string]delegate.FrontDoor { return (&delegate.Engine{}).FrontDoors() })

// ReservedToolName reports whether name belongs to a built-in tool or
// group, which no specialization may take.
func ReservedToolName(name string) bool {
	return name == tool.FileOps || slices.Contains(builtin.Names(), name)
}

// SpecializationFiles are the subqueries.ini files a workspace reads,
// lowest precedence first: the user's, the project's, then
// Options.Subqueries (which must exist).
func SpecializationFiles(opts Options) ([]string, error) {
	dir, err := projectDir(opts.Dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, p := range []string{filepath.Join(config.ConfigDir(), "subqueries.ini"), filepath.Join(dir, config.ProjectDirName, "subqueries.ini")} {
		if _, err := os.Stat(p); err == nil {
			files = append(files, p)
		}
	}
	if f := opts.Subqueries; f != "" {
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("--subqueries %s: %w", f, err)
		}
		files = append(files, f)
	}
	return files, nil
}

// LoadSpecializations reads every file of SpecializationFiles; a later
// file's section replaces an earlier one of the same tool name (the
// project's over the user's, Options.Subqueries over both).
func LoadSpecializations(opts Options) ([]config.Specialization, error) {
	return loadSpecializations(opts, nil)
}

func loadSpecializations(opts Options, warn func(config.Diagnostic)) ([]config.Specialization, error) {
	files, err := SpecializationFiles(opts)
	if err != nil {
		return nil, err
	}
	dir, _ := projectDir(opts.Dir)
	var out []config.Specialization
	for _, f := range files {
		specs, err := LoadSpecializationsFile(f, dir, warn)
		if err != nil {
			return nil, err
		}
		for _, s := range specs {
			out = slices.DeleteFunc(out, func(o config.Specialization) bool { return o.ToolName == s.ToolName })
			out = append(out, s)
		}
	}
	return out, nil
}

// Agent returns an agent ready to run: it exists, and neither it nor any
// agent it can delegate to has an error. The warnings are those of these
// agents' files, for the caller to show.
func (w *Workspace) Agent(name string) (*config.Agent, config.Diagnostics, error) {
	a, ok := w.Agents.Get(name)
	if !ok {
		if b, ok := w.Agents.BrokenFile(name); ok {
			return nil, nil, fmt.Errorf("agent %q cannot be loaded from %s:\n%s", name, b.Path, b.Diagnostics.Errors())
		}
		var names []string
		for _, a := range w.Agents.List() {
			names = append(names, a.Name)
		}
		known := "no agents are defined (see 'deputy agents init')"
		if len(names) > 0 {
			known = "known agents: " + strings.Join(names, ", ")
		}
		return nil, nil, fmt.Errorf("no agent named %q; %s", name, known)
	}
	var relevant config.Diagnostics
	closure := w.closure(a)
	diags := w.Diagnostics
	if w.opts.Lazy {
		diags = w.lintLoaded(closure)
	}
	for _, t := range closure {
		relevant = append(relevant, diags.ForFile(t.Path)...)
		// A tool the grant refuses is said once, here, not at its first call.
		for _, n := range w.Grant.Refused(t) {
			relevant = append(relevant, config.Diagnostic{File: t.Path, Line: t.KeyLine("tools"), Key: "tools", Severity: config.Warning,
				Message: fmt.Sprintf("tool %q is not granted (permissions in config.yaml or .claude/settings.json, --allow-tool, --deny-tool); agent %q runs without it", n, t.Name)})
		}
	}
	relevant = relevant.Sorted()
	if errs := relevant.Errors(); len(errs) > 0 {
		return nil, relevant.Warnings(), fmt.Errorf("agent %q cannot run:\n%s", name, errs)
	}
	return a, relevant.Warnings(), nil
}

// lintLoaded is, for a lazily loaded workspace, what Load's checks would
// have said of the agents of closure: their files' problems and Lint's
// (run once for each agent, as Lint takes out of a Claude Code agent the
// tools it cannot have).
func (w *Workspace) lintLoaded(closure []*config.Agent) config.Diagnostics {
	w.lintMu.Lock()
	defer w.lintMu.Unlock()
	var fresh []*config.Agent
	for _, a := range closure {
		if !w.linted[a] {
			fresh = append(fresh, a)
		}
	}
	if len(fresh) > 0 {
		if w.linted == nil {
			w.linted = map[*config.Agent]bool{}
		}
		paths := map[string]bool{}
		for _, a := range fresh {
			w.linted[a] = true
			paths[a.Path] = true
		}
		// Sub-agents are looked up in the closure, which holds every one
		// that exists; what was said of the agents checked before is not
		// said again.
		for _, d := range config.Lint(config.NewAgentSet(closure...), w.LintOptions()) {
			if paths[d.File] {
				w.lints = append(w.lints, d)
			}
		}
	}
	return append(w.Agents.LoadDiagnostics(), w.lints...)
}

// indexPath is where a lazily loading workspace keeps its index of agent
// files: deputy's directory of the user's cache directory; "" (no index,
// each run reads the files' heads) when there is none.
func indexPath() string {
	d, err := os.UserCacheDir()
	if err != nil || d == "" {
		return ""
	}
	return filepath.Join(d, "deputy", "agent-index")
}

// closure is a and every agent it can reach through sub_agents.
func (w *Workspace) closure(a *config.Agent) []*config.Agent {
	seen := map[string]bool{a.Name: true}
	out := []*config.Agent{a}
	for i := 0; i < len(out); i++ {
		for _, n := range out[i].Subagents {
			if c, ok := w.Agents.Get(n); ok && !seen[n] {
				seen[n] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// LedgerPath is where the ledger lives: Options.DB, $DEPUTY_DB,
// config.yaml's store.path, or the data directory. It is "" only when
// none is set and there is no home directory.
func LedgerPath(opts Options, s *config.Settings) string {
	if opts.DB != "" {
		return opts.DB
	}
	if p := os.Getenv("DEPUTY_DB"); p != "" {
		return p
	}
	return s.StorePath()
}

// LedgerPath is the workspace's ledger path (see the function LedgerPath).
func (w *Workspace) LedgerPath() string { return LedgerPath(w.opts, w.Settings) }

// OpenLedger opens (creating it if needed) the SQLite ledger at
// LedgerPath. The caller closes it after its runs.
func (w *Workspace) OpenLedger(ctx context.Context) (*store.Store, error) {
	st, err := store.Open(ctx, w.LedgerPath())
	if err != nil {
		return nil, fmt.Errorf("opening the ledger: %w", err)
	}
	return st, nil
}

// Tools returns the built-in tools confined to workdir, built once per
// workdir. It is the engine's Tools function.
func (w *Workspace) Tools(workdir string) *tool.Registry {
	if r, ok := w.tools.Load(workdir); ok {
		return r.(*tool.Registry)
	}
	s := w.Settings
	readPaths, writePaths := w.terminalPaths(workdir)
	r := builtin.New(builtin.Options{
		Workdir:            workdir,
		AskUser:            delegate.AskUser,
		FetchAllowHosts:    s.Fetch.AllowHosts,
		FetchMaxBytes:      int64(s.Limits.FetchMaxBytes),
		OutputMaxBytes:     s.Limits.ToolOutputMaxBytes,
		ReadMaxBytes:       s.Limits.ReadFileMaxBytes,
		TerminalEnv:        s.Terminal.Env,
		SecretEnv:          w.Models.KeyEnvNames(),
		TerminalNetwork:    s.Terminal.Network,
		TerminalReadPaths:  readPaths,
		TerminalWritePaths: writePaths,
		NoSandbox:          !s.Terminal.Sandbox,
		Search:             searchAPI(s.Search),
	})
	actual, _ := w.tools.LoadOrStore(workdir, r)
	return actual.(*tool.Registry)
}

// Worktrees is the manager of isolated children's git worktrees, which
// live in the data directory's worktrees/ (one directory per run, named
// by its id); nil when there is no data directory.
func Worktrees() *isolate.Manager {
	data := config.DataDir()
	if data == "" {
		return nil
	}
	return &isolate.Manager{Dir: filepath.Join(data, "worktrees")}
}

// terminalPaths are the paths a terminal in workdir may read and write
// besides it: terminal.read_paths and write_paths, and when workdir is in
// an isolated child's worktree, the parts of its repository's git
// directory git needs to work there (isolate's TerminalPaths: not its
// configuration or hooks), which lies outside the worktree.
func (w *Workspace) terminalPaths(workdir string) (read, write []string) {
	read, write = w.Settings.Terminal.ReadPaths, w.Settings.Terminal.WritePaths
	if w.Isolation == nil {
		return read, write
	}
	rel, err := filepath.Rel(w.Isolation.Dir, workdir)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") || filepath.IsAbs(rel) {
		return read, write
	}
	id, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	gitRead, gitWrite, err := w.Isolation.TerminalPaths(id)
	if err != nil {
		return read, write
	}
	return append(slices.Clone(read), gitRead...), append(slices.Clone(write), gitWrite...)
}

// searchAPI is the search API config.yaml's search section names, nil
// when it names none. Brave's key is read from the environment here, at
// the start, as the providers' keys are.
func searchAPI(q config.SearchSettings) *builtin.SearchAPI {
	if q.API == "" || q.Mode == config.SearchOff || q.Mode == config.SearchNative {
		return nil
	}
	api := &builtin.SearchAPI{Kind: q.API, URL: q.URL, MaxResults: q.MaxResults}
	if env := searchKeyEnv(q); env != nil {
		api.KeyEnv = env[0]
		api.APIKey = os.Getenv(api.KeyEnv)
	}
	return api
}

// searchKeyEnv names the variable holding the search API's key, if it
// takes one.
func searchKeyEnv(q config.SearchSettings) []string {
	if q.API != builtin.SearchBrave {
		return nil
	}
	if q.APIKeyEnv != "" {
		return []string{q.APIKeyEnv}
	}
	return []string{config.DefaultBraveKeyEnv}
}

// Engine builds the delegation engine the settings describe. rec may be
// nil (record nothing); it keeps the subquery sessions too when it can
// (ledger.Sessions, as *store.Store and *AsyncLedger do). listeners receive
// the engine's events after the telemetry logger.
func (w *Workspace) Engine(rec ledger.Recorder, listeners ...delegate.Listener) *delegate.Engine {
	if st, ok := rec.(*store.Store); ok && st == nil {
		rec = nil // a nil *store.Store is no ledger, not a broken one
	}
	s := w.Settings
	sub := s.Agent.Subagent
	if w.TracerProvider != nil {
		listeners = append(listeners, telemetry.TraceListener(w.TracerProvider))
	}
	e := &delegate.Engine{
		Agents:    w.Agents,
		Models:    w.Models,
		Tools:     w.Tools,
		Grant:     w.Grant,
		Ledger:    rec,
		Listeners: listeners,
		// The log keeps no transient event: as a Logger, it does not
		// make every run build them.
		Loggers: []delegate.Listener{telemetry.Listener(w.Logger, sub.TelemetryEnabled)},
		Logger:  w.Logger,
		Options: delegate.Options{
			Concurrency:  s.Concurrency,
			Prices:       price.NewTable(s.Prices),
			Capabilities: capability.NewTable(s.Capabilities),
			MaxTurns:     s.MaxTurns,
			DefaultModel: s.DefaultModel,
			Subagent: delegate.SubagentOptions{MaxDepth: sub.MaxDepth, DefaultMaxTurns: sub.DefaultMaxTurns,
				OutputMaxSize: sub.OutputMaxSize, Persist: sub.PersistenceEnabled, Model: s.SubagentModel(),
				ModelName: s.SubagentModelName()},
			Quotas: delegate.Quotas{MaxExecutions: sub.MaxExecutions, MaxTotalTokens: sub.MaxTotalTokens,
				MaxTotalTime: sub.MaxTotalTime},
			Specializations: w.Specializations,
			DefaultTools:    builtin.DefaultToolNames(),
			WebSearch:       s.Search.Mode,
		},
	}
	if w.MCP != nil {
		e.External = w.MCP
	}
	if w.Isolation != nil {
		e.Isolation = w.Isolation
	}
	e.Person, e.Permissions, e.ApprovalTimeout = w.Person, w.Permissions, s.ApprovalTimeout
	return e
}

// The SQLite store is the engine's ledger: its recorder and its sessions,
// and it keeps isolated children's worktrees.
var (
	_ ledger.Recorder         = (*store.Store)(nil)
	_ ledger.Sessions         = (*store.Store)(nil)
	_ delegate.WorktreeLedger = (*store.Store)(nil)
)

// GrantOf is the grant config.yaml's permissions describe: nil when it
// restricts nothing. Relative paths start at dir.
func GrantOf(p config.PermissionSettings, dir string) *delegate.Grant {
	if p.Tools == nil && p.DenyTools == nil && p.Paths == nil && p.Hosts == nil {
		return nil
	}
	g := &delegate.Grant{Tools: p.Tools, Deny: p.DenyTools, Hosts: p.Hosts}
	if p.Paths != nil {
		g.Paths = []string{}
		for _, path := range p.Paths {
			if !filepath.IsAbs(path) {
				path = filepath.Join(dir, path)
			}
			g.Paths = append(g.Paths, filepath.Clean(path))
		}
	}
	return g
}

// It also keeps agents' memory and trees' scratchpads.
var _ delegate.MemoryLedger = (*store.Store)(nil)

package config

import (
	"errors"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"time"

	"github.com/deputyhq/deputy/config/internal/osfile"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/capability"
	"github.com/deputyhq/deputy/llm/price"
	"github.com/deputyhq/deputy/permission"
)

// maxSettingsSize bounds config.yaml.
const maxSettingsSize = 1 << 20

// Settings is deputy's merged configuration (config.yaml), with defaults
// filled in for every key no file sets.
type Settings struct {
	// DefaultModel is the model of agents that name none, and of
	// "model: inherit" at the root. "" means none is configured.
	DefaultModel string
	// DefaultModelFrom says where DefaultModel came from when no
	// config.yaml set it (claude.ApplySessionModel); "" when one did, or none is set.
	DefaultModelFrom string
	// Providers are named custom OpenAI-compatible providers, used in model
	// strings as "<name>/<model>".
	Providers map[string]ProviderSettings
	// BuiltinWireAPI is the API a built-in provider of the OpenAI wire
	// speaks, by name (openai, ollama): providers.openai.wire_api, for an
	// OPENAI_BASE_URL that serves the Responses API. Unset, each chooses
	// by its base URL and model (llm/openai).
	BuiltinWireAPI map[string]string
	// Prices override or extend the embedded price table, by
	// "provider/model", in US dollars per million tokens.
	Prices map[string]price.Price
	// Capabilities override or extend the embedded capability table
	// (llm/capability), by "provider/model family".
	Capabilities map[string]capability.Override
	// Concurrency, when above 0, is a hard cap on the model calls in
	// flight across one run tree; 0 (the default) leaves it to each
	// provider's adaptive gate.
	Concurrency int
	// MaxTurns is an agent's default turn limit.
	MaxTurns int
	// Retry bounds how failed model calls are repeated.
	Retry llm.RetryPolicy
	// StreamIdleTimeout cuts off a stream that sends nothing for this long;
	// 0 disables the check.
	StreamIdleTimeout time.Duration
	// ResponseTimeout bounds the wait for a non-streaming model call's
	// answer; 0 disables the check.
	ResponseTimeout time.Duration
	// ApprovalTimeout bounds the wait for a person's answer to one
	// approval or question; no answer by then is a deny.
	ApprovalTimeout time.Duration
	Fetch           FetchSettings
	Search          SearchSettings
	Terminal        TerminalSettings
	Permissions     PermissionSettings
	Limits          LimitSettings
	Store           StoreSettings
	Agent           AgentSettings
	// MCPServers are the MCP servers every agent may use (mcp_servers, and
	// xzatoma's mcp.servers); a later file's server replaces an earlier one
	// of the same name.
	MCPServers []MCPServer
	// Files lists the settings files that were read, in order.
	Files []string
	// Warnings are what the files hold that deputy accepts but does not
	// use, one diagnostic each.
	Warnings Diagnostics
}

// ProviderSettings is one custom provider.
type ProviderSettings struct {
	Type      string // only "openai" (any OpenAI-compatible server) for now
	BaseURL   string
	APIKeyEnv string // environment variable holding the API key; "" = no key
	// WireAPI is the OpenAI API the server speaks: "chat" (chat
	// completions, the default: every compatible server has it) or
	// "responses" (OpenAI's Responses API, for a server that has it).
	WireAPI string
}

// The values of wire_api.
var wireAPIs = []string{"chat", "responses"}

// builtinWireProviders are the built-in providers whose entry in
// providers may set wire_api (and nothing else).
var builtinWireProviders = []string{"openai", "ollama"}

// FetchSettings configure the fetch tool.
type FetchSettings struct {
	// AllowHosts are the hosts the fetch tool may reach; what an empty list
	// means is the fetch tool's to say.
	AllowHosts []string
}

// SearchSettings configure the web_search tool.
type SearchSettings struct {
	// Mode is which search web_search uses: SearchAuto (the default: the
	// provider's own where the agent's model has one, else the API),
	// SearchNative, SearchAPI or SearchOff.
	Mode string
	// API is the search API: "brave" or "searxng"; "" for none.
	API string
	// URL is the API's endpoint (Brave's default when empty; a SearXNG
	// instance's base URL, required for searxng).
	URL string
	// APIKeyEnv names the variable holding Brave's key (default
	// BRAVE_API_KEY).
	APIKeyEnv string
	// MaxResults is a search's default number of results (default 5).
	MaxResults int
}

// The values of search.mode.
const (
	SearchAuto   = "auto"
	SearchNative = "native"
	SearchAPI    = "api"
	SearchOff    = "off"
)

// DefaultBraveKeyEnv holds Brave Search's API key unless search.api_key_env
// names another variable.
const DefaultBraveKeyEnv = "BRAVE_API_KEY"

// TerminalSettings configure the terminal tool's sandbox.
type TerminalSettings struct {
	// Env names variables commands see besides the base set (PATH, HOME,
	// LANG, TERM, TMPDIR, USER, SHELL). A provider key is never passed.
	Env []string
	// Network lets commands use the network.
	Network bool
	// ReadPaths and WritePaths grant access beyond the system directories
	// and the working directory.
	ReadPaths  []string
	WritePaths []string
	// Sandbox confines commands (Landlock); false runs them unconfined.
	Sandbox bool
}

// PermissionSettings are the grant of every run: what any agent of the
// tree may use. A nil list permits everything (the default).
type PermissionSettings struct {
	// Tools are the only tools agents may have; DenyTools are refused
	// whatever Tools says.
	Tools     []string
	DenyTools []string
	// Paths are the directories runs may work in.
	Paths []string
	// Hosts are the hosts fetch may reach.
	Hosts []string
	// Rules are the permission rules and mode of every call of every
	// run (allow, ask, deny, mode); the rules of every file add up.
	Rules permission.Rules
}

// LimitSettings bound what enters a run. Zero means the default.
type LimitSettings struct {
	// StdinMaxBytes bounds the text piped to deputy run.
	StdinMaxBytes int
	// ToolOutputMaxBytes bounds what terminal, grep and MCP servers' tools
	// return to the model.
	ToolOutputMaxBytes int
	// ReadFileMaxBytes bounds one read_file result.
	ReadFileMaxBytes int
	// FetchMaxBytes bounds a body fetch reads.
	FetchMaxBytes int
}

// StoreSettings configure the embedded store.
type StoreSettings struct {
	// Path of the SQLite file; "" means the default (see StorePath).
	Path string
}

// AgentSettings hold agent-wide settings.
type AgentSettings struct {
	Subagent SubagentSettings
}

// SubagentSettings configure the subagent tool (agent.subagent).
type SubagentSettings struct {
	MaxDepth           int // 1-10
	DefaultMaxTurns    int // 1-100
	OutputMaxSize      int // bytes, >= 1024
	TelemetryEnabled   bool
	PersistenceEnabled bool
	// Quotas for the whole tree of one root run; 0 means unlimited.
	MaxExecutions  int
	MaxTotalTokens int64
	MaxTotalTime   time.Duration
	// Provider and Model run sub-agents on another model; both "" means the
	// parent's.
	Provider string
	Model    string
}

// Defaults of config.yaml.
const (
	DefaultMaxTurns              = 50
	DefaultStreamIdleTimeout     = 60 * time.Second
	DefaultResponseTimeout       = llm.DefaultResponseTimeout
	DefaultStdinMaxBytes         = 8 << 20
	DefaultSubagentMaxDepth      = 3
	DefaultSubagentMaxTurns      = 10
	DefaultSubagentOutputMaxSize = 4096
	// Limits of agent.subagent, from the subagent tool reference.
	SubagentMaxDepthLimit    = 10
	SubagentMaxTurnsLimit    = 100
	SubagentMinOutputMaxSize = 1024
)

// DefaultSettings returns the settings in force when no file sets anything.
func DefaultSettings() *Settings {
	return &Settings{
		Providers: map[string]ProviderSettings{},
		MaxTurns:  DefaultMaxTurns,
		Retry: llm.RetryPolicy{
			MaxAttempts: 4,
			BaseDelay:   500 * time.Millisecond,
			MaxDelay:    30 * time.Second,
			MaxElapsed:  2 * time.Minute,
		},
		StreamIdleTimeout: DefaultStreamIdleTimeout,
		ResponseTimeout:   DefaultResponseTimeout,
		ApprovalTimeout:   DefaultApprovalTimeout,
		Terminal:          TerminalSettings{Sandbox: true},
		Search:            SearchSettings{Mode: SearchAuto, MaxResults: 5},
		Limits: LimitSettings{
			StdinMaxBytes:      DefaultStdinMaxBytes,
			ToolOutputMaxBytes: 32 << 10,
			ReadFileMaxBytes:   64 << 10,
			FetchMaxBytes:      1 << 20,
		},
		Agent: AgentSettings{Subagent: SubagentSettings{
			MaxDepth:         DefaultSubagentMaxDepth,
			DefaultMaxTurns:  DefaultSubagentMaxTurns,
			OutputMaxSize:    DefaultSubagentOutputMaxSize,
			TelemetryEnabled: true,
		}},
	}
}

// SettingsPaths returns the settings files in precedence order, lowest
// first: the user's config.yaml, then the project's .deputy/config.yaml
// under cwd.
func SettingsPaths(cwd string) []string {
	var paths []string
	if c := ConfigDir(); c != "" {
		paths = append(paths, filepath.Join(c, "config.yaml"))
	}
	if cwd != "" {
		paths = append(paths, filepath.Join(cwd, ProjectDirName, "config.yaml"))
	}
	return paths
}

// LoadSettings reads the settings files in paths (lowest precedence first)
// over the defaults; a later file overrides an earlier one key by key, and
// a key a file does not set keeps its earlier value. Missing files are
// skipped. Every problem of every file is collected: the error is then a
// *ValidationError listing each on its own line, and no settings are
// returned.
//
// Each dialect reads its tool's sections of every file (see
// SettingsDialect).
func LoadSettings(paths []string, dialects ...SettingsDialect) (*Settings, error) {
	s := DefaultSettings()
	origin := map[string]string{} // key -> file that set it, for checks after merging
	var diags Diagnostics
	for _, path := range paths {
		data, err := osfile.Read(path, maxSettingsSize)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			diags = append(diags, Diagnostic{File: path, Severity: Error, Message: "cannot read settings: " + err.Error()})
			continue
		}
		f, ds := parseSettingsFile(data, path, dialects)
		diags = append(diags, ds...)
		if f == nil || ds.HasErrors() {
			continue
		}
		s.Files = append(s.Files, path)
		s.Warnings = append(s.Warnings, ds.Warnings()...)
		f.apply(s, path, origin)
	}
	for name, p := range s.Providers {
		if p.Type == "" {
			p.Type = "openai" // the only type, so the default
			s.Providers[name] = p
		}
	}
	if !diags.HasErrors() {
		merged := s.checkMerged(origin)
		diags = append(diags, merged...)
		s.Warnings = append(s.Warnings, merged.Warnings()...)
	}
	if err := diags.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

// KnownProvider reports whether name is a built-in or a configured
// provider; pass it as LintOptions.KnownProvider.
func (s *Settings) KnownProvider(name string) bool {
	if knownByDefault(name) {
		return true
	}
	_, ok := s.Providers[name]
	return ok
}

// ProviderNames returns the custom providers' names, sorted.
func (s *Settings) ProviderNames() []string {
	return slices.Sorted(maps.Keys(s.Providers))
}

// SubagentModel returns the "provider/model" sub-agents run on, or "" for
// the parent's model (or, see SubagentModelName, a model of the parent's
// provider).
func (s *Settings) SubagentModel() string {
	sa := s.Agent.Subagent
	if sa.Provider != "" {
		return sa.Provider + "/" + sa.Model
	}
	if ref, err := llm.ParseModel(sa.Model); err == nil && s.KnownProvider(ref.Provider) {
		return sa.Model
	}
	return ""
}

// SubagentModelName returns the model sub-agents run on at their parent's
// provider: agent.subagent.model written without a known provider, as
// xzatoma writes it ("granite4:3b"). "" when SubagentModel decides.
func (s *Settings) SubagentModelName() string {
	if s.SubagentModel() != "" {
		return ""
	}
	return s.Agent.Subagent.Model
}

// StorePath returns the store's SQLite file as the settings choose it:
// store.path when set, else deputy.db in DataDir; "" when none can be
// determined. The command line's --db and $DEPUTY_DB win over both; the
// CLI applies them.
func (s *Settings) StorePath() string {
	if s.Store.Path != "" {
		return osfile.ExpandHome(s.Store.Path)
	}
	if d := DataDir(); d != "" {
		return filepath.Join(d, "deputy.db")
	}
	return ""
}

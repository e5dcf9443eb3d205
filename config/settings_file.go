package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/deputyhq/deputy/config/internal/text"
)

// settingsFile is config.yaml as written. Every value is a pointer (or a
// map) so that merging can tell "not set" from an explicit zero or false.
type settingsFile struct {
	DefaultModel      *string                    `yaml:"default_model"`
	Providers         map[string]*providerFile   `yaml:"providers"`
	Concurrency       *int                       `yaml:"concurrency"`
	MaxTurns          *int                       `yaml:"max_turns"`
	Retry             *retryFile                 `yaml:"retry"`
	StreamIdleTimeout *duration                  `yaml:"stream_idle_timeout"`
	ResponseTimeout   *duration                  `yaml:"response_timeout"`
	ApprovalTimeout   *duration                  `yaml:"approval_timeout"`
	Fetch             *fetchFile                 `yaml:"fetch"`
	Search            *searchFile                `yaml:"search"`
	Terminal          *terminalFile              `yaml:"terminal"`
	Permissions       *permissionsFile           `yaml:"permissions"`
	Limits            *limitsFile                `yaml:"limits"`
	Prices            map[string]*priceFile      `yaml:"prices"`
	Capabilities      map[string]*capabilityFile `yaml:"capabilities"`
	Store             *storeFile                 `yaml:"store"`
	Agent             *agentFile                 `yaml:"agent"`
	// MCPServers are MCP servers for every agent, keyed by name; mcp is
	// xzatoma's section for the same. Both are read by mcpServersValue,
	// which knows every format's keys (see mcp).
	MCPServers map[string]any  `yaml:"mcp_servers"`
	MCP        *xzatomaMCPFile `yaml:"mcp"`

	// mcp is what MCPServers and MCP declare, in file order.
	mcp []MCPServer
}

// xzatomaMCPFile is xzatoma's mcp section.
type xzatomaMCPFile struct {
	AutoConnect           *bool `yaml:"auto_connect"`
	RequestTimeoutSeconds *int  `yaml:"request_timeout_seconds"`
	ExposeResourcesTool   *bool `yaml:"expose_resources_tool"`
	ExposePromptsTool     *bool `yaml:"expose_prompts_tool"`
	Servers               []any `yaml:"servers"`
}

type providerFile struct {
	Type      *string `yaml:"type"`
	BaseURL   *string `yaml:"base_url"`
	APIKeyEnv *string `yaml:"api_key_env"`
	WireAPI   *string `yaml:"wire_api"`
}

type retryFile struct {
	MaxAttempts *int      `yaml:"max_attempts"`
	BaseDelay   *duration `yaml:"base_delay"`
	MaxDelay    *duration `yaml:"max_delay"`
	MaxElapsed  *duration `yaml:"max_elapsed"`
}

type terminalFile struct {
	Env        *[]string `yaml:"env"`
	Network    *bool     `yaml:"network"`
	ReadPaths  *[]string `yaml:"read_paths"`
	WritePaths *[]string `yaml:"write_paths"`
	Sandbox    *bool     `yaml:"sandbox"`
}

type permissionsFile struct {
	Tools     *[]string `yaml:"tools"`
	DenyTools *[]string `yaml:"deny_tools"`
	Paths     *[]string `yaml:"paths"`
	Hosts     *[]string `yaml:"hosts"`
	Allow     *[]string `yaml:"allow"`
	Ask       *[]string `yaml:"ask"`
	Deny      *[]string `yaml:"deny"`
	Mode      *string   `yaml:"mode"`
}

// priceFile is one model's price in US dollars per million tokens, and
// its provider's web search per 1,000 searches.
type priceFile struct {
	Input      *float64 `yaml:"input"`
	Output     *float64 `yaml:"output"`
	CacheRead  *float64 `yaml:"cache_read"`
	CacheWrite *float64 `yaml:"cache_write"`
	WebSearch  *float64 `yaml:"web_search"`
}

// capabilityFile is one entry of capabilities: what a model family
// accepts, laid over the embedded table's entry field by field.
type capabilityFile struct {
	Refuses         *[]string `yaml:"refuses"`
	SamplingEfforts *[]string `yaml:"sampling_efforts"`
	Efforts         *[]string `yaml:"efforts"`
	NoEffort        *bool     `yaml:"no_effort"`
	DefaultEffort   *string   `yaml:"default_effort"`
	Thinking        *string   `yaml:"thinking"`
	BudgetMin       *int      `yaml:"budget_min"`
	BudgetMax       *int      `yaml:"budget_max"`
	MaxOutput       *int      `yaml:"max_output"`
	Context         *int      `yaml:"context"`
}

type limitsFile struct {
	StdinMaxBytes      *int `yaml:"stdin_max_bytes"`
	ToolOutputMaxBytes *int `yaml:"tool_output_max_bytes"`
	ReadFileMaxBytes   *int `yaml:"read_file_max_bytes"`
	FetchMaxBytes      *int `yaml:"fetch_max_bytes"`
}

type fetchFile struct {
	AllowHosts *[]string `yaml:"allow_hosts"`
}

type searchFile struct {
	Mode       *string `yaml:"mode"`
	API        *string `yaml:"api"`
	URL        *string `yaml:"url"`
	APIKeyEnv  *string `yaml:"api_key_env"`
	MaxResults *int    `yaml:"max_results"`
}

type storeFile struct {
	Path *string `yaml:"path"`
}

type agentFile struct {
	Subagent *subagentFile `yaml:"subagent"`
}

type subagentFile struct {
	MaxDepth           *int      `yaml:"max_depth"`
	DefaultMaxTurns    *int      `yaml:"default_max_turns"`
	OutputMaxSize      *int      `yaml:"output_max_size"`
	TelemetryEnabled   *bool     `yaml:"telemetry_enabled"`
	PersistenceEnabled *bool     `yaml:"persistence_enabled"`
	MaxExecutions      *int      `yaml:"max_executions"`
	MaxTotalTokens     *int64    `yaml:"max_total_tokens"`
	MaxTotalTime       *duration `yaml:"max_total_time"`
	Provider           *string   `yaml:"provider"`
	Model              *string   `yaml:"model"`
}

// duration is a YAML duration: a Go duration string ("500ms", "2m") or a
// whole number of seconds. (yaml's own time.Duration decoding reads a bare
// number as nanoseconds, which nobody means in a config file.)
type duration time.Duration

var durationType = reflect.TypeFor[duration]()

// UnmarshalYAML implements yaml.Unmarshaler.
func (d *duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := parseDurationNode(n)
	if err != nil {
		return err
	}
	*d = duration(v)
	return nil
}

func parseDurationNode(n *yaml.Node) (time.Duration, error) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		secs, err := strconv.ParseInt(n.Value, 0, 64)
		if err != nil || secs > int64(time.Duration(1<<63-1)/time.Second) || secs < -int64(time.Duration(1<<63-1)/time.Second) {
			return 0, fmt.Errorf("%q is not a number of seconds deputy can hold", n.Value)
		}
		return time.Duration(secs) * time.Second, nil
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		v, err := time.ParseDuration(n.Value)
		if err == nil {
			return v, nil
		}
	}
	return 0, fmt.Errorf("must be a duration such as 500ms or 2m, or a number of seconds; got %s", text.Node(n))
}

// A SettingsDialect reads another tool's sections of a settings file
// (xzatoma's config.yaml; see config/xzatoma) before deputy reads its own
// keys. It takes them out of root, the file's top-level mapping, reporting
// through sink, and returns what they mean in deputy's keys: nested maps
// whose values fill in each key the file does not set itself.
type SettingsDialect func(root *yaml.Node, sink *Sink) map[string]any

// parseSettingsFile decodes one config.yaml strictly, after the dialects
// have taken out their sections: unknown keys and values of the wrong type
// are errors with line numbers, all of them collected. Values are not
// range-checked here (see check).
func parseSettingsFile(data []byte, path string, dialects []SettingsDialect) (*settingsFile, Diagnostics) {
	sink := &Sink{File: path}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return &settingsFile{}, nil // empty, or only comments
		}
		line, msg := yamlErrorLine(err)
		sink.Errorf(line, "", "invalid YAML: %s", msg)
		return nil, sink.Diags
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		sink.Errorf(extra.Line, "", "holds more than one YAML document; settings are one mapping")
		return nil, sink.Diags
	}
	if len(doc.Content) == 0 || doc.Content[0].Tag == "!!null" {
		return &settingsFile{}, nil
	}
	for _, d := range dialects {
		if doc.Content[0].Kind != yaml.MappingNode {
			break // checkNodeType says so
		}
		fillDefaults(doc.Content[0], d(doc.Content[0], sink))
	}
	checkNodeType(sink, doc.Content[0], reflect.TypeFor[settingsFile](), "")
	if sink.Diags.HasErrors() {
		return nil, sink.Diags
	}

	// The walk above already rejected unknown keys with their full dotted
	// names, so the document (without the dialects' sections) decodes as is.
	var f settingsFile
	if err := doc.Content[0].Decode(&f); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			for _, e := range te.Errors {
				line, msg := yamlErrorLine(errors.New(e))
				sink.Errorf(line, "", "%s", msg)
			}
		} else {
			line, msg := yamlErrorLine(err)
			sink.Errorf(line, "", "%s", msg)
		}
		return nil, sink.Diags
	}
	f.check(sink)
	f.readMCP(sink, doc.Content[0])
	return &f, sink.Diags
}

// readMCP turns mcp_servers and xzatoma's mcp.servers into MCPServers,
// with diagnostics at the lines they are written on.
func (f *settingsFile) readMCP(sink *Sink, root *yaml.Node) {
	if f.MCPServers == nil && f.MCP == nil {
		return
	}
	var refs []keyRef
	collectYAMLKeys(sink, root, nil, 0, &refs)
	lines := map[string]int{}
	for _, r := range refs {
		lines[strings.Join(r.path, ".")] = r.line
	}
	if f.MCPServers != nil {
		top := Fields{m: map[string]any{"mcp_servers": f.MCPServers}, lines: lines, sink: sink, yaml: true}
		f.mcp = append(f.mcp, mcpServersValue(top, "mcp_servers")...)
	}
	if x := f.MCP; x != nil {
		if x.RequestTimeoutSeconds != nil {
			sink.Warnf(lines["mcp.request_timeout_seconds"], "mcp.request_timeout_seconds", "deputy does not use this xzatoma setting; it is ignored (calls end with the run's own time limits)")
		}
		if x.ExposeResourcesTool != nil && *x.ExposeResourcesTool {
			sink.Warnf(lines["mcp.expose_resources_tool"], "mcp.expose_resources_tool", "deputy offers MCP servers' tools only, not an mcp_resources tool; it is ignored")
		}
		if x.ExposePromptsTool != nil && *x.ExposePromptsTool {
			sink.Warnf(lines["mcp.expose_prompts_tool"], "mcp.expose_prompts_tool", "deputy offers MCP servers' tools only, not an mcp_prompts tool; it is ignored")
		}
		if x.Servers != nil {
			sec := Fields{m: map[string]any{"servers": x.Servers}, prefix: "mcp", lines: lines, sink: sink, yaml: true}
			for _, s := range mcpServersValue(sec, "servers") {
				if slices.ContainsFunc(f.mcp, func(o MCPServer) bool { return o.Name == s.Name }) {
					sink.Errorf(lines["mcp.servers"], "mcp.servers", "MCP server %q is also declared in mcp_servers", s.Name)
					continue
				}
				f.mcp = append(f.mcp, s)
			}
		}
	}
	for _, s := range f.mcp {
		if s.Ref {
			sink.Errorf(lines["mcp_servers"], "mcp_servers", "%q: an MCP server here needs its configuration (command or url)", s.Name)
		}
	}
}

// checkNodeType walks node against the Go type t that will receive it,
// reporting keys t has no field for and scalars of the wrong kind, with
// the full dotted key and the line. Aliases are left to the decoder.
func checkNodeType(sink *Sink, n *yaml.Node, t reflect.Type, key string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		return
	}
	bad := func(want string) {
		what := key
		if what == "" {
			what = "the settings file"
		}
		sink.Errorf(n.Line, "", "%s must be %s, got %s", what, want, text.Node(n))
	}
	if t == durationType {
		if _, err := parseDurationNode(n); err != nil {
			sink.Errorf(n.Line, "", "%s %s", key, err.Error())
		}
		return
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		if n.Kind != yaml.MappingNode {
			bad("a mapping")
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			vt, problem := valueType(t, k, key)
			if problem != "" {
				sink.Errorf(k.Line, "", "%s", problem)
				continue
			}
			checkNodeType(sink, v, vt, joinKey(key, k.Value))
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			bad("a list")
			return
		}
		for i, item := range n.Content {
			checkNodeType(sink, item, t.Elem(), fmt.Sprintf("%s[%d]", key, i))
		}
	case reflect.Int, reflect.Int64:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
			bad("an integer")
			return
		}
		if _, err := strconv.ParseInt(n.Value, 0, t.Bits()); err != nil {
			// yaml accepts 0o, 0x and _ separators; let the decoder judge
			// those, but catch plain overflow here with a clear message.
			if ne, ok := err.(*strconv.NumError); ok && errors.Is(ne.Err, strconv.ErrRange) {
				sink.Errorf(n.Line, "", "%s is out of range: %s", key, n.Value)
			}
		}
	case reflect.Float64:
		if n.Kind != yaml.ScalarNode || (n.Tag != "!!float" && n.Tag != "!!int") {
			bad("a number")
		}
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
			bad("true or false")
		}
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			bad("a string")
		}
	}
}

// valueType is the Go type that receives the value of key k in t, a
// struct or a map, at key; problem says what is wrong with k instead.
func valueType(t reflect.Type, k *yaml.Node, key string) (vt reflect.Type, problem string) {
	if t.Kind() == reflect.Map {
		if k.Kind != yaml.ScalarNode {
			return nil, key + ": keys must be plain strings"
		}
		return t.Elem(), ""
	}
	field, ok := yamlField(t, k.Value)
	if k.Kind != yaml.ScalarNode || !ok {
		return nil, fmt.Sprintf("unknown key %q", joinKey(key, k.Value))
	}
	return field.Type, ""
}

// yamlField finds the struct field whose yaml tag is name.
func yamlField(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if tag == name && tag != "" && tag != "-" {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func joinKey(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

// fillDefaults puts each value of defaults (a dialect's) into the mapping
// n where n does not set that key, merging nested mappings.
func fillDefaults(n *yaml.Node, defaults map[string]any) {
	for _, k := range slices.Sorted(maps.Keys(defaults)) {
		v := defaults[k]
		_, have := findKey(n, k)
		if sub, ok := v.(map[string]any); ok && have != nil && have.Kind == yaml.MappingNode {
			fillDefaults(have, sub)
			continue
		}
		if have != nil {
			continue
		}
		var key, value yaml.Node
		key.SetString(k)
		if value.Encode(v) != nil {
			continue
		}
		n.Content = append(n.Content, &key, &value)
	}
}

// findKey returns the key and value nodes of k in mapping n.
func findKey(n *yaml.Node, k string) (*yaml.Node, *yaml.Node) {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == k {
			return n.Content[i], n.Content[i+1]
		}
	}
	return nil, nil
}

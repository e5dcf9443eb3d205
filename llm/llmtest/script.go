package llmtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/deputyhq/deputy/llm"
)

// Script is a list of rules that decide how a fake model answers. Build one
// with ParseScript or LoadScript, or as a Go literal; either way use it
// through a pointer, because it counts how often each rule has answered.
type Script struct {
	// Rules are tried in order; the first that matches and still has uses
	// left answers.
	Rules []Rule `yaml:"rules"`
	// Strict makes the fake server refuse, as its provider does, a
	// conversation that lost what the provider requires back: each wire
	// says which of its rules only a strict server enforces (the OpenAI
	// Responses wire: a reasoning model's reasoning items replayed before
	// the output they preceded). Lenient by default, so that a test may
	// build a history by hand. The in-process Provider ignores it.
	Strict bool `yaml:"strict"`

	once    sync.Once
	initErr error
	rules   []*compiledRule

	mu   sync.Mutex
	used []int // answers given per rule, guarded by mu

	callSeq atomic.Int64 // numbers generated tool call IDs
}

// Rule is one entry of a script: when it applies and what it answers.
type Rule struct {
	// Name shows in the request log and in error messages. Optional.
	Name  string `yaml:"name"`
	Match Match  `yaml:"match"`
	Reply Reply  `yaml:"reply"`
	// Latency is waited before answering; a cancelled request stops waiting.
	Latency time.Duration `yaml:"latency"`
	// ChunkDelay is waited between stream chunks.
	ChunkDelay time.Duration `yaml:"chunk_delay"`
	// Fault, when set, replaces the reply with a failure.
	Fault Fault `yaml:"fault"`
	// RetryAfter is the delay in seconds a rate_limit fault asks for.
	RetryAfter float64 `yaml:"retry_after"`
	// Times is how many requests this rule answers; 0 means no limit.
	Times int `yaml:"times"`
}

// Match says which requests a rule answers. Every field is optional; all
// fields that are set must hold. Regexps are unanchored (use ^ and $).
type Match struct {
	// Model is a regexp on the request's model name.
	Model string `yaml:"model"`
	// System is a regexp on the system prompt.
	System string `yaml:"system"`
	// Last is a regexp on the content of the last message.
	Last string `yaml:"last"`
	// LastRole is the role of the last message: user, assistant or tool.
	LastRole string `yaml:"last_role"`
	// Tool requires the request to offer a tool of this name.
	Tool string `yaml:"tool"`
	// NoTool requires the request NOT to offer a tool of this name.
	NoTool string `yaml:"no_tool"`
	// ServerTool requires the request to offer the provider's own tool of
	// this kind (web_search: Anthropic's web search tool, the Responses
	// API's web_search, Gemini's googleSearch), not a function of that
	// name.
	ServerTool string `yaml:"server_tool"`
	// Any is a regexp on the content of any message.
	Any string `yaml:"any"`
	// Turn requires exactly Turn-1 assistant messages in the request, so
	// 1 is the first model call of a conversation.
	Turn int `yaml:"turn"`
}

// Reply is what a rule answers. Text, tool call IDs and the string leaves
// of tool call arguments are text/templates (see the package doc).
type Reply struct {
	Text string `yaml:"text"`
	// Reasoning is the readable summary of the model's thinking on this
	// turn, a template like Text. Each wire reports it the way its
	// provider gives summaries (where it does), never as answer text.
	Reasoning string          `yaml:"reasoning"`
	ToolCalls []ToolCallReply `yaml:"tool_calls"`
	// Searches are the searches the provider's own web search runs
	// before the text (see SearchReply).
	Searches []SearchReply `yaml:"searches"`
	// Usage overrides the token counts; an omitted count is estimated.
	Usage *UsageReply `yaml:"usage"`
	// Finish overrides the finish reason: stop, tool_calls, length,
	// content_filter or other. By default it is tool_calls when the reply
	// has tool calls and stop otherwise.
	Finish string `yaml:"finish"`
}

// ToolCallReply is one tool call of a reply.
type ToolCallReply struct {
	Name string `yaml:"name"`
	// ID is the call's ID; empty means a generated one ("call_<n>", or
	// "toolu_<n>" on the Anthropic endpoint).
	ID string `yaml:"id"`
	// Arguments is a map whose string leaves are templates, or a string
	// template that renders the raw JSON arguments. Nil means {}.
	Arguments any `yaml:"arguments"`
}

// UsageReply sets the token counts of a reply. A nil input or output
// count is estimated. The cache counts (0 when nil) are part of the input,
// as in llm.Usage: each wire reports them its provider's way.
type UsageReply struct {
	InputTokens      *int64 `yaml:"input_tokens"`
	OutputTokens     *int64 `yaml:"output_tokens"`
	CacheReadTokens  *int64 `yaml:"cache_read_tokens"`
	CacheWriteTokens *int64 `yaml:"cache_write_tokens"`
	// ReasoningTokens (0 when nil) are the part of the output the model
	// spent thinking, as in llm.Usage.
	ReasoningTokens *int64 `yaml:"reasoning_tokens"`
}

// Fault is a scripted failure.
type Fault string

// The faults a rule can script. See the package doc for what each does in
// process and over HTTP.
const (
	FaultNone        Fault = ""
	FaultRateLimit   Fault = "rate_limit"
	FaultServerError Fault = "server_error"
	FaultOverloaded  Fault = "overloaded"
	FaultMalformed   Fault = "malformed"
	FaultStall       Fault = "stall"
	FaultDrop        Fault = "drop"
	FaultAuth        Fault = "auth"
	FaultBadRequest  Fault = "bad_request"
)

var knownFaults = map[Fault]bool{
	FaultNone: true, FaultRateLimit: true, FaultServerError: true, FaultOverloaded: true,
	FaultMalformed: true, FaultStall: true, FaultDrop: true, FaultAuth: true, FaultBadRequest: true,
}

var knownFinish = map[string]llm.FinishReason{
	"":               "",
	"stop":           llm.FinishStop,
	"tool_calls":     llm.FinishToolCalls,
	"length":         llm.FinishLength,
	"content_filter": llm.FinishContentFilter,
	"other":          llm.FinishOther,
}

// ParseScript reads a script from YAML (or JSON, which is YAML too). It is
// strict: an unknown key, a bad regexp or template, an unknown fault, role or
// finish reason is an error that names the rule (by number and name) and,
// where it can, the line.
func ParseScript(data []byte) (*Script, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("llmtest: script is empty: it needs a list of rules under \"rules:\"")
		}
		return nil, fmt.Errorf("llmtest: script: %w", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errors.New("llmtest: script: more than one YAML document; put every rule in one list under \"rules:\"")
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("llmtest: script: line %d: want a mapping with the key \"rules\"", root.Line)
	}
	var rulesNode *yaml.Node
	strict := false
	for i := 0; i+1 < len(root.Content); i += 2 {
		key := root.Content[i]
		if key.Value == "strict" {
			if err := root.Content[i+1].Decode(&strict); err != nil {
				return nil, fmt.Errorf("llmtest: script: line %d: strict: want true or false", key.Line)
			}
			continue
		}
		if key.Value != "rules" {
			return nil, fmt.Errorf("llmtest: script: line %d: unknown key %q (the top-level keys are \"rules\" and \"strict\")", key.Line, key.Value)
		}
		if rulesNode != nil {
			return nil, fmt.Errorf("llmtest: script: line %d: key \"rules\" given twice", key.Line)
		}
		rulesNode = root.Content[i+1]
	}
	if rulesNode == nil || rulesNode.Kind == yaml.ScalarNode && rulesNode.Tag == "!!null" {
		return nil, errors.New("llmtest: script: no rules: add a list of rules under \"rules:\"")
	}
	if rulesNode.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("llmtest: script: line %d: \"rules\" must be a list", rulesNode.Line)
	}
	if len(rulesNode.Content) == 0 {
		return nil, errors.New("llmtest: script: the list of rules is empty")
	}
	s := &Script{Rules: make([]Rule, len(rulesNode.Content)), Strict: strict}
	for i, n := range rulesNode.Content {
		label := ruleLabel(i, nodeName(n))
		if n.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("llmtest: script: %s (line %d): a rule must be a mapping", label, n.Line)
		}
		if err := checkKeys(n, ruleType, ""); err != nil {
			return nil, fmt.Errorf("llmtest: script: %s: %w", label, err)
		}
		if err := n.Decode(&s.Rules[i]); err != nil {
			return nil, fmt.Errorf("llmtest: script: %s: %w", label, err)
		}
	}
	if err := s.init(); err != nil {
		return nil, err
	}
	return s, nil
}

// MustParseScript is ParseScript for test code: it panics on an error.
func MustParseScript(text string) *Script {
	s, err := ParseScript([]byte(text))
	if err != nil {
		panic(err)
	}
	return s
}

// LoadScript reads and parses the script file at path.
func LoadScript(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("llmtest: %w", err)
	}
	s, err := ParseScript(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// init compiles the rules once; a Script built as a Go literal is checked
// on its first use.
func (s *Script) init() error {
	s.once.Do(func() {
		if len(s.Rules) == 0 {
			s.initErr = errors.New("llmtest: script has no rules")
			return
		}
		s.rules = make([]*compiledRule, len(s.Rules))
		s.used = make([]int, len(s.Rules))
		for i := range s.Rules {
			c, err := compileRule(i, &s.Rules[i])
			if err != nil {
				s.initErr = fmt.Errorf("llmtest: script: %s: %w", ruleLabel(i, s.Rules[i].Name), err)
				return
			}
			s.rules[i] = c
		}
	})
	return s.initErr
}

// ruleLabel names a rule in messages: "rule 2 (lead-delegates)", or
// "rule 2" when it has no name. Numbers count from 1.
func ruleLabel(i int, name string) string {
	if name == "" {
		return fmt.Sprintf("rule %d", i+1)
	}
	return fmt.Sprintf("rule %d (%s)", i+1, name)
}

// nodeName returns the "name" value of a rule mapping, if it has one.
func nodeName(n *yaml.Node) string {
	if n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "name" && n.Content[i+1].Kind == yaml.ScalarNode {
			return n.Content[i+1].Value
		}
	}
	return ""
}

// compileRegexp compiles an optional pattern, naming the key on failure.
func compileRegexp(key, pattern string) (*regexp.Regexp, error) {
	if pattern == "" {
		return nil, nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("match.%s: invalid regexp %q: %w", key, pattern, err)
	}
	return re, nil
}

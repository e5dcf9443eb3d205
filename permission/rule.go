package permission

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Rule is one rule: a tool, and optionally a pattern over what the call
// touches. A rule without a pattern matches every call of its tool.
type Rule struct {
	// Tool is a tool's name, or a pattern over names with '*'
	// (mcp__github__*); mcp__<server> names every tool of a server.
	Tool string
	// Pattern is over the call's subject (see Parse); "" matches every
	// call.
	Pattern string
	// Source says where the rule was written, for messages (a file).
	Source string
}

// kind is what a tool's calls touch, which its rules' patterns match.
type kind uint8

const (
	kindNone    kind = iota // no pattern: the tool's name only
	kindCommand             // a shell command
	kindPath                // a file or directory
	kindURL                 // a URL; patterns are domain:HOST
	kindName                // an agent's name or a label
)

// toolKind is a tool's kind and the argument that holds its subject.
type toolKind struct {
	kind kind
	arg  string // "" for a path tool whose subject is its working directory
}

// kinds are deputy's tools whose calls a pattern can match, by the
// arguments their schemas define (tool/builtin, delegate).
var kinds = map[string]toolKind{
	"terminal":       {kindCommand, "command"},
	"read_file":      {kindPath, "path"},
	"write_file":     {kindPath, "path"},
	"edit_file":      {kindPath, "path"},
	"list_directory": {kindPath, "path"},
	"grep":           {kindPath, "path"},
	"find_path":      {kindPath, ""},
	"fetch":          {kindURL, "url"},
	"call_agent":     {kindName, "agent"},
	"subagent":       {kindName, "label"},
}

// PatternTools lists the tools whose rules take a pattern.
func PatternTools() []string {
	return []string{"terminal", "read_file", "write_file", "edit_file", "list_directory", "grep", "find_path", "fetch", "call_agent", "subagent"}
}

// maxRule bounds a rule's text: patterns are matched against every call.
const maxRule = 4096

// Parse reads a rule in deputy's syntax: a tool's name, or a name and a
// pattern in parentheses:
//
//	terminal                 every command
//	terminal(git diff:*)     "git diff" and what follows it after a space
//	terminal(npm run *)      '*' matches any text; a trailing " *" may
//	                         also match nothing ("npm run")
//	terminal(make test)      exactly that command
//	write_file(src/**)       a path glob ('**' spans directories), relative
//	                         to the working directory; /abs/** and ~/x too;
//	                         a pattern without '/' matches at any depth
//	fetch(domain:*.go.dev)   URLs whose host matches
//	call_agent(researcher)   one agent (a glob over names)
//	mcp__github__*           every tool of the MCP server github (also
//	                         mcp__github)
//
// tool(*) is the same as tool. A pattern on a tool none of whose calls it
// could match is an error.
func Parse(text string) (Rule, error) {
	name, pattern, err := Split(text)
	if err != nil {
		return Rule{}, err
	}
	return NewRule(name, pattern)
}

// Split cuts a rule's text into its tool name and its pattern ("" when it
// has none, or when it is "*"), checking only the shape: Name or
// Name(pattern). It is Parse without knowing the tools, for reading
// another tool's rules (Claude Code's Bash(rm:*)).
func Split(text string) (name, pattern string, err error) {
	text = strings.TrimSpace(text)
	if len(text) > maxRule {
		return "", "", fmt.Errorf("rule is longer than %d bytes", maxRule)
	}
	if text == "" {
		return "", "", errors.New("rule is empty")
	}
	open := strings.IndexByte(text, '(')
	if open < 0 {
		if strings.ContainsRune(text, ')') {
			return "", "", fmt.Errorf("rule %q: ')' without '('", text)
		}
		return text, "", nil
	}
	if !strings.HasSuffix(text, ")") {
		return "", "", fmt.Errorf("rule %q: the pattern must end the rule with ')'", text)
	}
	name, pattern = strings.TrimSpace(text[:open]), text[open+1:len(text)-1]
	if name == "" {
		return "", "", fmt.Errorf("rule %q names no tool", text)
	}
	if strings.TrimSpace(pattern) == "" {
		return "", "", fmt.Errorf("rule %q: the pattern in parentheses is empty (write %s alone for every call)", text, name)
	}
	if pattern == "*" {
		pattern = ""
	}
	return name, pattern, nil
}

// NewRule makes the rule of tool and pattern ("" for every call), checking
// that the name is a tool name or a pattern over names, and that the
// pattern fits what the tool's calls touch.
func NewRule(tool, pattern string) (Rule, error) {
	r := Rule{Tool: tool, Pattern: pattern}
	if err := checkToolName(tool); err != nil {
		return Rule{}, err
	}
	if pattern == "" {
		return r, nil
	}
	if len(pattern) > maxRule {
		return Rule{}, fmt.Errorf("rule %s: pattern is longer than %d bytes", tool, maxRule)
	}
	k, ok := kinds[tool]
	if !ok {
		return Rule{}, fmt.Errorf("rule %s(%s): %s takes no pattern; patterns are for %s", tool, pattern, tool, strings.Join(PatternTools(), ", "))
	}
	switch k.kind {
	case kindPath:
		if !doublestar.ValidatePattern(pattern) {
			return Rule{}, fmt.Errorf("rule %s(%s): not a valid path glob", tool, pattern)
		}
	case kindURL:
		host, ok := strings.CutPrefix(pattern, "domain:")
		if !ok || strings.TrimSpace(host) == "" {
			return Rule{}, fmt.Errorf("rule %s(%s): a fetch pattern is domain:HOST, such as domain:*.go.dev", tool, pattern)
		}
		if _, err := path.Match(strings.ToLower(host), ""); err != nil {
			return Rule{}, fmt.Errorf("rule %s(%s): not a valid host pattern", tool, pattern)
		}
	case kindName:
		if _, err := path.Match(pattern, ""); err != nil {
			return Rule{}, fmt.Errorf("rule %s(%s): not a valid name pattern", tool, pattern)
		}
	}
	return r, nil
}

// checkToolName accepts what can name tools: letters, digits, '_', '-',
// '.' and, as a wildcard, '*'.
func checkToolName(name string) error {
	if name == "" {
		return errors.New("rule names no tool")
	}
	for _, c := range name {
		ok := c == '_' || c == '-' || c == '.' || c == '*' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !ok {
			return fmt.Errorf("rule %q: %q cannot be in a tool name", name, c)
		}
	}
	return nil
}

// String is the rule in deputy's syntax; Parse reads it back.
func (r Rule) String() string {
	if r.Pattern == "" {
		return r.Tool
	}
	return r.Tool + "(" + r.Pattern + ")"
}

// ruleJSON is a rule in data (a run described for another process).
type ruleJSON struct {
	Rule   string `json:"rule"`
	Source string `json:"source,omitempty"`
}

// MarshalJSON writes the rule's text and source.
func (r Rule) MarshalJSON() ([]byte, error) {
	return json.Marshal(ruleJSON{Rule: r.String(), Source: r.Source})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (r *Rule) UnmarshalJSON(b []byte) error {
	var j ruleJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	p, err := Parse(j.Rule)
	if err != nil {
		return err
	}
	*r, r.Source = p, j.Source
	return nil
}

// names reports whether the rule's tool part names tool.
func (r *Rule) names(tool string) bool {
	if r.Tool == tool {
		return true
	}
	if strings.ContainsRune(r.Tool, '*') {
		ok, _ := path.Match(r.Tool, tool)
		return ok
	}
	// mcp__<server> names every tool of the server, as in Claude Code.
	if server, ok := strings.CutPrefix(r.Tool, "mcp__"); ok && server != "" && !strings.Contains(server, "__") {
		return strings.HasPrefix(tool, r.Tool+"__")
	}
	return false
}

// touches reports whether the rule matches the call: for a compound
// command, any of its parts. It is how deny and ask rules match.
func (r *Rule) touches(tool string, sub subject) bool {
	if !r.names(tool) {
		return false
	}
	if r.Pattern == "" {
		return true
	}
	if !sub.ok {
		return false
	}
	switch sub.kind {
	case kindCommand:
		for _, p := range sub.parts {
			for _, v := range commandVariants(p) {
				if matchCommand(r.Pattern, v) {
					return true
				}
			}
		}
		return false
	case kindPath:
		return matchPath(r.Pattern, sub)
	case kindURL:
		return matchHost(r.Pattern, sub.host)
	case kindName:
		ok, _ := path.Match(r.Pattern, sub.text)
		return ok
	}
	return false
}

// covering returns the allow rule that covers the call, nil when none
// does. A compound command is covered when each of its parts, as written,
// is matched by some rule; a command with substitutions ($(...), `...`)
// only by a rule without a pattern.
func covering(rules []Rule, tool string, sub subject) *Rule {
	var first *Rule
	for i := range rules {
		r := &rules[i]
		if !r.names(tool) {
			continue
		}
		if r.Pattern == "" {
			return r
		}
		if first == nil && sub.ok && sub.kind != kindCommand && r.touches(tool, sub) {
			first = r
		}
	}
	if sub.kind != kindCommand {
		return first
	}
	if !sub.ok || sub.opaque || len(sub.parts) == 0 {
		return nil
	}
	for _, p := range sub.parts {
		var by *Rule
		for i := range rules {
			if r := &rules[i]; r.Pattern != "" && r.names(tool) && matchCommand(r.Pattern, p) {
				by = r
				break
			}
		}
		if by == nil {
			return nil
		}
		if first == nil {
			first = by
		}
	}
	return first
}

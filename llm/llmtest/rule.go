package llmtest

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"text/template"

	"github.com/deputyhq/deputy/llm"
)

// compiledRule is a Rule checked and prepared once: regexps and templates
// compiled, defaults resolved.
type compiledRule struct {
	label string // for messages: "rule 2 (name)"
	rule  *Rule

	model, system, last, any *regexp.Regexp
	lastRole                 llm.Role

	text, reasoning *template.Template
	calls           []compiledCall
	queries         []*template.Template
	finish          llm.FinishReason
}

type compiledCall struct {
	name string
	id   *template.Template
	args *argsTemplate
}

func compileRule(i int, r *Rule) (*compiledRule, error) {
	c := &compiledRule{label: ruleLabel(i, r.Name), rule: r}
	var err error
	m := &r.Match
	if c.model, err = compileRegexp("model", m.Model); err != nil {
		return nil, err
	}
	if c.system, err = compileRegexp("system", m.System); err != nil {
		return nil, err
	}
	if c.last, err = compileRegexp("last", m.Last); err != nil {
		return nil, err
	}
	if c.any, err = compileRegexp("any", m.Any); err != nil {
		return nil, err
	}
	switch llm.Role(m.LastRole) {
	case "", llm.RoleUser, llm.RoleAssistant, llm.RoleTool:
		c.lastRole = llm.Role(m.LastRole)
	default:
		return nil, fmt.Errorf("match.last_role: unknown role %q (want user, assistant or tool)", m.LastRole)
	}
	if m.Turn < 0 {
		return nil, fmt.Errorf("match.turn: %d is negative (1 is the first call)", m.Turn)
	}
	if r.Times < 0 {
		return nil, fmt.Errorf("times: %d is negative (0 means unlimited)", r.Times)
	}
	if r.Latency < 0 || r.ChunkDelay < 0 {
		return nil, fmt.Errorf("latency and chunk_delay must not be negative")
	}
	if !knownFaults[r.Fault] {
		return nil, fmt.Errorf("fault: unknown fault %q (want rate_limit, server_error, overloaded, malformed, stall, drop, auth or bad_request)", r.Fault)
	}
	if r.RetryAfter != 0 && r.Fault != FaultRateLimit {
		return nil, fmt.Errorf("retry_after: only used with fault: rate_limit")
	}
	if r.RetryAfter < 0 || math.IsNaN(r.RetryAfter) || r.RetryAfter > 1e6 {
		return nil, fmt.Errorf("retry_after: %v is not a number of seconds between 0 and 1e6", r.RetryAfter)
	}
	finish, ok := knownFinish[r.Reply.Finish]
	if !ok {
		return nil, fmt.Errorf("reply.finish: unknown finish reason %q (want stop, tool_calls, length, content_filter or other)", r.Reply.Finish)
	}
	c.finish = finish
	if u := r.Reply.Usage; u != nil {
		for _, n := range []*int64{u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.ReasoningTokens} {
			if n != nil && *n < 0 {
				return nil, fmt.Errorf("reply.usage: token counts must not be negative")
			}
		}
		cached := deref(u.CacheReadTokens) + deref(u.CacheWriteTokens)
		if cached > 0 && (u.InputTokens == nil || cached > *u.InputTokens) {
			return nil, fmt.Errorf("reply.usage: cache_read_tokens and cache_write_tokens together must not exceed input_tokens (they are part of it); set input_tokens")
		}
		if r := deref(u.ReasoningTokens); r > 0 && (u.OutputTokens == nil || r > *u.OutputTokens) {
			return nil, fmt.Errorf("reply.usage: reasoning_tokens must not exceed output_tokens (they are part of it); set output_tokens")
		}
	}
	if c.text, err = parseTemplate("reply.text", r.Reply.Text); err != nil {
		return nil, err
	}
	if c.reasoning, err = parseTemplate("reply.reasoning", r.Reply.Reasoning); err != nil {
		return nil, err
	}
	for j, tc := range r.Reply.ToolCalls {
		what := fmt.Sprintf("reply.tool_calls[%d]", j)
		if tc.Name == "" {
			return nil, fmt.Errorf("%s.name: a tool call needs a name", what)
		}
		cc := compiledCall{name: tc.Name}
		if cc.id, err = parseTemplate(what+".id", tc.ID); err != nil {
			return nil, err
		}
		if cc.args, err = compileArgs(what+".arguments", tc.Arguments); err != nil {
			return nil, err
		}
		c.calls = append(c.calls, cc)
	}
	if c.queries, err = compileSearches(r.Reply.Searches); err != nil {
		return nil, err
	}
	if m.ServerTool != "" && m.ServerTool != llm.ServerWebSearch {
		return nil, fmt.Errorf("match.server_tool: unknown kind %q (want %s)", m.ServerTool, llm.ServerWebSearch)
	}
	return c, nil
}

// facts are what matching needs from a request, computed once per request.
type facts struct {
	req      *llm.Request
	last     string
	lastRole llm.Role
	turn     int
	tools    []string
	// servers are the kinds of the provider-run tools offered.
	servers []string
}

func newFacts(req *llm.Request) *facts {
	f := &facts{req: req, turn: 1}
	for _, m := range req.Messages {
		if m.Role == llm.RoleAssistant {
			f.turn++
		}
	}
	if n := len(req.Messages); n > 0 {
		f.last = req.Messages[n-1].Content
		f.lastRole = req.Messages[n-1].Role
	}
	for _, t := range req.Tools {
		f.tools = append(f.tools, t.Name)
		if t.Server != nil {
			f.servers = append(f.servers, t.Server.Kind)
		}
	}
	return f
}

// matches reports whether every condition of the rule holds for f.
func (c *compiledRule) matches(f *facts) bool {
	m := &c.rule.Match
	switch {
	case c.model != nil && !c.model.MatchString(f.req.Model),
		c.system != nil && !c.system.MatchString(f.req.System),
		c.last != nil && !c.last.MatchString(f.last),
		c.lastRole != "" && c.lastRole != f.lastRole,
		m.Tool != "" && !slices.Contains(f.tools, m.Tool),
		m.NoTool != "" && slices.Contains(f.tools, m.NoTool),
		m.ServerTool != "" && !slices.Contains(f.servers, m.ServerTool),
		m.Turn != 0 && m.Turn != f.turn:
		return false
	}
	if c.any != nil {
		return slices.ContainsFunc(f.req.Messages, func(msg llm.Message) bool {
			return c.any.MatchString(msg.Content)
		})
	}
	return true
}

// deref is *p, 0 when p is nil.
func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

package llmtest

import (
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/deputyhq/deputy/llm"
)

// Answer is what the script says to one request: a reply, or a fault to
// act out. The scripted Provider and the fake server both play it.
type Answer struct {
	// Rule is the name of the rule that answered, or "rule N" (counting
	// from 1) when it has none.
	Rule string
	Text string
	// Reasoning is the readable summary of the model's thinking (Reply.Reasoning).
	Reasoning string
	ToolCalls []llm.ToolCall
	// Searches are the provider's own web searches before the text
	// (Reply.Searches).
	Searches []Search
	Usage    llm.Usage
	// UsageSet says the rule set the usage: a wire reports it as scripted
	// instead of counting what it emulates (a prompt cache, thinking).
	UsageSet   bool
	Finish     llm.FinishReason
	Latency    time.Duration
	ChunkDelay time.Duration
	Fault      Fault
	RetryAfter time.Duration
}

// Answer finds the first rule that matches req and still has uses left,
// counts the use, and renders its reply. It is safe for concurrent use.
//
// When no rule matches, the error is an *llm.Error of KindBadRequest; when a
// template fails, it is an *llm.Error of KindServer naming the rule.
func (s *Script) Answer(req *llm.Request) (*Answer, error) {
	a, _, err := s.answer(req, "call_")
	return a, err
}

// answer is Answer with the prefix of generated tool call IDs; it also
// returns the name of the rule that was chosen, even when rendering failed,
// so the request log can show it.
func (s *Script) answer(req *llm.Request, idPrefix string) (*Answer, string, error) {
	if err := s.init(); err != nil {
		return nil, "", &llm.Error{Kind: llm.KindBadRequest, Message: err.Error(), Err: err}
	}
	f := newFacts(req)
	var c *compiledRule
	s.mu.Lock()
	for i, r := range s.rules {
		if r.rule.Times > 0 && s.used[i] >= r.rule.Times {
			continue
		}
		if r.matches(f) {
			s.used[i]++
			c = r
			break
		}
	}
	s.mu.Unlock()
	if c == nil {
		return nil, "", &llm.Error{Kind: llm.KindBadRequest, Message: fmt.Sprintf(
			"llmtest: no rule matched (model %q, last message %q)", req.Model, preview(f.last, 120))}
	}
	name := c.rule.Name
	if name == "" {
		name = c.label
	}
	a, err := s.render(c, req, idPrefix)
	if err != nil {
		return nil, name, &llm.Error{Kind: llm.KindServer, Message: fmt.Sprintf("llmtest: %s: %v", c.label, err), Err: err}
	}
	a.Rule = name
	return a, name, nil
}

// render builds the answer of rule c for req.
func (s *Script) render(c *compiledRule, req *llm.Request, idPrefix string) (*Answer, error) {
	r := c.rule
	a := &Answer{
		Latency:    r.Latency,
		ChunkDelay: r.ChunkDelay,
		Fault:      r.Fault,
		RetryAfter: time.Duration(r.RetryAfter * float64(time.Second)),
	}
	if r.Fault != FaultNone {
		return a, nil
	}
	data := newTemplateData(req)
	var err error
	if a.Text, err = render(c.text, r.Reply.Text, data); err != nil {
		return nil, fmt.Errorf("reply.text: %w", err)
	}
	if a.Reasoning, err = render(c.reasoning, r.Reply.Reasoning, data); err != nil {
		return nil, fmt.Errorf("reply.reasoning: %w", err)
	}
	for j, cc := range c.calls {
		call := llm.ToolCall{Name: cc.name}
		if call.ID, err = render(cc.id, r.Reply.ToolCalls[j].ID, data); err != nil {
			return nil, fmt.Errorf("reply.tool_calls[%d].id: %w", j, err)
		}
		if call.ID == "" {
			call.ID = idPrefix + strconv.FormatInt(s.callSeq.Add(1), 10)
		}
		if call.Arguments, err = cc.args.render(data); err != nil {
			return nil, fmt.Errorf("reply.tool_calls[%d].arguments: %w", j, err)
		}
		a.ToolCalls = append(a.ToolCalls, call)
	}
	if a.Searches, err = renderSearches(c, req, data); err != nil {
		return nil, err
	}
	a.Finish = c.finish
	if a.Finish == "" {
		a.Finish = llm.FinishStop
		if len(a.ToolCalls) > 0 {
			a.Finish = llm.FinishToolCalls
		}
	}
	a.Usage = estimateUsage(req, a)
	if u := r.Reply.Usage; u != nil {
		a.UsageSet = true
		if u.InputTokens != nil {
			a.Usage.InputTokens = *u.InputTokens
		}
		if u.OutputTokens != nil {
			a.Usage.OutputTokens = *u.OutputTokens
			a.Usage.ReasoningTokens = 0 // part of the output given
		}
		a.Usage.CacheReadTokens, a.Usage.CacheWriteTokens = deref(u.CacheReadTokens), deref(u.CacheWriteTokens)
		if u.ReasoningTokens != nil {
			a.Usage.ReasoningTokens = *u.ReasoningTokens
		}
	}
	return a, nil
}

// estimateUsage counts about four bytes per token, at least one token each
// way, so tests get stable, plausible numbers without a tokenizer.
func estimateUsage(req *llm.Request, a *Answer) llm.Usage {
	in := len(req.System)
	for _, m := range req.Messages {
		in += len(m.Content)
		for _, tc := range m.ToolCalls {
			in += len(tc.Name) + len(tc.Arguments)
		}
	}
	for _, s := range a.Searches {
		// The results the provider's search found are read as input.
		for _, r := range s.Results {
			in += len(r.Title) + len(r.URL) + len(r.Snippet)
		}
	}
	out := len(a.Text)
	for _, tc := range a.ToolCalls {
		out += len(tc.Name) + len(tc.Arguments)
	}
	u := llm.Usage{InputTokens: int64(max(in/4, 1)), OutputTokens: int64(max(out/4, 1)), WebSearches: int64(len(a.Searches))}
	if a.Reasoning != "" {
		// The summary stands in for the thinking it summarises.
		u.ReasoningTokens = int64(max(len(a.Reasoning)/4, 1))
		u.OutputTokens += u.ReasoningTokens
	}
	return u
}

// preview shortens s to at most n runes for an error message.
func preview(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "..."
}

package mcp

import (
	"context"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deputyhq/deputy/approval"
)

// elicitPerson is the person behind an MCP client: the approvals and
// questions of a call's tree go to the client as elicitation requests
// (elicitation/create, form mode), which the client shows its user.
type elicitPerson struct {
	session *sdk.ServerSession
}

// canElicit reports whether the client of a session said it supports
// elicitation in form mode: without it nobody is there to ask.
func canElicit(ss *sdk.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
		return false
	}
	e := p.Capabilities.Elicitation
	return e.Form != nil || e.URL == nil // neither said: form, as the SDK reads it
}

// The answers of an approval, as the form offers them.
const (
	allowOnce   = "allow once"
	allowAlways = "allow for the rest of the run"
	deny        = "deny"
)

func (p elicitPerson) Ask(ctx context.Context, r *approval.Request) (approval.Answer, error) {
	params := &sdk.ElicitParams{Message: elicitMessage(r), RequestedSchema: elicitSchema(r)}
	res, err := p.session.Elicit(ctx, params)
	if err != nil {
		if ctx.Err() != nil {
			return approval.Answer{}, ctx.Err()
		}
		return approval.Answer{}, fmt.Errorf("%w: the MCP client: %v", approval.ErrNobody, err)
	}
	return answerOf(r, res), nil
}

// answerOf reads the client's answer to a request. Declining (said no)
// and cancelling (dismissed it) are neither an approval nor an answer, and
// neither is an answer that does not say.
func answerOf(r *approval.Request, res *sdk.ElicitResult) approval.Answer {
	if res.Action != "accept" {
		return approval.Answer{}
	}
	if r.Kind == approval.KindQuestion {
		text, _ := res.Content["answer"].(string)
		return approval.Answer{Allow: true, Text: text}
	}
	reason, _ := res.Content["reason"].(string)
	switch decision, _ := res.Content["decision"].(string); decision {
	case allowOnce:
		return approval.Answer{Allow: true}
	case allowAlways:
		return approval.Answer{Allow: true, Always: true}
	}
	return approval.Answer{Text: reason}
}

// elicitMessage is what the client's user reads: who asks, and exactly
// what would run.
func elicitMessage(r *approval.Request) string {
	if r.Kind == approval.KindQuestion {
		return r.PathText() + " asks: " + approval.Printable(strings.TrimSpace(r.Question))
	}
	return fmt.Sprintf("%s wants to run %s:\n%s\n(asked by %s)", r.PathText(), r.Tool, r.Detail, r.Why)
}

// elicitSchema is the form of an answer: a decision and an optional
// reason for an approval, a text for a question.
func elicitSchema(r *approval.Request) map[string]any {
	if r.Kind == approval.KindQuestion {
		return map[string]any{"type": "object", "required": []string{"answer"}, "properties": map[string]any{
			"answer": map[string]any{"type": "string", "title": "Your answer"},
		}}
	}
	always := "Allow " + r.Tool + " with these arguments for the rest of the run"
	if len(r.Always) > 0 {
		always = "Allow " + strings.Join(r.Always, ", ") + " for the rest of the run"
	}
	return map[string]any{"type": "object", "required": []string{"decision"}, "properties": map[string]any{
		"decision": map[string]any{"type": "string", "title": "Decision", "oneOf": []map[string]any{
			{"const": allowOnce, "title": "Allow once"}, {"const": allowAlways, "title": always}, {"const": deny, "title": "Deny"}}},
		"reason": map[string]any{"type": "string", "title": "Reason (with a deny: the agent reads it)"},
	}}
}

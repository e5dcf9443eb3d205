package delegate_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deputyhq/deputy/approval"
	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/permission"
)

// A script where the root delegates to a child, whose child runs two
// terminal commands and answers with their results.
const approveScript = `
rules:
  - match: {system: "^ROOT", last_role: user}
    reply: {tool_calls: [{name: call_agent, arguments: {agent: mid, task: "go"}}]}
  - match: {system: "^ROOT", last_role: tool}
    reply: {text: "{{ index .ToolResults 0 }}"}
  - match: {system: "^MID", last_role: user}
    reply: {tool_calls: [{name: call_agent, arguments: {agent: leaf, task: "go"}}]}
  - match: {system: "^MID", last_role: tool}
    reply: {text: "{{ index .ToolResults 0 }}"}
  - match: {system: "^LEAF", last_role: user}
    reply:
      tool_calls:
        - {name: terminal, arguments: {command: "touch one.txt"}}
        - {name: terminal, arguments: {command: "touch two.txt"}}
  - match: {system: "^LEAF", last_role: tool}
    reply: {text: "{{ join .ToolResults \" | \" }}"}
`

func rules(t *testing.T, allow, ask, deny []string, mode permission.Mode) permission.Rules {
	t.Helper()
	rs := permission.Rules{Mode: mode}
	for _, l := range []struct {
		in  []string
		out *[]permission.Rule
	}{{allow, &rs.Allow}, {ask, &rs.Ask}, {deny, &rs.Deny}} {
		for _, s := range l.in {
			r, err := permission.Parse(s)
			if err != nil {
				t.Fatal(err)
			}
			*l.out = append(*l.out, r)
		}
	}
	return rs
}

func approveTree(t *testing.T, root, mid, leaf permission.Rules) (*harness, *config.Agent, string) {
	r, m, l := agentDef("root", "ROOT", "mid"), agentDef("mid", "MID", "leaf"), agentDef("leaf", "LEAF")
	r.Permissions, m.Permissions, l.Permissions = root, mid, leaf
	l.Tools = []string{"terminal"}
	h := newHarness(t, approveScript, r, m, l)
	dir := t.TempDir()
	return h, r, dir
}

func runIn(h *harness, a *config.Agent, dir string) *delegate.Envelope {
	return h.engine.Run(context.Background(), delegate.RunRequest{Agent: a, Task: "go", Workdir: dir})
}

// Rules only narrow: the leaf's own allow (and a mode that never asks)
// cannot undo a deny two levels up, nor an ask one level up; its own deny
// holds under ancestors that allow everything.
func TestPermissionsNarrowDownTheTree(t *testing.T) {
	h, root, dir := approveTree(t,
		rules(t, nil, nil, []string{"terminal(touch one.txt)"}, ""),
		rules(t, nil, []string{"terminal(touch two.txt)"}, nil, ""),
		rules(t, []string{"terminal"}, nil, nil, permission.ModeBypass))
	env := runIn(h, root, dir)
	if !env.OK() {
		t.Fatalf("run: %s %s", env.Status, env.Error)
	}
	want := `Error: Permission denied: terminal "touch one.txt" is refused by the rule terminal(touch one.txt). | ` +
		`Error: Permission denied: terminal "touch two.txt" needs a person's approval (the rule terminal(touch two.txt) asks for it), and nobody is there to give it; it did not run. Do without it, or finish and say what you needed.`
	if env.Output != want {
		t.Errorf("output:\n%s\nwant:\n%s", env.Output, want)
	}
	for _, f := range []string{"one.txt", "two.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s was made", f)
		}
	}

	h, root, dir = approveTree(t, permission.Rules{}, permission.Rules{}, rules(t, nil, nil, []string{"terminal(touch two.txt)"}, ""))
	if env := runIn(h, root, dir); !strings.Contains(env.Output, "two.txt\" is refused") || strings.Contains(env.Output, "one.txt\" is refused") {
		t.Errorf("the leaf's own deny: %s", env.Output)
	}
	if _, err := os.Stat(filepath.Join(dir, "one.txt")); err != nil {
		t.Errorf("one.txt: %v", err)
	}
}

// person answers requests by a function and keeps what it was asked.
type person struct {
	mu     sync.Mutex
	asked  []*approval.Request
	answer func(*approval.Request) (approval.Answer, error)
}

func (p *person) Ask(ctx context.Context, r *approval.Request) (approval.Answer, error) {
	p.mu.Lock()
	p.asked = append(p.asked, r)
	p.mu.Unlock()
	return p.answer(r)
}

// A request from a grandchild reaches the person with its path and exact
// call; "allow for the rest of the run" answers the next call like it
// without asking, and both answers are events: who answered, and how.
func TestApprovalFromAnyDepth(t *testing.T) {
	h, root, dir := approveTree(t, rules(t, nil, []string{"terminal(touch:*)"}, nil, ""), permission.Rules{}, permission.Rules{})
	h.engine.Options.Concurrency = 1 // the two calls one after the other: the second finds the first's answer
	p := &person{answer: func(*approval.Request) (approval.Answer, error) {
		return approval.Answer{Allow: true, Always: true}, nil
	}}
	h.engine.Person = p
	env := runIn(h, root, dir)
	if !env.OK() {
		t.Fatalf("run: %s %s", env.Status, env.Error)
	}
	if len(p.asked) != 1 {
		t.Fatalf("asked %d times, want once", len(p.asked))
	}
	r := p.asked[0]
	if r.PathText() != "root › mid › leaf" || r.Tool != "terminal" || r.Detail != "$ touch one.txt" && r.Detail != "$ touch two.txt" ||
		strings.Join(r.Always, ",") != "terminal(touch:*)" || r.Why != "the rule terminal(touch:*)" || r.ID == "" {
		t.Errorf("request %+v", r)
	}
	for _, f := range []string{"one.txt", "two.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	answers := h.eventsOf(delegate.EventApprovalAnswer)
	if len(answers) != 2 || len(h.eventsOf(delegate.EventApprovalRequest)) != 2 {
		t.Fatalf("%d answers", len(answers))
	}
	by := []string{answers[0].Answer.By, answers[1].Answer.By}
	if !(by[0] == approval.ByPerson && by[1] == approval.ByRule || by[1] == approval.ByPerson && by[0] == approval.ByRule) {
		t.Errorf("answered by %v", by)
	}
}

// A deny with a reason reaches the model; a person who cannot be asked is
// nobody.
func TestApprovalDenied(t *testing.T) {
	h, root, dir := approveTree(t, permission.Rules{}, permission.Rules{Mode: permission.ModeDefault}, permission.Rules{})
	h.engine.Person = &person{answer: func(r *approval.Request) (approval.Answer, error) {
		if strings.Contains(r.Detail, "one") {
			return approval.Answer{Text: "not that one"}, nil
		}
		return approval.Answer{}, approval.ErrNobody
	}}
	env := runIn(h, root, dir)
	want := `Error: Permission denied: the person who runs this tree refused terminal "touch one.txt", saying: not that one | ` +
		`Error: Permission denied: terminal "touch two.txt" needs a person's approval (the permission mode default asks for it), and nobody is there to give it; it did not run. Do without it, or finish and say what you needed.`
	if env.Output != want {
		t.Errorf("output:\n%s\nwant:\n%s", env.Output, want)
	}
}

// A subagent never gets ask_user (xzatoma's subagents work on their own):
// the caller's ask_user is not among its tools, naming it is unknown, and
// a call is refused by the policy.
func TestSubagentHasNoAskUser(t *testing.T) {
	script := `
rules:
  - match: {system: "^ROOT", last_role: user, last: "^named$"}
    reply: {tool_calls: [{name: subagent, arguments: {label: s, task_prompt: "x", allowed_tools: ["ask_user"]}}]}
  - match: {system: "^ROOT", last_role: user}
    reply: {tool_calls: [{name: subagent, arguments: {label: s, task_prompt: "x"}}]}
  - match: {system: "^ROOT", last_role: tool}
    reply: {text: "{{ index .ToolResults 0 }}"}
  - match: {last_role: user, last: "^x$"}
    reply: {tool_calls: [{name: ask_user, arguments: {question: "?"}}]}
  - match: {last_role: tool}
    reply: {text: "{{ index .ToolResults 0 }}"}
  - match: {last: "Summarize"}
    reply: {text: "summary"}
`
	root := agentDef("root", "ROOT")
	root.Tools = []string{"ask_user", "subagent", "read_file"}
	h := newHarness(t, script, root)
	h.engine.Person = &person{answer: func(*approval.Request) (approval.Answer, error) {
		t.Error("the subagent reached the person")
		return approval.Answer{}, nil
	}}
	env := h.run(root, "go")
	if !env.OK() {
		t.Fatalf("%s %s", env.Status, env.Error)
	}
	reqs := h.prov.requests("You are a sub-agent")
	if len(reqs) == 0 || strings.Contains(strings.Join(toolNames(reqs[0]), ","), "ask_user") {
		t.Fatalf("the subagent was offered %v", toolNames(reqs[0]))
	}
	res := toolResults(reqs[1])
	if len(res) != 1 || res[0].Content != "Error: tool 'ask_user' is not available to subagents: a subagent works on its own, and nobody answers its questions" {
		t.Errorf("result %v", res)
	}
	if env := h.run(root, "named"); !strings.Contains(env.Output, "Unknown tool in allowed_tools: ask_user") {
		t.Errorf("naming ask_user: %s", env.Output)
	}
}

// An approval a rule requires inside a subagent still goes to the person:
// it is deputy asking, not the model (the spec's README).
func TestApprovalInsideSubagent(t *testing.T) {
	script := `
rules:
  - match: {system: "^ROOT", last_role: user}
    reply: {tool_calls: [{name: subagent, arguments: {label: maker, task_prompt: "make it"}}]}
  - match: {system: "^ROOT", last_role: tool}
    reply: {text: "{{ index .ToolResults 0 }}"}
  - match: {last_role: user, last: "^make it$"}
    reply: {tool_calls: [{name: terminal, arguments: {command: "touch made.txt"}}]}
  - match: {last: "Summarize"}
    reply: {text: "summary"}
  - match: {last_role: tool}
    reply: {text: "{{ index .ToolResults 0 }}"}
`
	root := agentDef("root", "ROOT")
	root.Tools = []string{"terminal", "subagent"}
	root.Permissions = rules(t, nil, []string{"terminal(touch:*)"}, nil, "")
	h := newHarness(t, script, root)
	p := &person{answer: func(*approval.Request) (approval.Answer, error) { return approval.Answer{Allow: true}, nil }}
	h.engine.Person = p
	dir := t.TempDir()
	env := h.engine.Run(context.Background(), delegate.RunRequest{Agent: root, Task: "go", Workdir: dir})
	if !env.OK() {
		t.Fatalf("%s %s", env.Status, env.Error)
	}
	if len(p.asked) != 1 || p.asked[0].PathText() != "root › maker" || p.asked[0].Detail != "$ touch made.txt" {
		t.Fatalf("asked %+v", p.asked)
	}
	if _, err := os.Stat(filepath.Join(dir, "made.txt")); err != nil {
		t.Error(err)
	}
}

// "Allow for the rest of the run" answers the requests like it that are
// already waiting, not only the ones to come: the leaf's two calls ask at
// once, the person answers the first with a, and the second, which the
// rule a allowed covers, runs without waiting for an answer of its own.
// (Before, it stayed queued and the person had to answer it too; here it
// would have waited until approval_timeout and been denied.)
func TestAllowForTheRunAnswersWaitingRequests(t *testing.T) {
	h, root, dir := approveTree(t, rules(t, nil, []string{"terminal(touch:*)"}, nil, ""), permission.Rules{}, permission.Rules{})
	h.engine.ApprovalTimeout = 10 * time.Second // bounds the test when the second request is not answered
	both := make(chan struct{})
	var mu sync.Mutex
	var asked []string
	p := &person{}
	p.answer = func(r *approval.Request) (approval.Answer, error) {
		mu.Lock()
		asked = append(asked, r.Detail)
		first := len(asked) == 1
		if len(asked) == 2 {
			close(both)
		}
		mu.Unlock()
		if !first {
			return approval.Answer{}, errWaitForCancel
		}
		select {
		case <-both:
		case <-time.After(10 * time.Second):
			t.Error("the second request never came: the calls did not ask at the same time")
		}
		return approval.Answer{Allow: true, Always: true}, nil
	}
	h.engine.Person = waitingPerson{p}
	env := runIn(h, root, dir)
	if !env.OK() {
		t.Fatalf("run: %s %s", env.Status, env.Error)
	}
	for _, f := range []string{"one.txt", "two.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v (output %s)", f, err, env.Output)
		}
	}
	var by []string
	for _, ev := range h.eventsOf(delegate.EventApprovalAnswer) {
		by = append(by, ev.Answer.By)
	}
	sort.Strings(by)
	if strings.Join(by, ",") != "person,rule" {
		t.Errorf("answered by %v, want one person and one rule", by)
	}
}

// errWaitForCancel tells waitingPerson to wait until the request's wait
// ends (its context), as a person who has not answered yet.
var errWaitForCancel = errors.New("wait")

type waitingPerson struct{ *person }

func (p waitingPerson) Ask(ctx context.Context, r *approval.Request) (approval.Answer, error) {
	a, err := p.person.Ask(ctx, r)
	if err == errWaitForCancel {
		<-ctx.Done()
		return approval.Answer{}, ctx.Err()
	}
	return a, err
}

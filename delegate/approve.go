package delegate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/deputyhq/deputy/approval"
	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/ledger"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/permission"
)

// Permissions and people. Every tool call that passes the policy is
// decided by the permission rules of its run's chain (the run's settings,
// then each agent from the root down: rules only narrow). A call they
// allow runs; one they deny is refused with a message the model reads; one
// they ask about waits for the person who runs the root (Engine.Person),
// as does ask_user from any depth. With nobody there, an ask is a deny at
// once. Time spent waiting stops the clocks of the run and its ancestors.

// permsFor is the permission chain of a run of agent a (nil for a run
// without an agent of its own, which keeps its caller's) below parent.
func (e *Engine) permsFor(parent *Scope, a *config.Agent) permission.Chain {
	var ch permission.Chain
	if parent != nil {
		ch = parent.perms
	} else {
		ch = ch.With(&e.Permissions)
	}
	if a != nil {
		ch = ch.With(&a.Permissions)
	}
	return ch
}

// runContextOf is the context run s runs in: one whose clock can stop
// while s waits for a person, when someone could be asked and s has a
// deadline.
func (e *Engine) runContextOf(ctx context.Context, deadline time.Time, s *Scope) (context.Context, context.CancelFunc) {
	if e.Person == nil || deadline.IsZero() {
		return runContext(ctx, deadline)
	}
	c, cancel := newClock(ctx, deadline)
	s.clock = c
	return c, cancel
}

// permit decides call by s's permission chain: nil lets it run, an error
// is the refusal the model reads.
func (e *Engine) permit(ctx context.Context, s *Scope, call llm.ToolCall) error {
	if len(s.perms) == 0 {
		return nil
	}
	c := permission.Call{Tool: call.Name, Args: call.Arguments, Workdir: s.Workdir}
	v := s.perms.Decide(c)
	switch v.Decision {
	case permission.Allow:
		return nil
	case permission.Deny:
		return &PolicyError{Tool: call.Name, Msg: fmt.Sprintf("Permission denied: %s is refused by %s.", callText(call), v.Why())}
	}
	ans := e.approve(ctx, s, call, c, v)
	if ans.Allow {
		return nil
	}
	return &PolicyError{Tool: call.Name, Msg: refusal(call, v, ans, e.approvalTimeout())}
}

// callText names a call in a refusal: the tool and what it touches.
func callText(call llm.ToolCall) string {
	sub := permission.Subject(permission.Call{Tool: call.Name, Args: call.Arguments})
	if sub == "" {
		return "the call of " + call.Name
	}
	return fmt.Sprintf("%s %q", call.Name, sub)
}

// refusal is what the model reads of an approval that did not come.
func refusal(call llm.ToolCall, v permission.Verdict, ans approval.Answer, timeout time.Duration) string {
	what := callText(call)
	switch ans.By {
	case approval.ByNobody:
		return fmt.Sprintf("Permission denied: %s needs a person's approval (%s asks for it), and nobody is there to give it; it did not run. Do without it, or finish and say what you needed.", what, v.Why())
	case approval.ByTimeout:
		return fmt.Sprintf("Permission denied: %s waited for a person's approval (%s asks for it), and no answer came within %s; it did not run.", what, v.Why(), timeout)
	case approval.ByCancel:
		return fmt.Sprintf("Permission denied: %s was waiting for a person's approval when the run was stopped; it did not run.", what)
	}
	if strings.TrimSpace(ans.Text) != "" {
		return fmt.Sprintf("Permission denied: the person who runs this tree refused %s, saying: %s", what, strings.TrimSpace(ans.Text))
	}
	return fmt.Sprintf("Permission denied: the person who runs this tree refused %s; it did not run.", what)
}

// approve asks the person whether call may run, unless an earlier answer
// of the tree already says: "allow for the rest of the run", or the answer
// given before the tree was resumed.
func (e *Engine) approve(ctx context.Context, s *Scope, call llm.ToolCall, c permission.Call, v permission.Verdict) approval.Answer {
	asks := s.tree.approvals()
	req := &approval.Request{Kind: approval.KindApproval, ToolCallID: call.ID, Tool: call.Name, Arguments: jsonOrString(call.Arguments),
		Detail: approval.Describe(call.Name, call.Arguments), Why: v.Why()}
	rules, patterned := permission.Suggest(c)
	for _, r := range rules {
		req.Always = append(req.Always, r.String())
	}
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ans, ok, done := asks.knownOrWait(s.RunID, call, c, cancel)
	if ok {
		e.recordKnown(s, req, ans)
		return ans
	}
	ans = e.ask(wctx, s, req)
	done()
	if ans.Allow && ans.Always {
		asks.allowAlways(call, rules, patterned)
	}
	return ans
}

// errAllowedForTheRun ends the wait of a request that a person's "allow
// for the rest of the run", given to another request meanwhile, covers.
var errAllowedForTheRun = errors.New("allowed for the rest of the run")

// recordKnown emits a request that an earlier answer of the tree answered.
func (e *Engine) recordKnown(s *Scope, req *approval.Request, ans approval.Answer) {
	e.fill(s, req)
	ans.Time = req.Time
	e.emitRequest(s, req)
	e.emitAnswer(s, req, ans)
}

// fill gives a request its id, run and path.
func (e *Engine) fill(s *Scope, req *approval.Request) {
	req.ID, req.RootID, req.RunID, req.Path, req.Time = ledger.NewID(), s.RootID, s.RunID, s.path(), time.Now()
}

// ask puts req to the person, stopping the clocks of s and its ancestors
// while it waits, and returns the answer with who gave it: the person;
// nobody (no Person, or it could not ask); the timeout; the run ending; or
// a rule, when an allow for the rest of the run given meanwhile covers it.
func (e *Engine) ask(ctx context.Context, s *Scope, req *approval.Request) approval.Answer {
	e.fill(s, req)
	e.emitRequest(s, req)
	var ans approval.Answer
	if e.Person == nil {
		ans.By = approval.ByNobody
	} else {
		resume := s.pauseClocks()
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.approvalTimeout())
		stop := context.AfterFunc(ctx, cancel) // the run ending ends the wait
		a, err := e.Person.Ask(actx, req)
		stop()
		cancel()
		resume()
		switch {
		case err == nil:
			ans, ans.By = a, approval.ByPerson
		case errors.Is(err, approval.ErrNobody):
			ans.By = approval.ByNobody
		case errors.Is(context.Cause(ctx), errAllowedForTheRun):
			ans = approval.Answer{Allow: true, By: approval.ByRule}
		case ctx.Err() != nil:
			ans.By = approval.ByCancel
		case errors.Is(actx.Err(), context.DeadlineExceeded):
			ans.By = approval.ByTimeout
		default:
			// The person could not be asked (a client that failed to
			// show the request): nobody answered.
			ans.By = approval.ByNobody
			if e.Logger != nil {
				e.Logger.Warn("asking the person who runs the root failed; the request is refused", "tool", req.Tool, "err", err)
			}
		}
	}
	if ans.By != approval.ByPerson && ans.By != approval.ByRule {
		ans.Allow, ans.Always, ans.Text = false, false, ""
	}
	ans.Time = time.Now()
	e.emitAnswer(s, req, ans)
	return ans
}

func (e *Engine) approvalTimeout() time.Duration {
	if e.ApprovalTimeout > 0 {
		return e.ApprovalTimeout
	}
	return config.DefaultApprovalTimeout
}

func (e *Engine) emitRequest(s *Scope, req *approval.Request) {
	t := EventApprovalRequest
	if req.Kind == approval.KindQuestion {
		t = EventQuestion
	}
	ev := scopeEvent(t, s)
	ev.Request, ev.Tool, ev.Time = req, req.Tool, req.Time
	e.emit(&ev)
}

func (e *Engine) emitAnswer(s *Scope, req *approval.Request, ans approval.Answer) {
	t := EventApprovalAnswer
	if req.Kind == approval.KindQuestion {
		t = EventQuestionAnswer
	}
	ev := scopeEvent(t, s)
	ev.Request, ev.Answer, ev.Tool, ev.Time = req, &ans, req.Tool, ans.Time
	e.emit(&ev)
}

// path is the labels of the runs from the root down to s.
func (s *Scope) path() []string {
	var p []string
	for r := s; r != nil; r = r.parent {
		p = append(p, r.Label)
	}
	for i, j := 0, len(p)-1; i < j; i, j = i+1, j-1 {
		p[i], p[j] = p[j], p[i]
	}
	return p
}

// pauseClocks stops the clocks of s and its ancestors until the returned
// function is called.
func (s *Scope) pauseClocks() (resume func()) {
	var paused []*clock
	for r := s; r != nil; r = r.parent {
		if r.clock != nil {
			r.clock.pause()
			paused = append(paused, r.clock)
		}
	}
	return func() {
		for _, c := range paused {
			c.resume()
		}
	}
}

// treeAsks is what a tree keeps of its answers: the rules and the exact
// calls a person allowed for the rest of the run, and, for a resumed tree,
// the answers given before, by tool call; and the requests waiting for an
// answer, which such an allow ends too.
type treeAsks struct {
	mu      sync.Mutex
	always  []permission.Rule
	exact   map[string]bool
	kept    map[string]keptAnswer
	waiting map[*waitingCall]bool
}

// keptAnswer is an answer given before a resume, and the call it answered
// (exactKey): a call id alone does not name a call, as a server may give
// the same id to the calls of each of its answers.
type keptAnswer struct {
	ans  approval.Answer
	call string
}

// waitingCall is a call whose request waits for a person; cancel ends the
// wait.
type waitingCall struct {
	call   llm.ToolCall
	c      permission.Call
	cancel context.CancelCauseFunc
}

// approvals is the tree's answers (a run outside a tree keeps none).
func (t *Tree) approvals() *treeAsks {
	if t == nil || t.asks == nil {
		return &treeAsks{}
	}
	return t.asks
}

// Approvals keeps a person's answers that allow calls for the rest of a
// run ("a" in the live view). A front end that gives the same Approvals
// to several runs (RunRequest.Approvals) keeps those answers for all of
// them: chat, each of whose messages is a run, keeps them for the
// session. The zero value is ready to use.
type Approvals struct{ asks treeAsks }

// knownOrWait answers call from what the tree already has; when it
// cannot, the call is waiting, until done, and an allow for the rest of
// the run that covers it meanwhile ends its wait by cancel.
func (a *treeAsks) knownOrWait(runID string, call llm.ToolCall, c permission.Call, cancel context.CancelCauseFunc) (ans approval.Answer, ok bool, done func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if k, ok := a.kept[runID+"/"+call.ID]; ok && call.ID != "" && k.call == exactKey(call) {
		// It answers this call once: the call runs again on resume.
		delete(a.kept, runID+"/"+call.ID)
		ans := k.ans
		ans.By = approval.ByRule
		return ans, true, nil
	}
	if a.allows(call, c) {
		return approval.Answer{Allow: true, By: approval.ByRule}, true, nil
	}
	w := &waitingCall{call: call, c: c, cancel: cancel}
	if a.waiting == nil {
		a.waiting = map[*waitingCall]bool{}
	}
	a.waiting[w] = true
	return approval.Answer{}, false, func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		delete(a.waiting, w)
	}
}

// allows reports whether the answers for the rest of the run allow call.
func (a *treeAsks) allows(call llm.ToolCall, c permission.Call) bool {
	return permission.Allowed(a.always, c) != nil || a.exact[exactKey(call)]
}

// allowAlways allows calls like call for the rest of the run (by rules
// when patterned, else by its exact arguments), and ends the waits of the
// requests this allows.
func (a *treeAsks) allowAlways(call llm.ToolCall, rules []permission.Rule, patterned bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if patterned {
		a.always = append(a.always, rules...)
	} else {
		if a.exact == nil {
			a.exact = map[string]bool{}
		}
		a.exact[exactKey(call)] = true
	}
	for w := range a.waiting {
		if a.allows(w.call, w.c) {
			w.cancel(errAllowedForTheRun)
		}
	}
}

// keep remembers an answer given before the tree was resumed, to call
// (its id, tool and arguments) of run runID.
func (a *treeAsks) keep(runID string, call llm.ToolCall, ans approval.Answer) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.kept == nil {
		a.kept = map[string]keptAnswer{}
	}
	a.kept[runID+"/"+call.ID] = keptAnswer{ans: ans, call: exactKey(call)}
}

func exactKey(call llm.ToolCall) string {
	var v any
	args := string(call.Arguments)
	if json.Unmarshal(call.Arguments, &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			args = string(b)
		}
	}
	return call.Name + "\x00" + args
}

// AskUser is ask_user's way to the person who runs the root of the run ctx
// belongs to, from any depth (builtin.Options.AskUser). It returns
// approval.ErrNobody when nobody is there, or did not answer.
func AskUser(ctx context.Context, question string) (string, error) {
	s := ScopeFrom(ctx)
	if s == nil || s.tree == nil || s.tree.engine == nil {
		return "", fmt.Errorf("%w; decide without the answer, or finish and say what you need to know", approval.ErrNobody)
	}
	req := &approval.Request{Kind: approval.KindQuestion, Question: question, Tool: ToolAskUser}
	if c := toolCallID(ctx); c != "" {
		req.ToolCallID = c
	}
	ans := s.tree.engine.ask(ctx, s, req)
	switch {
	case ans.By == approval.ByPerson && ans.Allow:
		return ans.Text, nil
	case ans.By == approval.ByPerson:
		return "", errors.New("the person declined to answer; decide without the answer, or finish and say what you need to know")
	case ans.By == approval.ByTimeout:
		return "", fmt.Errorf("no answer came within %s; decide without it, or finish and say what you need to know", s.tree.engine.approvalTimeout())
	case ans.By == approval.ByCancel:
		return "", context.Canceled
	}
	return "", fmt.Errorf("%w; decide without the answer, or finish and say what you need to know", approval.ErrNobody)
}

// approvalFields are the ledger's fields of an approval or question event:
// the request, and on an answer event the answer (who gave it, and when).
func approvalFields(ev *Event) []byte {
	f := map[string]any{"depth": ev.Depth, "kind": ev.Kind, "label": ev.Label, "request": ev.Request}
	if ev.Answer != nil {
		f["answer"] = ev.Answer
	}
	b, err := json.Marshal(f)
	if err != nil {
		return []byte("{}") // a request is plain data; this does not happen
	}
	return b
}

// jsonOrString is raw when it is JSON, else its text as a JSON string: a
// model's arguments that are not JSON still show, and still record.
func jsonOrString(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || json.Valid(raw) {
		return raw
	}
	b, _ := json.Marshal(strings.ToValidUTF8(string(raw), "\uFFFD"))
	return b
}

// eventReader is a ledger that reads a tree's events back (*store.Store).
type eventReader interface {
	TreeEvents(ctx context.Context, rootID string) ([]ledger.Event, error)
}

// keepAnswers gives a resumed tree the answers a person gave before it was
// interrupted: a call whose approval was answered but whose result was not
// committed is not asked about again, and what was allowed for the rest
// of the run stays allowed. A request nobody answered (it was pending, it
// timed out, nobody was there) is asked again.
func (e *Engine) keepAnswers(ctx context.Context, l ledger.Recorder, t *Tree) {
	er, ok := l.(eventReader)
	if !ok {
		return
	}
	evs, err := er.TreeEvents(ctx, t.RootID)
	if err != nil {
		if e.Logger != nil {
			e.Logger.Warn("resume: reading the tree's answers; what was pending is asked again", "err", err)
		}
		return
	}
	for _, ev := range evs {
		if EventType(ev.Type) != EventApprovalAnswer {
			continue
		}
		var f struct {
			Request *approval.Request `json:"request"`
			Answer  *approval.Answer  `json:"answer"`
		}
		if json.Unmarshal(ev.Fields, &f) != nil || f.Request == nil || f.Answer == nil || f.Answer.By != approval.ByPerson {
			continue
		}
		if f.Request.ToolCallID != "" {
			t.asks.keep(ev.RunID, llm.ToolCall{ID: f.Request.ToolCallID, Name: f.Request.Tool, Arguments: f.Request.Arguments}, *f.Answer)
		}
		if f.Answer.Allow && f.Answer.Always {
			for _, text := range f.Request.Always {
				if r, err := permission.Parse(text); err == nil {
					t.asks.always = append(t.asks.always, r)
				}
			}
		}
	}
}

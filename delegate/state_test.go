package delegate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/ledger"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest"
)

// thinking and signature are what the stateful provider's summaries of
// thinking and states carry, never to be seen in a result.
const (
	thinking  = llmtest.StatefulThinking
	signature = llmtest.StatefulSignature
)

// The lead asks a worker (call_agent), whose own tool loop lists a
// directory, and a subagent; then it answers with their results.
const stateScript = `
rules:
  - name: lead-first
    match: {system: "^LEAD", last_role: user}
    reply:
      tool_calls:
        - {name: call_agent, arguments: {agent: worker, task: "look around"}}
        - {name: subagent, arguments: {label: helper, task_prompt: "help out"}}
  - name: lead-final
    match: {system: "^LEAD", last_role: tool}
    reply: {text: "{{ join .ToolResults \" | \" }}"}
  - name: worker-lists
    match: {system: "^WORKER", last_role: user}
    reply: {tool_calls: [{name: list_directory, arguments: {path: "."}}]}
  - name: worker-answers
    match: {system: "^WORKER", last_role: tool}
    reply: {text: "worker saw the directory"}
  - name: helper
    match: {system: "^You are a sub-agent"}
    reply: {text: "helper did {{ .LastUser }}"}
`

func stateAgents() (*config.Agent, *config.Agent) {
	lead := agentDef("lead", "LEAD", "worker")
	lead.Tools = []string{"subagent"}
	worker := agentDef("worker", "WORKER")
	worker.Tools = []string{"list_directory"}
	return lead, worker
}

// A provider's state comes back with every later request of its
// conversation, at every level of a tree, and is recorded with its
// message; the summaries of the model's thinking are recorded too, and
// neither reaches a result a parent or a user reads.
func TestProviderStateGoesBackAndStaysOutOfResults(t *testing.T) {
	ctx := context.Background()
	st := openLedger(t)
	lead, worker := stateAgents()
	h := newHarness(t, stateScript, lead, worker)
	prov := llmtest.NewStateful(h.prov)
	h.engine.Models = models{prov}
	h.engine.Ledger = st
	env := h.engine.Run(ctx, delegate.RunRequest{Agent: lead, Task: "go", Workdir: t.TempDir()})
	if !env.OK() {
		t.Fatalf("run: %s %s", env.Status, env.Error)
	}
	if bad := prov.Problems(); len(bad) > 0 {
		t.Errorf("state not sent back:\n%s", strings.Join(bad, "\n"))
	}
	if len(h.prov.requests("WORKER")) != 2 || len(h.prov.requests("LEAD")) != 2 {
		t.Fatalf("requests: worker %d, lead %d; want 2 each", len(h.prov.requests("WORKER")), len(h.prov.requests("LEAD")))
	}

	// The lead's tool results are its children's answers only.
	results := toolResults(h.prov.requests("LEAD")[1])
	for _, r := range results {
		if strings.Contains(r.Content, thinking) || strings.Contains(r.Content, signature) {
			t.Errorf("a child's thinking or state reached its parent's tool result: %s", r.Content)
		}
	}
	if !strings.Contains(env.Output, "worker saw the directory") || !strings.Contains(env.Output, "helper did") {
		t.Errorf("output %q lacks the children's answers", env.Output)
	}
	whole, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(whole, []byte(thinking)) || bytes.Contains(whole, []byte(signature)) {
		t.Errorf("the envelope's JSON carries thinking or state:\n%s", whole)
	}

	// Every answer is recorded with its state and its thinking; nothing
	// else is.
	tree, err := st.Tree(ctx, env.RunID)
	if err != nil || len(tree) != 3 {
		t.Fatalf("tree: %d runs, %v", len(tree), err)
	}
	for _, r := range tree {
		if strings.Contains(r.Output, thinking) || strings.Contains(r.Output, signature) {
			t.Errorf("run %s (%s) recorded output %q", r.ID, r.Agent, r.Output)
		}
		ms, err := st.Messages(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		answers := 0
		for _, m := range ms {
			if m.Role != string(llm.RoleAssistant) {
				if m.State != nil || m.Reasoning != "" {
					t.Errorf("run %s: a %s message recorded state %s or thinking %q", r.Agent, m.Role, m.State, m.Reasoning)
				}
				continue
			}
			answers++
			var s llm.State
			if err := json.Unmarshal(m.State, &s); err != nil || s.Format != llmtest.StatefulFormat || !bytes.Contains(s.Data, []byte(signature)) {
				t.Errorf("run %s message %d: state %s (%v)", r.Agent, m.Seq, m.State, err)
			}
			if !strings.HasPrefix(m.Reasoning, thinking) {
				t.Errorf("run %s message %d: thinking %q", r.Agent, m.Seq, m.Reasoning)
			}
		}
		if answers == 0 && r.Kind != delegate.KindSubagent { // a subagent's conversation is kept on request
			t.Errorf("run %s recorded no answer", r.Agent)
		}
	}
}

// A run resumed from the ledger sends back the state of the turns it
// recorded before it was interrupted.
func TestResumedRunSendsBackRecordedState(t *testing.T) {
	ctx := context.Background()
	st := openLedger(t)
	lead, worker := stateAgents()
	h := newHarness(t, stateScript, lead, worker)
	prov := llmtest.NewStateful(h.prov)
	stop := &cancelOnce{Provider: prov, calls: map[string]int{}}
	h.engine.Models = models{stop}
	h.engine.Ledger = st

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop.cancel = cancel
	req := delegate.RunRequest{Agent: lead, Task: "go", Workdir: t.TempDir()}
	first := h.engine.Run(runCtx, req)
	if first.Status != delegate.StatusCancelled {
		t.Fatalf("first attempt: %s", first.Status)
	}
	env := h.engine.Resume(ctx, delegate.ResumeRequest{RunID: first.RunID, Agent: lead, RetryFailed: true})
	if !env.OK() {
		t.Fatalf("resume: %s %s", env.Status, env.Error)
	}
	leads := h.prov.requests("LEAD")
	if len(leads) != 2 {
		t.Fatalf("%d lead requests reached the model; want the first, then the resumed one", len(leads))
	}
	if m := leads[1].Messages[1]; m.Role != llm.RoleAssistant || m.State == nil || m.Reasoning == "" {
		t.Errorf("the resumed lead's first answer came back from the ledger as %+v", m)
	}
	if bad := prov.Problems(); len(bad) > 0 {
		t.Errorf("state not sent back after the resume:\n%s", strings.Join(bad, "\n"))
	}
	if strings.Contains(env.Output, thinking) {
		t.Errorf("resumed output %q carries thinking", env.Output)
	}
}

// A session replays each answer with the provider state of the turn that
// gave it (std::slop's persistent session_id).
func TestSessionReplaysAnswerState(t *testing.T) {
	root := queryRoot()
	h := newHarness(t, queryScript, root)
	h.engine.Specializations = specs()
	prov := llmtest.NewStateful(h.prov)
	h.engine.Models = models{prov}
	h.engine.Ledger = openLedger(t)
	for _, q := range []string{"q1", "q2"} {
		if env := h.run(root, q); !env.OK() || strings.Contains(env.Output, thinking) {
			t.Fatalf("%s: %s %q %q", q, env.Status, env.Output, env.Error)
		}
	}
	subs := h.prov.requests("You are answering")
	if len(subs) != 2 || len(subs[1].Messages) != 3 || subs[1].Messages[1].State == nil {
		t.Fatalf("the second subquery's history: %+v", subs[len(subs)-1].Messages)
	}
	if bad := prov.Problems(); len(bad) > 0 {
		t.Errorf("state not replayed:\n%s", strings.Join(bad, "\n"))
	}
}

// An answer whose text is not what the model said (cut to a size) goes
// into a session without the state that would contradict it.
func TestExchangeKeepsStateOfTheAnswerOnly(t *testing.T) {
	state := &llm.State{Format: llm.StateGemini, Data: json.RawMessage(`[{"text":"long answer"}]`)}
	env := &delegate.Envelope{RunID: "r", Output: "long answer",
		Messages: []llm.Message{llm.UserMessage("q"), {Role: llm.RoleAssistant, Content: "long answer", State: state, Reasoning: "t"}}}
	ex := env.Exchange("q")
	if ex.Query != "q" || ex.Answer != "long answer" || string(ex.AnswerState) != `{"format":"gemini","data":[{"text":"long answer"}]}` {
		t.Errorf("Exchange = %+v (state %s)", ex, ex.AnswerState)
	}
	hist := delegate.SessionHistory([]ledger.Exchange{ex})
	if len(hist) != 2 || hist[1].State == nil || hist[1].State.Format != llm.StateGemini || hist[1].Reasoning != "" {
		t.Errorf("SessionHistory = %+v", hist)
	}
	env.Output = "long" // cut
	if ex := env.Exchange("q"); ex.AnswerState != nil {
		t.Errorf("a cut answer kept its state: %s", ex.AnswerState)
	}
	ex.AnswerState = json.RawMessage(`"not a state"`)
	if hist := delegate.SessionHistory([]ledger.Exchange{ex}); hist[1].State != nil || hist[1].Content != "long answer" {
		t.Errorf("an unreadable state: %+v", hist)
	}
}

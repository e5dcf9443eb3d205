package delegate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/ledger"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
)

// llm_query and the [llm_tool_<name>] specializations
// (llm-tool-specializations.md): a subquery is a leaf child at depth 1 with
// the caller's tools minus every subquery tool and ask_user, none of the
// caller's history, optionally a persistent session of its own.

// DefaultSessionID is what an empty session id normalises to. Plain
// llm_query keeps no session at all (its calls are independent of each
// other); every specialization's session, "default" included, persists in
// the ledger.
const DefaultSessionID = "default"

// QueryOptions are the options of one subquery, as a specialization (or
// plain llm_query) hands them to the engine.
type QueryOptions struct {
	SessionID string
	// Skill names the skill applied; nil means none, "" is an error.
	Skill *string
	// ContextWindow is how many earlier exchanges of the session are
	// replayed; nil or 0 means all.
	ContextWindow *int
	Scope         Kind
	Depth         int
}

// NormalizeQueryOptions checks and normalises options in one place: an
// empty session becomes the default session, an empty skill or a negative
// window is an error, and scope/depth must be root/0 or subquery/1.
func NormalizeQueryOptions(o QueryOptions) (QueryOptions, error) {
	o.SessionID = strings.TrimSpace(o.SessionID)
	if o.SessionID == "" {
		o.SessionID = DefaultSessionID
	}
	if o.Skill != nil && strings.TrimSpace(*o.Skill) == "" {
		return o, errors.New("query options: skill must not be empty")
	}
	if o.ContextWindow != nil && *o.ContextWindow < 0 {
		return o, fmt.Errorf("query options: context_window must be a non-negative integer, got %d", *o.ContextWindow)
	}
	if o.ContextWindow == nil {
		zero := 0
		o.ContextWindow = &zero
	}
	switch {
	case o.Scope == KindRoot && o.Depth == 0, o.Scope == KindSubquery && o.Depth == 1:
	case o.Scope == KindSubquery:
		return o, errors.New(subqueryDepthViolation(ToolLLMQuery).Error())
	default:
		return o, fmt.Errorf("query options: scope %q with depth %d is not valid (root/0 or subquery/1)", o.Scope, o.Depth)
	}
	return o, nil
}

const llmQueryDescription = `Run a focused subquery: a separate model call (with your tools, minus delegation tools) that answers one self-contained question and returns only its final answer. It sees none of this conversation, so put everything it needs in the query.`

var querySchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "query": {"type": "string", "minLength": 1, "description": "The self-contained question or task for the subquery"}
  },
  "required": ["query"],
  "additionalProperties": false
}`)

// queryArgsSchema checks a call's arguments against querySchema, with the
// messages every deputy tool gives (tool.Schema).
var queryArgsSchema = sync.OnceValue(func() *tool.Schema {
	s, err := tool.ParseSchema(querySchema)
	if err != nil {
		panic("delegate: llm_query schema: " + err.Error())
	}
	return s
})

// decodeQuery returns the query of a call, or the error result the model
// reads. The query is the only argument: another field is refused rather
// than dropped (a "context" meant for the subquery would be lost), and a
// key is matched exactly, as the provider's schema check would match it.
func decodeQuery(name string, raw json.RawMessage) (string, *tool.Result) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		r := tool.Errorf("Error: invalid arguments for %s: %v", name, err)
		return "", &r
	}
	if v == nil {
		v = map[string]any{}
	}
	// No query, or a blank one, and nothing else: the documented message.
	// With other fields, the schema's names the field that is wrong
	// ("Query" is not "query").
	if obj, ok := v.(map[string]any); ok {
		q, has := obj["query"]
		text, isString := q.(string)
		if len(obj) == 0 || len(obj) == 1 && has && (q == nil || isString && strings.TrimSpace(text) == "") {
			r := tool.Errorf("Error: %s needs a non-empty query", name)
			return "", &r
		}
	}
	if err := queryArgsSchema().Validate(v); err != nil {
		r := tool.Errorf("Error: invalid arguments for %s: %v", name, err)
		return "", &r
	}
	return v.(map[string]any)["query"].(string), nil
}

// subquerySystemPrompt starts every subquery's system prompt.
const subquerySystemPrompt = `You are answering a delegated subquery. You cannot delegate further and cannot ask the user; answer the query directly and completely, using your tools where they help.`

// ToolLLMQuery is the name of the llm_query tool.
const ToolLLMQuery = "llm_query"

// queryTool is llm_query (spec nil) or one specialization: a front door
// the engine offers root runs whose agent names it, or names no tools.
type queryTool struct {
	e    *Engine
	spec *config.Specialization
}

// queryDoors are llm_query and one door per specialization.
func (e *Engine) queryDoors() []ownTool {
	doors := []ownTool{&queryTool{e: e}}
	for i := range e.Specializations {
		doors = append(doors, &queryTool{e: e, spec: &e.Specializations[i]})
	}
	return doors
}

// Kind is KindSubquery.
func (t *queryTool) Kind() Kind { return KindSubquery }

// Spawns is true: each call asks for a child.
func (t *queryTool) Spawns() bool { return true }

// Allow is the subquery policy: a subquery may start none, and a subquery
// runs at depth 1 only, so only a root may call one.
func (t *queryTool) Allow(p *Policy) error {
	if p.Kind == KindSubquery {
		return subqueryToolViolation(t.name())
	}
	if p.Depth >= 1 {
		// The subquery would run at depth 2 or deeper.
		return subqueryDepthViolation(t.name())
	}
	return nil
}

func (t *queryTool) offered(s *Scope, r *run) bool {
	return s.Depth == 0 && slices.Contains(r.QueryTools, t.name())
}

func (t *queryTool) tool(*Scope, *run) tool.Tool { return t }

func (t *queryTool) name() string {
	if t.spec == nil {
		return ToolLLMQuery
	}
	return t.spec.ToolName
}

func (t *queryTool) Spec() llm.ToolSpec {
	desc := llmQueryDescription
	if t.spec != nil {
		desc = fmt.Sprintf("A specialized llm_query (configured in [llm_tool_%s]): %s %s", t.spec.ToolName,
			firstSentence(t.spec.SystemPromptPatch), "Runs a bounded subquery that sees none of this conversation and returns only its final answer; put everything it needs in the query.")
	}
	return llm.ToolSpec{Name: t.name(), Description: desc, Parameters: querySchema}
}

func (t *queryTool) Run(ctx context.Context, raw json.RawMessage) (tool.Result, error) {
	query, bad := decodeQuery(t.name(), raw)
	if bad != nil {
		return *bad, nil
	}
	opts := QueryOptions{Scope: KindSubquery, Depth: 1}
	if t.spec != nil {
		opts.SessionID = t.spec.SessionID
		skill := t.spec.SkillName
		opts.Skill = &skill
		window := t.spec.ContextWindow
		opts.ContextWindow = &window
	}
	opts, err := NormalizeQueryOptions(opts)
	if err != nil {
		return tool.Errorf("Error: %v", err), nil
	}
	env := t.e.subquery(ctx, t.name(), t.spec, opts, query)
	if env.OK() {
		return tool.Text(env.Output), nil
	}
	return tool.Errorf("Error: subquery %s failed — %s. You may retry or proceed without this result.", t.name(), env.Error), nil
}

func (e *Engine) subquery(ctx context.Context, name string, sp *config.Specialization, opts QueryOptions, query string) *Envelope {
	caller := ScopeFrom(ctx)
	if caller == nil {
		err := errors.New("subquery outside a run")
		return &Envelope{Kind: KindSubquery, Label: name, Status: StatusError, Error: err.Error(), Err: err}
	}
	system := subquerySystemPrompt
	if sp != nil {
		system = joinSections(system, sp.SystemPromptPatch)
		if sp.Skill != nil {
			system = joinSections(system, sp.Skill.Body)
		}
	}
	var history []llm.Message
	persistent := sp != nil
	if persistent {
		exs, err := e.sessions().Window(ctx, opts.SessionID, *opts.ContextWindow)
		if err != nil {
			return &Envelope{Kind: KindSubquery, Label: name, Status: StatusError, Error: err.Error(), Err: err}
		}
		history = SessionHistory(exs)
	}
	base := caller.base
	if base != nil {
		base = subqueryTools(base)
	}
	r := &run{RunSpec: RunSpec{Kind: KindSubquery, Label: name, System: system, Model: caller.Model,
		Messages: append(history, llm.UserMessage(query)), HistoryLen: len(history), Task: query,
		MaxTurns: e.MaxTurns, Workdir: caller.Workdir}, base: base}
	if persistent {
		r.SessionID = opts.SessionID
	}
	env := e.spawn(ctx, r)
	if env.OK() && persistent && !env.fromLedger {
		if err := e.sessions().AppendExchange(context.WithoutCancel(ctx), opts.SessionID, env.Exchange(query)); err != nil && e.Logger != nil {
			e.Logger.Warn("session: recording exchange", "session", opts.SessionID, "err", err)
		}
	}
	return env
}

// sessions is where subquery sessions are kept: Sessions, else the
// Ledger's own, else memory.
func (e *Engine) sessions() ledger.Sessions {
	if e.Sessions != nil {
		return e.Sessions
	}
	if s, ok := e.Ledger.(ledger.Sessions); ok {
		return s
	}
	return &e.memSessions
}

// memSessions keeps sessions for an engine without a ledger of them.
type memSessions struct {
	mu sync.Mutex
	m  map[string][]ledger.Exchange
}

// Window is the session's last n exchanges (all when n <= 0).
func (s *memSessions) Window(_ context.Context, id string, n int) ([]ledger.Exchange, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := s.m[id]
	if n > 0 && len(all) > n {
		all = all[len(all)-n:]
	}
	return append([]ledger.Exchange(nil), all...), nil
}

// AppendExchange adds ex to the session.
func (s *memSessions) AppendExchange(_ context.Context, id string, ex ledger.Exchange) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string][]ledger.Exchange{}
	}
	s.m[id] = append(s.m[id], ex)
	return nil
}

// maxSpecDescription caps the part of a specialization's tool description
// taken from its prompt patch. The description is sent with every model
// call of the parent; the whole patch reaches the subquery's system prompt
// anyway.
const maxSpecDescription = 200

// firstSentence is the patch's first sentence (or line), at most
// maxSpecDescription bytes.
func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, ".\n"); i >= 0 {
		s = strings.TrimSpace(s[:i+1])
	}
	return llm.ClipMessage(s, maxSpecDescription)
}

// queryToolsOf lists the llm_query tools a root agent is offered: all of
// them when its config names no tools, else those it names.
func (e *Engine) queryToolsOf(a *config.Agent) []string {
	var all []string
	for _, o := range e.ownTools() {
		if q, ok := o.(*queryTool); ok {
			all = append(all, q.name())
		}
	}
	if a.Tools == nil || slices.Contains(a.Tools, config.ToolsAll) {
		return slices.DeleteFunc(all, a.Disallows)
	}
	return slices.DeleteFunc(all, func(n string) bool { return !slices.Contains(a.Tools, n) || a.Disallows(n) })
}

// queryGuidance is what a root's system prompt says of its specialization
// tools, when it is offered any: "" otherwise.
func (e *Engine) queryGuidance(queryTools []string) string {
	if slices.ContainsFunc(queryTools, func(n string) bool { return n != ToolLLMQuery }) {
		return specializationGuidance
	}
	return ""
}

// specializationGuidance is added to a root agent's system prompt when
// config-defined specialization tools exist (llm-tool-specializations.md,
// "System prompt update plan").
const specializationGuidance = `## LLM Specialization Tools (if present)
- Some environments define additional LLM tools via config (for example,
  ` + "`code_review_llm`, `explorer_llm`" + `).
- Treat these as bounded delegation tools for focused analysis or review.
- First discover available tools and only use specializations that are present.
- Prefer specializations when task-role fit is strong; otherwise use normal tools.
- Do not attempt recursive delegation through specialization tools.`

package delegate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
)

// subagent: an ad-hoc child with the caller's tools, narrowed
// (subagent-tool-reference.md). The result is the reference's JSON
// envelope, every input problem included.

// DefaultSummaryPrompt is used when a call gives no summary_prompt.
const DefaultSummaryPrompt = "Summarize your findings concisely"

// Fixed messages of the reference.
const (
	msgMissingLabel    = "Invalid input: missing field `label`"
	msgEmptyTask       = "task_prompt cannot be empty"
	msgMaxTurnsRange   = "max_turns must be between 1 and 50"
	msgSubagentBlocked = "Tool 'subagent' cannot be used by subagents"
	msgUnknownTool     = "Unknown tool in allowed_tools: "
	execFailedPrefix   = "Subagent execution failed: "
)

const subagentDescription = `Delegate a focused task to a recursive agent instance with isolated conversation context. Use this when you need to explore a sub-problem independently without polluting the main conversation.`

var subagentSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "label": {"type": "string", "minLength": 1, "description": "Unique identifier for tracking this subagent instance"},
    "task_prompt": {"type": "string", "minLength": 1, "description": "The specific, self-contained task for the subagent to complete"},
    "summary_prompt": {"type": "string", "description": "How to summarize the findings (default: Summarize your findings concisely)"},
    "allowed_tools": {"type": "array", "items": {"type": "string"}, "description": "Tool names (or groups such as file_ops) the subagent may use, from your own; default: all of yours. Naming subagent is refused: the subagent is offered subagent itself while its depth is below the limit"},
    "max_turns": {"type": "integer", "minimum": 1, "maximum": 50, "description": "Maximum turns for this subagent (default from configuration)"},
    "output_schema": {"type": "object", "description": "Optional JSON Schema the subagent's final answer must match; the output is then that JSON text"}
  },
  "required": ["label", "task_prompt"]
}`)

// subagentSystemPrompt is the child's system prompt: it has no parent
// history, so it must be told what it is and that nobody will answer.
const subagentSystemPrompt = `You are a sub-agent: another agent has delegated one focused task to you. You do not see its conversation, and nobody will answer questions, so work autonomously with the tools you have. Be thorough but stay on the task; when you are done, answer with your findings.`

// ToolSubagent is the name of the subagent tool.
const ToolSubagent = "subagent"

// subagentDoor is subagent as the engine offers it: to a run that may use
// it (its agent names it, or it is a sub-agent itself) while its depth is
// below the subagent nesting limit in force.
type subagentDoor struct{ e *Engine }

func (subagentDoor) name() string { return ToolSubagent }

// Kind is KindSubagent.
func (subagentDoor) Kind() Kind { return KindSubagent }

// Spawns is true: each call asks for a child.
func (subagentDoor) Spawns() bool { return true }

// Allow refuses subagent in a subquery (a leaf), and at the nesting limit
// with the reference's depth error.
func (subagentDoor) Allow(p *Policy) error {
	if p.Kind == KindSubquery {
		return subqueryDepthViolation(ToolSubagent)
	}
	if p.SubagentOn && p.Depth >= p.SubagentMaxDepth {
		return &DepthError{MaxDepth: p.SubagentMaxDepth, Depth: p.Depth}
	}
	return nil
}

func (d subagentDoor) offered(s *Scope, r *run) bool {
	return r.SubagentOn && s.Depth < d.e.subagentLimit(s)
}

func (d subagentDoor) tool(*Scope, *run) tool.Tool { return &subagentTool{d} }

// callLabel digs the label out of subagent arguments; "" when there is
// none.
func (subagentDoor) callLabel(args json.RawMessage) string {
	var in struct {
		Label string `json:"label"`
	}
	_ = json.Unmarshal(args, &in)
	return in.Label
}

// renderRefusal answers a refused call with the reference's envelope.
func (subagentDoor) renderRefusal(label string, callerDepth int, err error) tool.Result {
	return subagentFailure(label, callerDepth, err.Error())
}

// namesSubagent reports whether an agent's tools name subagent, which
// its runs are then offered.
func namesSubagent(a *config.Agent) bool { return slices.Contains(a.Tools, ToolSubagent) }

type subagentTool struct{ subagentDoor }

func (t *subagentTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: ToolSubagent, Description: subagentDescription, Parameters: subagentSchema}
}

// SubagentInput is the decoded input of a subagent call.
type SubagentInput struct {
	Label         string   `json:"label"`
	TaskPrompt    string   `json:"task_prompt"`
	SummaryPrompt string   `json:"summary_prompt"`
	AllowedTools  []string `json:"allowed_tools"`
	MaxTurns      *int     `json:"max_turns"`
	// OutputSchema is deputy's addition to the reference: a JSON Schema
	// the summary must match.
	OutputSchema json.RawMessage `json:"output_schema"`
}

// DecodeSubagentInput decodes and checks subagent arguments. Its errors are
// the reference's messages, ready for the envelope.
func DecodeSubagentInput(raw json.RawMessage) (SubagentInput, error) {
	var in SubagentInput
	if len(strings.TrimSpace(string(raw))) == 0 {
		raw = json.RawMessage("{}")
	}
	if err := checkArgKeys(raw, subagentFields...); err != nil {
		return in, errors.New("Invalid input: " + err.Error())
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return in, errors.New("Invalid input: invalid type for field `" + te.Field + "`: expected " + jsonTypes[te.Field])
		}
		if errors.As(err, &te) {
			return in, errors.New("Invalid input: expected a JSON object")
		}
		return in, errors.New("Invalid input: " + err.Error())
	}
	if strings.TrimSpace(in.Label) == "" {
		return in, errors.New(msgMissingLabel)
	}
	if strings.TrimSpace(in.TaskPrompt) == "" {
		return in, errors.New(msgEmptyTask)
	}
	if in.MaxTurns != nil && (*in.MaxTurns < 1 || *in.MaxTurns > 50) {
		return in, errors.New(msgMaxTurnsRange)
	}
	for _, name := range in.AllowedTools {
		if name == ToolSubagent {
			return in, errors.New(msgSubagentBlocked)
		}
	}
	if s := bytes.TrimSpace(in.OutputSchema); len(s) > 0 && !bytes.Equal(s, []byte("null")) {
		if s[0] != '{' {
			return in, errors.New("Invalid input: invalid type for field `output_schema`: expected a JSON Schema object")
		}
		if _, err := agent.NewOutput("", s); err != nil {
			return in, errors.New("Invalid input: " + err.Error())
		}
	} else {
		in.OutputSchema = nil
	}
	return in, nil
}

// subagentFields are the input's keys, as the schema names them.
var subagentFields = []string{"label", "task_prompt", "summary_prompt", "allowed_tools", "max_turns", "output_schema"}

// jsonTypes names each input field's type the way the schema does.
var jsonTypes = map[string]string{
	"label": "a string", "task_prompt": "a string", "summary_prompt": "a string",
	"allowed_tools": "an array of strings", "allowed_tools.0": "a string", "max_turns": "an integer",
	"output_schema": "a JSON Schema object",
}

func (t *subagentTool) Run(ctx context.Context, raw json.RawMessage) (tool.Result, error) {
	caller := ScopeFrom(ctx)
	depth := 1
	if caller != nil {
		depth = caller.Depth + 1
	}
	in, err := DecodeSubagentInput(raw)
	if err != nil {
		return subagentFailure(in.Label, depth-1, err.Error()), nil
	}
	env, err := t.e.subagent(ctx, caller, in)
	if err != nil {
		return subagentFailure(in.Label, depth-1, err.Error()), nil
	}
	return t.e.renderSubagent(caller, in.Label, env), nil
}

// subagent narrows the caller's tools and spawns the child.
func (e *Engine) subagent(ctx context.Context, caller *Scope, in SubagentInput) (*Envelope, error) {
	if caller == nil {
		return nil, errors.New(execFailedPrefix + "no caller scope")
	}
	// A subagent never asks the user (xzatoma's sub-agents work on their
	// own): ask_user is not among the caller's tools it can have.
	base := caller.base
	if base != nil {
		if _, ok := base.Get(ToolAskUser); ok {
			base = base.Without(ToolAskUser)
		}
	}
	if in.AllowedTools != nil {
		narrowed, err := base.Narrow(in.AllowedTools)
		if err != nil {
			var unknown *tool.UnknownToolError
			if errors.As(err, &unknown) {
				return nil, errors.New(msgUnknownTool + unknown.Name)
			}
			return nil, errors.New("Invalid input: " + err.Error())
		}
		base = narrowed
	}
	maxTurns := e.Subagent.DefaultMaxTurns
	if maxTurns <= 0 {
		maxTurns = 10
	}
	if in.MaxTurns != nil {
		maxTurns = *in.MaxTurns
	}
	summary := in.SummaryPrompt
	if strings.TrimSpace(summary) == "" {
		summary = DefaultSummaryPrompt
	}
	model := caller.Model
	switch {
	case e.Subagent.Model != "":
		model = e.Subagent.Model
	case e.Subagent.ModelName != "":
		if ref, err := llm.ParseModel(caller.Model); err == nil {
			model = ref.Provider + "/" + e.Subagent.ModelName
		}
	}
	output, err := outputOf("", in.Label, in.OutputSchema)
	if err != nil {
		return nil, errors.New("Invalid input: " + err.Error())
	}
	r := &run{RunSpec: RunSpec{Kind: KindSubagent, Label: in.Label, System: subagentSystemPrompt,
		Messages: []llm.Message{llm.UserMessage(in.TaskPrompt)}, Task: in.TaskPrompt, Model: model, MaxTurns: maxTurns,
		Workdir: caller.Workdir, SubagentOn: true, Summary: summary, Quiet: !e.Subagent.Persist}, base: base}
	r.setOutput(output)
	return e.spawn(ctx, r), nil
}

// renderSubagent turns an envelope into the reference's result.
func (e *Engine) renderSubagent(caller *Scope, label string, env *Envelope) tool.Result {
	switch {
	case env.RunID == "":
		// Refused before the child existed (a quota): the reason stands alone.
		return subagentFailure(label, env.Depth-1, env.Error)
	case env.Status != StatusOK && env.Status != StatusMaxTurns && env.Status != StatusBudget:
		return subagentResult(false, "", execFailedPrefix+env.Error, e.subagentMetadata(label, env))
	}
	out := env.Output
	if env.Status == StatusBudget {
		// A child out of budget stops with its partial work: the caller
		// gets it beside the failure, as a turn limit's summary (the
		// summary call itself would need the budget that is spent).
		if len(out) > e.outputLimit() {
			out = e.truncate(caller, label, env, out)
		}
		return subagentResult(false, out, execFailedPrefix+env.Error, e.subagentMetadata(label, env))
	}
	limit := e.outputLimit()
	if len(out) > limit && env.OutputJSON != nil {
		// Cut JSON is not JSON: a structured answer fits or fails.
		return subagentResult(false, "", fmt.Sprintf("%sstructured output of %d bytes exceeds the output limit of %d bytes (agent.subagent.output_max_size); JSON is never cut", execFailedPrefix, len(out), limit), e.subagentMetadata(label, env))
	}
	if len(out) > limit {
		out = e.truncate(caller, label, env, out)
	}
	return subagentResult(true, out, "", e.subagentMetadata(label, env))
}

// outputLimit is agent.subagent.output_max_size, 4096 when unset.
func (e *Engine) outputLimit() int {
	if e.Subagent.OutputMaxSize <= 0 {
		return 4096
	}
	return e.Subagent.OutputMaxSize
}

// truncMarker ends a truncated output.
const truncMarker = "\n[Output truncated]"

// truncate cuts out, longer than outputLimit, on a UTF-8 boundary, marks
// the cut and records it with a truncation event. The output, marker
// included, fits in the limit (the spec: a caller sizing its context by
// output_max_size must be able to rely on it); the event's truncated_size
// is that output's size.
func (e *Engine) truncate(caller *Scope, label string, env *Envelope, out string) string {
	// A library's limit below the marker's size keeps the marker alone.
	cut := llm.CutUTF8(out, max(e.outputLimit()-len(truncMarker), 0)) + truncMarker
	ev := Event{Type: EventTruncation, RunID: env.RunID, ParentID: env.ParentID, RootID: caller.RootID,
		Kind: env.Kind, Depth: env.Depth, Label: label, OriginalSize: len(out), TruncatedSize: len(cut)}
	e.emit(&ev)
	return cut
}

func (e *Engine) subagentMetadata(label string, env *Envelope) [][2]string {
	status := "complete"
	if env.Status != StatusOK {
		status = "incomplete"
	}
	return [][2]string{
		{"subagent_label", label},
		{"recursion_depth", strconv.Itoa(env.Depth)},
		{"completion_status", status},
		{"turns_used", strconv.Itoa(turnsUsed(env))},
		{"max_turns_reached", strconv.FormatBool(env.MaxTurnsReached)},
		{"tokens_consumed", strconv.FormatInt(env.TreeUsage.Total(), 10)},
	}
}

// turnsUsed is the turns a run reports (turns_used): a subagent's summary
// call is a turn of its conversation, as in xzatoma, where a task answered
// at once plus its summary is 2 (the spec, README: subagent). env.Turns
// leaves it out, since it is the task's turns that max_turns, budgets and
// resume count. The summary was made when the run ended ok or at its turn
// limit (a repair turn of a structured summary is not counted again).
func turnsUsed(env *Envelope) int {
	if env.Kind == KindSubagent && (env.Status == StatusOK || env.Status == StatusMaxTurns) {
		return env.Turns + 1
	}
	return env.Turns
}

// subagentFailure is the envelope of a call that never ran a child, from a
// caller at callerDepth.
func subagentFailure(label string, callerDepth int, msg string) tool.Result {
	meta := [][2]string{{"subagent_label", label}, {"recursion_depth", strconv.Itoa(callerDepth + 1)}}
	return subagentResult(false, "", msg, meta)
}

// subagentResult writes the envelope with its keys in the reference's
// order; metadata values are strings.
func subagentResult(success bool, output, errMsg string, meta [][2]string) tool.Result {
	var b strings.Builder
	b.WriteString(`{"success":`)
	b.WriteString(strconv.FormatBool(success))
	b.WriteString(`,"output":`)
	b.Write(mustJSON(output))
	b.WriteString(`,"error":`)
	if success {
		b.WriteString("null")
	} else {
		b.Write(mustJSON(errMsg))
	}
	b.WriteString(`,"metadata":{`)
	for i, kv := range meta {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(mustJSON(kv[0]))
		b.WriteByte(':')
		b.Write(mustJSON(kv[1]))
	}
	b.WriteString("}}")
	return tool.Result{Content: b.String(), IsError: !success}
}

// mustJSON encodes a string as JSON without HTML escaping: the envelope is
// read by a model, and "<=" should stay "<=".
func mustJSON(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

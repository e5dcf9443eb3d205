package delegate

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/llm"
)

// rootRun describes the root run of a request.
func (e *Engine) rootRun(req RunRequest) (_ run, err error) {
	if err := e.check(); err != nil {
		return run{}, err
	}
	a := req.Agent
	if a == nil {
		return run{}, fmt.Errorf("%w: no agent to run", ErrConfig)
	}
	if err := CheckBudget(req.Budget); err != nil {
		return run{}, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	model := req.Model
	if model == "" && !a.InheritsModel() {
		model = a.Model
	}
	if model == "" {
		model = e.DefaultModel
	}
	if model == "" {
		model = a.RootModel
	}
	if model == "" {
		return run{}, fmt.Errorf("%w: agent %q names no model and no default_model is set (use --model provider/model or set default_model in config.yaml)", ErrConfig, a.Name)
	}
	workdir := req.Workdir
	if workdir == "" {
		if workdir, err = os.Getwd(); err != nil {
			return run{}, err
		}
	}
	r, err := e.agentRun(nil, a, KindRoot, model, workdir, req.Task, req.Context, req.History)
	if err != nil {
		return run{}, err
	}
	r.QueryTools = e.queryToolsOf(a)
	r.System = joinSections(r.System, e.queryGuidance(r.QueryTools))
	if req.Subagents != nil {
		r.SubagentOn = *req.Subagents
	}
	r.onText = req.OnText
	r.SessionID = req.SessionID
	if req.OutputSchema != nil {
		out, err := outputOf("", a.Name, req.OutputSchema)
		if err != nil {
			return run{}, err
		}
		r.setOutput(out)
	}
	r.Budget = narrowBudget(req.Budget, r.Budget)
	return r, nil
}

// agentRun describes a run of a defined agent (the root, or a call_agent
// child): its own system prompt, skill and files, then the task.
// tree, when set, is the tree the run joins, whose runs of one agent share
// its tools.
func (e *Engine) agentRun(tree *Tree, a *config.Agent, kind Kind, model, workdir, task, taskContext string, history []llm.Message) (run, error) {
	if err := e.Grant.workdirError(a, workdir); err != nil {
		return run{}, err
	}
	base, err := e.agentTools(tree, a, workdir)
	if err != nil {
		return run{}, err
	}
	system, err := e.agentSystemPrompt(a, workdir)
	if err != nil {
		return run{}, err
	}
	system = joinSections(system, e.memorySection(context.Background(), a))
	maxTurns := a.MaxTurns
	if maxTurns == 0 {
		maxTurns = e.MaxTurns
	}
	output, err := outputOf(a.OutputName, a.Name, a.OutputSchema)
	if err != nil {
		return run{}, err
	}
	msgs := append(append([]llm.Message(nil), history...), taskMessage(task, taskContext))
	r := run{RunSpec: RunSpec{Kind: kind, Label: a.Name, Agent: a.Name, System: system, Messages: msgs, HistoryLen: len(history),
		Task: task, Model: model, Params: a.Params, MaxTurns: maxTurns, Workdir: workdir, SubagentOn: namesSubagent(a),
		Sequential: !a.SubagentsConfig.Parallel, Budget: a.Budget}, agent: a, base: base}
	r.setOutput(output)
	return r, nil
}

// setOutput makes out the shape of r's final answer, described and
// resolved.
func (r *run) setOutput(out *agent.Output) {
	r.output = out
	if out != nil {
		r.OutputSchema, r.OutputName = out.Schema(), out.Name()
	}
}

// outputOf resolves an output schema; nil when there is none. The name
// (or else the agent's) becomes what a provider calls the format.
func outputOf(name, agentName string, schema json.RawMessage) (*agent.Output, error) {
	if len(schema) == 0 {
		return nil, nil
	}
	if name == "" {
		name = formatName(agentName)
	}
	out, err := agent.NewOutput(name, schema)
	if err != nil {
		return nil, fmt.Errorf("%w: agent %q: %w", ErrConfig, agentName, err)
	}
	return out, nil
}

// formatName makes a name OpenAI accepts for a response format: letters,
// digits, '_' and '-', at most 64.
func formatName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			b[i] = '_'
		}
	}
	if len(b) > 64 {
		b = b[:64]
	}
	if len(b) == 0 {
		return "output"
	}
	return string(b)
}

// agentSystemPrompt is what an agent's model receives as its system
// prompt, in the order of the call_agent spec: the agent's own prompt, its
// skill, then the contents of its files, each marked with its path.
func (e *Engine) agentSystemPrompt(a *config.Agent, workdir string) (string, error) {
	parts := []string{strings.TrimSpace(a.SystemPrompt)}
	if a.SkillDoc != nil {
		parts = append(parts, strings.TrimSpace(a.SkillDoc.Body))
	}
	if len(a.Files) > 0 {
		files, _, refused := e.agentFiles(a, workdir)
		for _, w := range refused {
			if e.Logger != nil {
				e.Logger.Warn(w)
			}
		}
		var b strings.Builder
		for _, f := range files {
			fmt.Fprintf(&b, "<file path=%q>\n%s\n</file>\n", f.Path, strings.TrimRight(f.Content, "\n"))
		}
		if b.Len() > 0 {
			parts = append(parts, "Files from the working directory:\n\n"+strings.TrimRight(b.String(), "\n"))
		}
	}
	return joinSections(parts...), nil
}

// agentFiles resolves a's files from workdir, less those outside the
// grant's paths: a glob may name a file outside the working directory
// ("../x", "~/.ssh/..."), and when permissions.paths bounds the run, what
// lies outside it does not reach a model through an agent's files any more
// than through its tools. refused has one warning per file left out.
func (e *Engine) agentFiles(a *config.Agent, workdir string) (files []config.File, diags config.Diagnostics, refused []string) {
	all, diags := config.ResolveFiles(a.Files, workdir)
	for _, f := range all {
		path := filepath.FromSlash(f.Path)
		if !filepath.IsAbs(path) {
			path = filepath.Join(workdir, path)
		}
		if !e.Grant.AllowsWorkdir(path) {
			refused = append(refused, fmt.Sprintf("agent %q: files: %s is outside the granted paths (permissions.paths: %s); left out",
				a.Name, f.Path, strings.Join(e.Grant.Paths, ", ")))
			continue
		}
		files = append(files, f)
	}
	return files, diags, refused
}

// taskMessage is the user message that starts a run: the task, then any
// context the caller passed along (another agent's context argument, or
// piped stdin).
func taskMessage(task, context string) llm.Message {
	task = strings.TrimSpace(task)
	context = strings.TrimSpace(context)
	if context == "" {
		return llm.UserMessage(task)
	}
	if task == "" {
		return llm.UserMessage(context)
	}
	return llm.UserMessage(task + "\n\n<context>\n" + context + "\n</context>")
}

func joinSections(parts ...string) string {
	var kept []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, "\n\n")
}

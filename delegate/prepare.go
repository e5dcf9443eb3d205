package delegate

import (
	"github.com/deputyhq/deputy/llm"
)

// Prepared is exactly what a root run's first model call would send, for
// `deputy run --dry-run`.
type Prepared struct {
	Agent    string         `json:"agent"`
	Model    string         `json:"model"`
	Workdir  string         `json:"workdir"`
	System   string         `json:"system"`
	Messages []llm.Message  `json:"messages"`
	Tools    []llm.ToolSpec `json:"tools"`
	// Output is the structured output the call asks for, if any.
	Output *llm.OutputSchema `json:"output,omitempty"`
	// Files are the files of the agent's `files` globs, as resolved.
	Files []string `json:"files"`
	// Warnings are problems found resolving them (a glob matching nothing).
	Warnings []string `json:"warnings,omitempty"`
}

// Prepare builds a root run without running it: no provider is contacted,
// nothing is recorded.
func (e *Engine) Prepare(req RunRequest) (*Prepared, error) {
	r, err := e.rootRun(req)
	if err != nil {
		return nil, err
	}
	s := &Scope{RunSpec: &r.RunSpec, agent: r.agent, base: r.base}
	var warnings []string
	s.tree = &Tree{prepared: &warnings}
	if req.Agent.Scratchpad {
		s.tree.notes = newScratchpad() // so that its tools are listed
	}
	// Which tools the provider runs itself depends on it; making one
	// contacts nothing (a missing key only means it is not known).
	if provider, ref, err := e.Models.ForModel(r.Model); err == nil {
		s.provider, s.ref = provider, ref
	}
	narrowMaxDepth(s, 0, 0)
	tools := e.toolsFor(s, &r)
	p := &Prepared{Agent: r.Label, Model: r.Model, Workdir: r.Workdir, System: r.System, Messages: r.Messages, Tools: tools.Specs(),
		Warnings: warnings}
	if r.output != nil {
		p.Output = &llm.OutputSchema{Name: r.output.Name(), Schema: r.output.Schema()}
	}
	if a := req.Agent; len(a.Files) > 0 {
		// rootRun has warned of the files the grant leaves out.
		files, diags, _ := e.agentFiles(a, r.Workdir)
		for _, f := range files {
			p.Files = append(p.Files, f.Path)
		}
		for _, d := range diags {
			p.Warnings = append(p.Warnings, d.String())
		}
	}
	return p, nil
}

package delegate

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
)

// serverTools fits the tools of reg that a provider may run itself
// (tool.ServerBacked: web_search) to run s, as Options.WebSearch says: the
// provider's own where the run's model has one (auto, native), the tool
// itself where it can run (auto, api), else left out with one warning a
// tree. It returns reg itself when nothing changes, so a fan-out's
// children keep sharing one registry.
func (e *Engine) serverTools(s *Scope, reg *tool.Registry) *tool.Registry {
	if reg == nil {
		return nil
	}
	var backed []tool.ServerBacked
	for _, t := range reg.Tools() {
		if sb, ok := t.(tool.ServerBacked); ok {
			backed = append(backed, sb)
		}
	}
	if len(backed) == 0 {
		return reg
	}
	mode := e.WebSearch
	if mode == "" {
		mode = config.SearchAuto
	}
	var kinds []string
	if mode == config.SearchAuto || mode == config.SearchNative {
		kinds = llm.ServerToolsOf(s.provider, s.ref.Model)
	}
	out := tool.NewRegistry()
	for _, t := range reg.Tools() {
		sb, ok := t.(tool.ServerBacked)
		switch {
		case !ok:
		case llm.ServerToolFits(kinds, sb.ServerTool()):
			t = providerRun{ServerBacked: sb}
		case sb.Runnable() && (mode == config.SearchAuto || mode == config.SearchAPI):
		default:
			// The provider's own may be there, unable to keep to the
			// agent's hosts, which only narrow.
			e.warnNoServerTool(s, sb, mode, slices.Contains(kinds, sb.ServerTool().Kind))
			continue
		}
		_ = out.Add(t) // the names were unique in reg
	}
	return out
}

// warnNoServerTool says, once a tree for each agent and tool, why a tool
// its file names is left out; unfit says the provider has a tool of its
// kind that cannot keep to the agent's allowed hosts.
func (e *Engine) warnNoServerTool(s *Scope, t tool.ServerBacked, mode string, unfit bool) {
	name := tool.Name(t)
	if s.tree == nil {
		return
	}
	if _, done := s.tree.warnedServer.LoadOrStore(s.Label+"\x00"+name, true); done {
		return
	}
	why := "its provider has no search of its own for this model and config.yaml sets no search API (search.api: brave or searxng)"
	switch {
	case mode == config.SearchOff:
		why = "search.mode is off in config.yaml"
	case unfit && mode == config.SearchNative:
		why = "search.mode is native and its provider's own search cannot keep to the agent's allowed_hosts"
	case unfit:
		why = "its provider's own search cannot keep to the agent's allowed_hosts and config.yaml sets no search API (search.api: brave or searxng)"
	case mode == config.SearchNative:
		why = "search.mode is native and its provider has no search of its own for this model"
	case mode == config.SearchAPI:
		why = "search.mode is api and no search API is configured"
	}
	msg := name + " is left out: " + why
	switch {
	case s.tree.prepared != nil:
		*s.tree.prepared = append(*s.tree.prepared, fmt.Sprintf("%s (agent %s, model %s)", msg, s.Label, s.Model))
	case e.Logger != nil:
		e.Logger.Warn(msg, "agent", s.Label, "model", s.Model)
	}
}

// providerRun is a tool its provider runs: the model is offered the
// provider's own (Spec's Server), which deputy never sees called. A call
// that reaches deputy anyway is answered with an error, never run.
type providerRun struct{ tool.ServerBacked }

// Name is the tool's (tool.Name).
func (p providerRun) Name() string { return tool.Name(p.ServerBacked) }

// Spec asks the provider for its own tool.
func (p providerRun) Spec() llm.ToolSpec {
	sp := p.ServerBacked.Spec()
	st := p.ServerTool()
	sp.Server = &st
	return sp
}

// Run refuses: the provider runs this tool.
func (p providerRun) Run(context.Context, json.RawMessage) (tool.Result, error) {
	return tool.Errorf("%s runs on the provider's side: its results are in your own answer, not a tool call", p.Name()), nil
}

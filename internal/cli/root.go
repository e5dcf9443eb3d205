package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/ledger"
	"github.com/deputyhq/deputy/llm"
)

// rootFlags are the flags of a command that runs a root agent (run and
// chat): which model, which skill, where, and with what budget. One place
// adds them and turns them into the root's settings, so that the two
// commands cannot drift apart.
type rootFlags struct {
	model   string
	workdir string
	skill   string
	effort  string
	budget  budgetFlags
}

// add adds the flags to cmd; budgetOf says what the budget bounds.
func (f *rootFlags) add(cmd *cobra.Command, budgetOf string) {
	fl := cmd.Flags()
	fl.StringVar(&f.model, "model", "", "model for the root agent, as provider/model or a Claude Code alias such as sonnet (overrides the agent's)")
	fl.StringVar(&f.workdir, "workdir", "", "working directory of the root agent (default: the agent's workdir, else the current directory)")
	fl.StringVar(&f.skill, "skill", "", "skill for the root agent: a SKILL.md path or a skill name (overrides the agent's)")
	fl.StringVar(&f.effort, "effort", "", "reasoning effort of the root agent (low, medium, high, ... as its model takes; overrides the agent's); children that set none inherit it")
	f.budget.add(cmd, budgetOf)
}

// rootSetup is what run and chat prepare before their first model call:
// the workspace, the agent with the flags applied, and where it works.
type rootSetup struct {
	w       *cliWorkspace
	agent   *config.Agent
	model   string // --model, checked; "" keeps the agent's
	workdir string // checked to be a directory
	budget  config.Budget
}

// Close closes the workspace.
func (s *rootSetup) Close() error { return s.w.Close() }

// prepareRoot loads the workspace and the agent name (fallback when name
// is "": chat's general assistant), and checks the flags against them.
// Every error is a configuration error, before any network call.
func prepareRoot(cmd *cobra.Command, g *globalFlags, f *rootFlags, name string, fallback func() *config.Agent) (_ *rootSetup, err error) {
	s := &rootSetup{}
	if s.budget, err = f.budget.get(); err != nil {
		return nil, err
	}
	if s.model, err = modelFlag(f.model); err != nil {
		return nil, err
	}
	if s.w, err = openWorkspace(cmd, g, true); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			s.w.Close()
		}
	}()
	if name == "" && fallback != nil {
		s.agent = fallback()
	} else if s.agent, err = s.w.agent(name); err != nil {
		return nil, err
	}
	if s.agent, err = s.w.withSkill(s.agent, f.skill); err != nil {
		return nil, err
	}
	if s.agent, err = withEffort(s.agent, f.effort); err != nil {
		return nil, err
	}
	s.workdir = s.agent.ResolveWorkdir(s.w.Dir)
	if f.workdir != "" {
		s.workdir, _ = filepath.Abs(f.workdir)
	}
	if fi, err := os.Stat(s.workdir); err != nil || !fi.IsDir() {
		return nil, configErrf("working directory %s does not exist", s.workdir)
	}
	return s, nil
}

// withEffort returns a copy of a whose effort is e (--effort), or a itself
// when e is not given.
func withEffort(a *config.Agent, e string) (*config.Agent, error) {
	if e == "" {
		return a, nil
	}
	// As in an agent file: the providers spell their levels in lower case.
	if e = strings.ToLower(strings.TrimSpace(e)); e == "" {
		return nil, configErrf("--effort: must not be empty (low, medium, high, ...)")
	}
	c := *a
	c.Params.Effort = e
	return &c, nil
}

// sessionHistory is the conversation a session's exchanges make (run's and
// chat's --session), and how many exchanges it has; a session id of ""
// has none.
func sessionHistory(ctx context.Context, l ledger.Sessions, session string) ([]llm.Message, int, error) {
	if session == "" {
		return nil, 0, nil
	}
	exs, err := l.Window(ctx, session, 0)
	if err != nil {
		return nil, 0, err
	}
	return delegate.SessionHistory(exs), len(exs), nil
}

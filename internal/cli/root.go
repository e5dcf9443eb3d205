package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/ledger"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/workspace"
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
	fl.StringVar(&f.effort, "effort", "", "reasoning effort of the root agent (low, medium, high, ... as its model takes; overrides the agent's); children that set none inherit it; a value its model does not take is left out with a warning")
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

// request is a run of task by the root in session (none when ""): its
// agent, model, working directory and budget as prepared, and its agents'
// hooks. run and chat add what only they give.
func (s *rootSetup) request(task, session string) delegate.RunRequest {
	return delegate.RunRequest{Agent: s.agent, Task: task, Model: s.model, Workdir: s.workdir, SessionID: session,
		Budget: s.budget, Hooks: s.w.AgentHooks(s.agent)}
}

// rootLedger is a root's ledger as run and chat use it: what the engine
// records through, the sessions, and the close when the command ends.
type rootLedger interface {
	ledger.Recorder
	ledger.Sessions
	io.Closer
}

// recording is what a root's runs are recorded through: the ledger, the
// traces (when the OTEL_* variables ask for them), and the session they
// continue.
type recording struct {
	ledger rootLedger
	// async is the ledger when it opens in the background (run's).
	async       *workspace.AsyncLedger
	flushTraces func()
	stderr      io.Writer
	// history is the session's conversation so far, of exchanges
	// exchanges.
	history   []llm.Message
	exchanges int
}

// startRecording starts tracing, opens the ledger and reads the history of
// session ("": none), as run and chat do before their first model call.
// In the background, the ledger opens while the run starts (run): the
// run's first writes wait in order for it, and the run waits for them (so
// for the open) before any tool call runs; a ledger that cannot be opened
// stops the run there (opened says so). Otherwise (chat) it is open before
// startRecording returns.
func (s *rootSetup) startRecording(ctx context.Context, session string, background bool) (_ *recording, err error) {
	r := &recording{stderr: s.w.stderr}
	if r.flushTraces, err = s.w.startTracing(ctx); err != nil {
		return nil, err
	}
	cmdTiming.mark("config")
	if background {
		r.async = s.w.OpenLedgerAsync(ctx)
		r.ledger = r.async
	} else if r.ledger, err = s.w.OpenLedger(ctx); err != nil {
		r.flushTraces()
		return nil, err
	}
	cmdTiming.mark("ledger open")
	// The session's history goes into the first model call: this waits
	// for a ledger opening in the background.
	if r.history, r.exchanges, err = sessionHistory(ctx, r.ledger, session); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// opened waits for a ledger opening in the background and returns the
// open's error, when nothing of the run was recorded (and none of its tool
// calls ran).
func (r *recording) opened(ctx context.Context) error {
	if r.async == nil {
		return nil
	}
	_, err := r.async.Store(context.WithoutCancel(ctx))
	return err
}

// save adds an exchange that ended ok to session (saveExchange).
func (r *recording) save(ctx context.Context, session string, ex ledger.Exchange) {
	saveExchange(ctx, r.ledger, r.stderr, session, ex)
}

// saveExchange adds an exchange that ended ok to session, with a warning
// when it cannot: the answer has been given.
func saveExchange(ctx context.Context, l ledger.Sessions, stderr io.Writer, session string, ex ledger.Exchange) {
	if err := l.AppendExchange(context.WithoutCancel(ctx), session, ex); err != nil {
		fmt.Fprintln(stderr, "deputy: warning: saving the session:", err)
	}
}

// Close closes the ledger, with a warning when what it recorded did not
// reach the file, and sends the last spans.
func (r *recording) Close() {
	closeLedger(r.ledger, r.stderr)
	cmdTiming.mark("ledger close")
	r.flushTraces()
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

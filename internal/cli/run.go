package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/claude"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/internal/stdin"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/telemetry"
	"github.com/deputyhq/deputy/workspace"
)

type runFlags struct {
	rootFlags
	timeout time.Duration
	dryRun  bool
	json    bool
	verbose bool
	session string
	// progress is the --progress mode; streamJSON prints the events on
	// stdout as JSON lines.
	progress   string
	streamJSON bool
	// temporal, when its address is set, hands the run over to
	// deputy-temporal.
	temporal temporalFlags
	// isolation is --isolation: "worktree" gives each child of the root a
	// git worktree of its own.
	isolation string
}

func newRunCmd(g *globalFlags) *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run <agent> [task words...]",
		Short: "Run an agent on a task and print its answer",
		Long: `Run an agent on a task and print its final answer on stdout.

The task is the words after the agent's name. Piped stdin is added as context
after the task. The agent may delegate to its sub-agents (call_agent), to
ad-hoc sub-agents (subagent) and to subqueries (llm_query and the [llm_tool_*]
specializations); only their final results come back to it.

Exit codes: 0 ok, 1 the agent failed (max turns, a spent budget, an error it
could not recover from), 2 configuration error, 3 provider error (auth, unreachable, rate limit
after retries, timeout), 130 interrupted.`,
		Example: `  deputy run reviewer "check the diff" < change.diff
  deputy run lead --model anthropic/claude-sonnet-5-5 -v "summarize the repo"
  deputy run lead --json "plan the release" | jq .usage
  deputy run --temporal 127.0.0.1:7233 lead "plan the release"   # on Temporal (docs/durable.md)`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAgent(cmd, g, f, args[0], strings.Join(args[1:], " "))
		},
	}
	fl := cmd.Flags()
	f.rootFlags.add(cmd, "the whole run")
	fl.DurationVar(&f.timeout, "timeout", 0, "time limit of the whole run, e.g. 90s or 5m (default none)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print what would be sent (system prompt, messages, files, tools) and exit without calling a model")
	fl.BoolVar(&f.json, "json", false, "print one JSON object: output (and output_json for an agent with an output schema), status, model, usage, duration_ms, run_id and the tree of child runs")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "show what each agent does on stderr, one line per step (--progress=plain)")
	fl.StringVar(&f.progress, "progress", progressAuto, progressHelp)
	fl.BoolVar(&f.streamJSON, "stream-json", false, "print the run's events on stdout as JSON lines, then the --json result as the last line; stdin then carries a program's answers to approvals and questions, not context (docs/observability.md)")
	fl.StringVar(&f.session, "session", "", "continue the stored conversation of this session id, and add this exchange to it")
	fl.StringVar(&f.isolation, "isolation", "", `"worktree": each child of the agent works in a git worktree of its own, shared with its own children, and its work is merged back when it ends ok; "none" (the default): only agents with isolation = "worktree" get one`)
	f.temporal.add(cmd, true)
	return cmd
}

func runAgent(cmd *cobra.Command, g *globalFlags, f *runFlags, name, task string) error {
	if err := f.check(cmd); err != nil {
		return err
	}
	if f.temporal.hostPort != "" {
		return handOverToTemporal(cmd)
	}
	// Ctrl-C and SIGTERM stop the run cleanly (recorded as cancelled);
	// the handler is set up while the configuration loads.
	signals := interruptSoon(cmd.Context())
	defer signals.release()
	if err := checkTimeout(f.timeout); err != nil {
		return err
	}
	setup, err := prepareRoot(cmd, g, &f.rootFlags, name, nil)
	if err != nil {
		return err
	}
	defer setup.Close()
	in, err := readRunInput(cmd, setup.w, f.streamJSON)
	if err != nil {
		return err
	}
	if task, err = rootTask(setup.agent, task, in.context); err != nil {
		return err
	}
	req := setup.request(task, f.session)
	req.Context, req.Isolation = in.context, f.isolation
	mode, err := f.progressMode(cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	if f.dryRun {
		return dryRun(cmd.OutOrStdout(), setup.w, req, f.json)
	}
	ctx := signals.context()
	if ctx.Err() != nil {
		// Interrupted while the configuration loaded: nothing has started.
		return &exitError{code: ExitInterrupted, err: ctx.Err(), quiet: true}
	}
	rec, err := setup.startRecording(ctx, f.session, true)
	if err != nil {
		return err
	}
	defer rec.Close()
	req.History = rec.history
	env, stream := f.execute(ctx, cmd, setup.w, rec.ledger, req, mode, in.tty)
	if err := rec.opened(ctx); err != nil {
		return err
	}
	if f.session != "" && env.OK() {
		rec.save(ctx, f.session, env.Exchange(taskWithContext(task, in.context)))
	}
	return f.report(cmd.OutOrStdout(), env, stream)
}

// check checks the flags that need no configuration: --isolation, and the
// Temporal flags with what they exclude.
func (f *runFlags) check(cmd *cobra.Command) error {
	if f.isolation != "" && f.isolation != config.IsolationWorktree && f.isolation != config.IsolationNone {
		return configErrf("--isolation %q: want %q (or %q, the default)", f.isolation, config.IsolationWorktree, config.IsolationNone)
	}
	if err := f.temporal.check(cmd); err != nil {
		return err
	}
	if f.temporal.hostPort != "" && f.isolation == config.IsolationWorktree {
		return configErrf("--isolation worktree does not work with --temporal: a tree on Temporal runs in its workers, which make no worktrees")
	}
	return nil
}

// runInput is what run takes from stdin: the task's context piped in, or
// the terminal of a person to ask.
type runInput struct {
	context string
	tty     *os.File
}

// readRunInput reads stdin. With --stream-json, stdin carries the
// program's answers to approvals and questions (streamPerson); otherwise
// what is piped is the task's context, and a terminal on stdin is a person
// to ask.
func readRunInput(cmd *cobra.Command, w *cliWorkspace, streamJSON bool) (runInput, error) {
	var in runInput
	if streamJSON {
		w.Person = newStreamPerson(cmd.InOrStdin(), cmd.ErrOrStderr())
		return in, nil
	}
	var err error
	if in.context, err = stdin.ReadPiped(cmd.InOrStdin(), w.Settings.Limits.StdinMaxBytes); err != nil {
		return in, configErr(err)
	}
	in.tty = terminalOf(cmd.InOrStdin())
	return in, nil
}

// rootTask is what the agent is asked: the words given, else (with
// nothing piped either) the agent's default task, axe's way, where the
// instructions are the task; after Claude Code's initialPrompt, the
// session's first turn, when the agent has one.
func rootTask(a *config.Agent, task, piped string) (string, error) {
	if strings.TrimSpace(task) == "" && strings.TrimSpace(piped) == "" && a.DefaultTask != "" {
		task = a.DefaultTask
	}
	if a.InitialPrompt != "" {
		task = strings.TrimSpace(a.InitialPrompt + "\n\n" + task)
	}
	if strings.TrimSpace(task) == "" && strings.TrimSpace(piped) == "" {
		return "", configErrf("no task: give it after the agent's name, or pipe it on stdin")
	}
	return task, nil
}

// progressMode is how the run shows on stderr (progressMode), where with
// --stream-json the stream on stdout already tells a program everything
// the plain lines would.
func (f *runFlags) progressMode(stderr io.Writer) (string, error) {
	mode, err := progressMode(f.progress, f.verbose, stderr)
	if mode == progressPlain && f.streamJSON && f.progress == progressAuto && !f.verbose {
		mode = progressNone
	}
	return mode, err
}

// dryRun prints what req would send, calling no model.
func dryRun(out io.Writer, w *cliWorkspace, req delegate.RunRequest, asJSON bool) error {
	p, err := w.Engine(nil).Prepare(req)
	if err != nil {
		return configErr(err)
	}
	return printPrepared(out, p, asJSON)
}

// execute runs req, recorded in l, with its progress shown in mode, the
// person at tty (or in the live view) asked, its events streamed with
// --stream-json and --timeout's limit; it returns the root's envelope and
// the stream.
func (f *runFlags) execute(ctx context.Context, cmd *cobra.Command, w *cliWorkspace, l rootLedger, req delegate.RunRequest, mode string, tty *os.File) (*delegate.Envelope, *telemetry.Stream) {
	ctx, interrupt := context.WithCancel(ctx)
	defer interrupt()
	var engine *delegate.Engine
	cancelRun := func(id string) bool { return engine.Cancel(id) }
	listeners, view, stopProgress := showProgress(ctx, mode, cmd.ErrOrStderr(), cancelRun, interrupt)
	defer stopProgress()
	switch {
	case tty != nil && view != nil:
		w.Person = view // requests show in the live view, keys answer them
	case tty != nil:
		w.Person = personAt(tty, cmd.ErrOrStderr())
	}
	var stream *telemetry.Stream
	if f.streamJSON {
		stream = telemetry.NewStream(cmd.OutOrStdout())
		listeners = append(listeners, stream.Listen)
	}
	if f.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.timeout)
		defer cancel()
	}
	engine = w.Engine(l, listeners...)
	engine.StreamText = f.streamJSON
	env := engine.Run(ctx, req)
	cmdTiming.mark("run")
	stopProgress()
	return env, stream
}

// report prints the run's result as the flags ask and returns its exit.
func (f *runFlags) report(out io.Writer, env *delegate.Envelope, stream *telemetry.Stream) error {
	switch {
	case f.streamJSON:
		// The last line is the object --json prints, on one line.
		stream.Write(runJSON(env))
		if err := stream.Err(); err != nil {
			return err
		}
	default:
		if err := printResult(out, env, f.json); err != nil {
			return err
		}
	}
	return runExit(env, f.json || f.streamJSON)
}

// printResult prints a root's result: --json's object, else its answer
// when it ended ok (run, runs resume).
func printResult(out io.Writer, env *delegate.Envelope, asJSON bool) error {
	if asJSON {
		return writeJSON(out, runJSON(env))
	}
	if env.OK() {
		fmt.Fprintln(out, strings.TrimRight(env.Output, "\n"))
	}
	return nil
}

// checkTimeout checks --timeout (run, runs resume).
func checkTimeout(d time.Duration) error {
	if d < 0 {
		return configErrf("--timeout must not be negative (got %s)", d)
	}
	return nil
}

// runExit maps the root envelope to the exit code.
func runExit(env *delegate.Envelope, quiet bool) error {
	if env.OK() {
		return nil
	}
	err := fmt.Errorf("agent %q failed: %s", env.Label, env.Error)
	code := ExitFailed
	switch {
	case errors.Is(env.Err, delegate.ErrConfig):
		code, err = ExitConfig, env.Err
	case env.Status == delegate.StatusCancelled:
		code = ExitInterrupted
	case env.Status == delegate.StatusTimeout:
		code = ExitProvider
	case isProviderError(env.Err):
		code = ExitProvider
	}
	return &exitError{code: code, err: err, quiet: quiet}
}

func isProviderError(err error) bool {
	var le *llm.Error
	if !errors.As(err, &le) {
		return false
	}
	switch le.Kind {
	case llm.KindAuth, llm.KindRateLimited, llm.KindServer, llm.KindTimeout, llm.KindConnection, llm.KindBadRequest:
		return true
	}
	return false
}

// withSkill returns a copy of a whose skill is ref (a SKILL.md path or a
// skill name), or a itself when ref is empty.
func (w *cliWorkspace) withSkill(a *config.Agent, ref string) (*config.Agent, error) {
	if ref == "" {
		return a, nil
	}
	sk, err := config.ResolveSkill(ref, w.Dir, workspace.SkillDirs(w.Dir))
	if err != nil {
		return nil, configErr(fmt.Errorf("--skill: %w", err))
	}
	c := *a
	c.Skill, c.SkillDoc = ref, sk
	return &c, nil
}

func taskWithContext(task, ctx string) string {
	if strings.TrimSpace(ctx) == "" {
		return task
	}
	return strings.TrimSpace(task + "\n\n" + ctx)
}

// runResult is the --json shape of a run.
type runResult struct {
	RunID      string               `json:"run_id"`
	Agent      string               `json:"agent"`
	Status     delegate.Status      `json:"status"`
	Output     string               `json:"output"`
	OutputJSON json.RawMessage      `json:"output_json,omitempty"`
	Error      string               `json:"error,omitempty"`
	Model      string               `json:"model"`
	Usage      llm.Usage            `json:"usage"`
	OwnUsage   llm.Usage            `json:"own_usage"`
	CostUSD    *float64             `json:"cost_usd"`
	OwnCostUSD *float64             `json:"own_cost_usd"`
	Turns      int                  `json:"turns"`
	DurationMS int64                `json:"duration_ms"`
	Children   []*delegate.Envelope `json:"children"`
	// LedgerError is the first write of the run's record that failed
	// (delegate.Envelope.LedgerErr).
	LedgerError string `json:"ledger_error,omitempty"`
}

func runJSON(env *delegate.Envelope) runResult {
	children := env.Children
	if children == nil {
		children = []*delegate.Envelope{}
	}
	ledgerErr := ""
	if env.LedgerErr != nil {
		ledgerErr = env.LedgerErr.Error()
	}
	return runResult{LedgerError: ledgerErr, RunID: env.RunID, Agent: env.Label, Status: env.Status, Output: env.Output, OutputJSON: env.OutputJSON, Error: env.Error,
		Model: env.Model, Usage: env.TreeUsage, OwnUsage: env.Usage, CostUSD: env.CostUSD, OwnCostUSD: env.OwnCostUSD, Turns: env.Turns, DurationMS: env.DurationMS, Children: children}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printPrepared(w io.Writer, p *delegate.Prepared, asJSON bool) error {
	if asJSON {
		return writeJSON(w, p)
	}
	fmt.Fprintf(w, "agent:   %s\nmodel:   %s\nworkdir: %s\n", p.Agent, p.Model, p.Workdir)
	fmt.Fprintf(w, "files:   %s\n", listOrNone(p.Files))
	for _, warn := range p.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	var names []string
	for _, t := range p.Tools {
		names = append(names, t.Name)
	}
	fmt.Fprintf(w, "tools:   %s\n", listOrNone(names))
	fmt.Fprintf(w, "\n=== system ===\n%s\n", p.System)
	for _, m := range p.Messages {
		fmt.Fprintf(w, "\n=== %s ===\n%s\n", m.Role, m.Content)
	}
	for _, t := range p.Tools {
		fmt.Fprintf(w, "\n=== tool %s ===\n%s\nparameters: %s\n", t.Name, t.Description, t.Parameters)
	}
	if o := p.Output; o != nil {
		fmt.Fprintf(w, "\n=== output schema (%s) ===\n%s\n", o.Name, o.Schema)
	}
	return nil
}

func listOrNone(xs []string) string {
	if len(xs) == 0 {
		return "(none)"
	}
	return strings.Join(xs, ", ")
}

// modelFlag checks a --model value (see modelName).
func modelFlag(v string) (string, error) {
	if v == "" {
		return "", nil
	}
	m, err := modelName(v)
	if err != nil {
		return "", configErr(fmt.Errorf("--model: %w", err))
	}
	return m, nil
}

// modelName checks a model named on the command line; a Claude Code alias
// (haiku, sonnet, opus, fable, a claude-... id) resolves to its Anthropic
// model, as in an agent file.
func modelName(v string) (string, error) {
	if m, _, ok := claude.ResolveModel(v); ok && m != "" {
		v = m
	}
	if _, err := llm.ParseModel(v); err != nil {
		return "", err
	}
	return v, nil
}

// budgetFlags are --max-tokens and --max-usd: the root's budget, which
// its agent's [budget] narrows (run, chat, runs resume).
type budgetFlags struct {
	maxTokens int64
	maxUSD    float64
}

func (b *budgetFlags) add(cmd *cobra.Command, of string) {
	fl := cmd.Flags()
	fl.Int64Var(&b.maxTokens, "max-tokens", 0, "token budget of "+of+", sub-agents included; the run stops with status budget after the model call that reaches it (default none)")
	fl.Float64Var(&b.maxUSD, "max-usd", 0, "the same budget in dollars, by the price table; not enforced for a model without a price (default none)")
}

func (b *budgetFlags) get() (config.Budget, error) {
	// The engine's rule, checked here to name the flag before any work.
	if err := delegate.CheckBudget(config.Budget{Tokens: b.maxTokens}); err != nil {
		return config.Budget{}, configErrf("--max-tokens: %v", err)
	}
	if err := delegate.CheckBudget(config.Budget{USD: b.maxUSD}); err != nil {
		return config.Budget{}, configErrf("--max-usd: %v", err)
	}
	return config.Budget{Tokens: b.maxTokens, USD: b.maxUSD}, nil
}

// Package cli is the deputy command: one file per command, sharing the
// workspace loader (settings, agents, providers, ledger) in workspace.go.
// It is the only package that prints.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/deputyhq/deputy/tool/builtin/sandbox"
)

// Exit codes of the deputy command.
const (
	ExitOK          = 0
	ExitFailed      = 1 // the agent failed: max turns, a spent budget, an error it could not recover from
	ExitConfig      = 2 // configuration or usage error
	ExitProvider    = 3 // provider error: auth, unreachable, rate limit after retries, timeout
	ExitInterrupted = 130
)

// exitError carries an exit code up to Main. Its message has been printed
// already when quiet is set.
type exitError struct {
	code  int
	err   error
	quiet bool
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func configErr(err error) error { return &exitError{code: ExitConfig, err: err} }

// withUsageOnArgError makes every command's check of its positional
// arguments fail like a bad flag does: cobra's message alone ("accepts 1
// arg(s), received 0") says neither which command nor what it takes, so the
// error gets the command's usage line and exit code 2.
func withUsageOnArgError(c *cobra.Command) {
	for _, sub := range c.Commands() {
		withUsageOnArgError(sub)
	}
	check := c.Args
	if check == nil {
		return
	}
	c.Args = func(cmd *cobra.Command, args []string) error {
		err := check(cmd, args)
		if err == nil {
			return nil
		}
		return configErr(fmt.Errorf("%w\nUsage: %s\nRun '%s --help' for more.", err, cmd.UseLine(), cmd.CommandPath()))
	}
}

func configErrf(format string, args ...any) error {
	return configErr(fmt.Errorf(format, args...))
}

// Main runs deputy with args and returns its exit code.
//
// When args start with sandbox.HelperArg, the process is the terminal's
// sandbox helper (deputy re-executes itself as one) and exits inside.
func Main(args []string) int {
	sandbox.Main(append([]string{"deputy"}, args...))
	deferFirstGC()
	cmdTiming = newTiming(os.Getenv("DEPUTY_TIMING"))
	cmdTiming.mark("start")
	stopProfile := startCPUProfile(os.Getenv("DEPUTY_CPUPROFILE"), os.Stderr)
	code := run(context.Background(), args, os.Stdin, os.Stdout, os.Stderr)
	stopProfile()
	cmdTiming.print(os.Stderr)
	return code
}

// interruptible returns a context cancelled by Ctrl-C or SIGTERM, for
// commands whose work must stop cleanly (and be recorded as cancelled)
// rather than die. chat handles Ctrl-C itself.
func interruptible(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

// interruptSoon is interruptible begun on another goroutine. A process's
// first signal.Notify starts the runtime's signal-handling thread and waits
// for it (0.1-0.2 ms here), which deputy run spends loading its
// configuration instead: context waits for the handler to be in place, and
// release, which must follow, undoes it.
func interruptSoon(parent context.Context) *pendingInterrupt {
	p := &pendingInterrupt{done: make(chan struct{})}
	go func() {
		p.ctx, p.stop = interruptible(parent)
		close(p.done)
	}()
	return p
}

type pendingInterrupt struct {
	done chan struct{} // closed once ctx and stop are set
	ctx  context.Context
	stop context.CancelFunc
}

func (p *pendingInterrupt) context() context.Context {
	<-p.done
	return p.ctx
}

func (p *pendingInterrupt) release() {
	<-p.done
	p.stop()
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd(stdin, stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(withArgv(ctx, args))
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if !ee.quiet {
			fmt.Fprintln(stderr, "deputy:", ee.err)
		}
		return ee.code
	}
	// Flag and argument errors from cobra are usage errors.
	fmt.Fprintln(stderr, "deputy:", err)
	return ExitConfig
}

// globalFlags are the flags every command accepts.
type globalFlags struct {
	agentsDirs []string
	db         string
	logLevel   string
	subqueries string
	// configFile is --config (default $DEPUTY_CONFIG): one more settings
	// file, read after the user's and the project's.
	configFile string
	allowTools []string
	denyTools  []string
	askTools   []string
}

func newRootCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	g := &globalFlags{}
	root := &cobra.Command{
		Use:   "deputy",
		Short: "Run LLM agents that delegate",
		Long: `deputy runs LLM agents that delegate. A parent agent hands a focused task to a
child agent with its own prompt, skill, tools and limits; the child works through
as many turns as it needs, and only its final result comes back.

Agents are TOML or Markdown files in ~/.config/deputy/agents/, .deputy/agents/ or
--agents-dir; the agents of axe, Claude Code, opencode, Gemini CLI and Codex are
found in their own directories ('deputy agents --help' lists them). Models are
"provider/model": anthropic/claude-sonnet-5-5, openai/gpt-5.6,
gemini/gemini-3-pro, ollama/llama3.2, a custom OpenAI-compatible provider from
config.yaml, or script/FILE for a scripted model that needs no API key;
'deputy doctor' checks your keys.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	pf := root.PersistentFlags()
	pf.StringArrayVar(&g.agentsDirs, "agents-dir", nil, "extra agent directory, winning over the user and project directories (repeatable)")
	pf.StringVar(&g.db, "db", "", "ledger database file (default $DEPUTY_DB, else store.path in config.yaml, else $XDG_DATA_HOME/deputy/deputy.db)")
	pf.StringVar(&g.logLevel, "log-level", "", "log level on stderr: debug, info, warn, error (default $DEPUTY_LOG, else warn)")
	pf.StringSliceVar(&g.allowTools, "allow-tool", nil, "grant only these tools to every agent of the run (repeatable or comma-separated; narrows permissions.tools in config.yaml); a rule with a pattern, such as 'terminal(git:*)', also lets matching calls run without asking")
	pf.StringSliceVar(&g.denyTools, "deny-tool", nil, "refuse this tool to every agent of the run (repeatable or comma-separated); a rule with a pattern, such as 'terminal(rm:*)', refuses the calls it matches")
	pf.StringArrayVar(&g.askTools, "ask-tool", nil, "ask the person who runs the root before calls this rule matches, such as 'terminal' or 'terminal(git push:*)' (repeatable)")
	pf.StringVar(&g.subqueries, "subqueries", "", "INI file of [llm_tool_<name>] specializations, besides the user and project subqueries.ini")
	pf.StringVar(&g.configFile, "config", os.Getenv("DEPUTY_CONFIG"), "settings file read after the user's and the project's config.yaml, such as an xzatoma config.yaml (default $DEPUTY_CONFIG)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return configErr(fmt.Errorf("%w\nRun '%s --help' for usage.", err, c.CommandPath()))
	})

	root.AddCommand(
		newRunCmd(g),
		newChatCmd(g),
		newAgentsCmd(g),
		newConfigCmd(g),
		newRunsCmd(g),
		newSessionsCmd(g),
		newReplayCmd(g),
		newMCPCmd(g),
		newFakeLLMCmd(),
		newDoctorCmd(g),
		newVersionCmd(),
		newWorkerCmd(),
	)
	withUsageOnArgError(root)
	return root
}

package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/internal/cli/live"
	"github.com/deputyhq/deputy/store"
)

type chatFlags struct {
	rootFlags
	session   string
	subagents bool
	verbose   bool
	progress  string
}

const chatHelp = `Commands:
  /help               this help
  /exit, /quit        leave the chat (Ctrl-D too)
  /subagents on|off   give the agent the subagent tool, or take it away
  /session            show this conversation's session id (resume it with --session)
Ctrl-C cancels the answer being written and keeps the chat open.`

func newChatCmd(g *globalFlags) *cobra.Command {
	f := &chatFlags{}
	cmd := &cobra.Command{
		Use:   "chat [agent]",
		Short: "Talk with an agent in the terminal",
		Long: `Talk with an agent in the terminal. Answers stream as they arrive; the agent
may delegate as in 'deputy run', and ask_user questions come to you here.

The conversation is stored as a session in the ledger; resume it later with
--session ID. Without an agent, a general assistant on default_model is used.

` + chatHelp,
		Example: `  deputy chat
  deputy chat reviewer --model openai/gpt-4.1
  deputy chat --session chat-01JB2... `,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			return runChat(cmd, g, f, name)
		},
	}
	fl := cmd.Flags()
	f.rootFlags.add(cmd, "each message's run")
	fl.StringVar(&f.session, "session", "", "resume this session (default: start a new one)")
	fl.BoolVar(&f.subagents, "subagents", false, "start with the subagent tool on (toggle with /subagents on|off)")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "show what each agent does on stderr, one line per step (--progress=plain)")
	fl.StringVar(&f.progress, "progress", progressAuto, "how delegated work shows on stderr while children run: auto (the live tree on a terminal), live, plain (as -v), none")
	return cmd
}

// defaultChatAgent is used when chat names no agent.
func defaultChatAgent() *config.Agent {
	return &config.Agent{Name: "assistant", Description: "a general assistant",
		SystemPrompt:    "You are a helpful assistant working in the user's terminal. Answer plainly and concisely; use your tools when they help.",
		SubagentsConfig: config.DefaultSubagentsConfig()}
}

// lineReader reads lines from the terminal for the chat loop and for
// ask_user, one reader at a time.
type lineReader struct {
	mu  sync.Mutex
	in  *bufio.Reader
	out io.Writer
}

// Close does nothing: the reader does not own its input.
func (r *lineReader) Close() error { return nil }

func (r *lineReader) readLine(prompt string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprint(r.out, prompt)
	line, err := r.in.ReadString('\n')
	if err != nil && (line == "" || !errors.Is(err, io.EOF)) {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// prompt shows text and reads the line typed after it, until ctx ends.
func (r *lineReader) prompt(ctx context.Context, text string) (string, error) {
	type answer struct {
		s   string
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		s, err := r.readLine(text)
		ch <- answer{s, err}
	}()
	select {
	case a := <-ch:
		return a.s, a.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func runChat(cmd *cobra.Command, g *globalFlags, f *chatFlags, name string) error {
	setup, err := prepareRoot(cmd, g, &f.rootFlags, name, defaultChatAgent)
	if err != nil {
		return err
	}
	defer setup.Close()
	w, a := setup.w, setup.agent
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	mode, err := progressMode(f.progress, f.verbose, errOut)
	if err != nil {
		return err
	}
	lines := newChatInput(cmd.InOrStdin(), out)
	defer lines.Close()
	var turnMu sync.Mutex
	var turn *chatTurn
	// Approvals and ask_user's questions are asked here, one at a time;
	// the live tree steps aside while one is answered.
	w.Person = &linePerson{in: lines, aside: func() func() {
		turnMu.Lock()
		t := turn
		turnMu.Unlock()
		if t == nil {
			return func() {}
		}
		return t.pause()
	}}
	ctx := context.WithoutCancel(cmd.Context())
	flushTraces, err := w.startTracing(ctx)
	if err != nil {
		return err
	}
	defer flushTraces()
	ledger, err := w.OpenLedger(ctx)
	if err != nil {
		return err
	}
	defer closeLedger(ledger, cmd.ErrOrStderr())

	session := f.session
	history, exchanges, err := sessionHistory(ctx, ledger, session)
	switch {
	case err != nil:
		return err
	case session == "":
		session = "chat-" + store.NewID()
	case exchanges == 0:
		return &exitError{code: ExitFailed, err: fmt.Errorf("no session %q (see 'deputy sessions list')", session)}
	default:
		fmt.Fprintf(errOut, "Resumed session %s (%d exchanges).\n", session, exchanges)
	}
	// Each turn shows through its own chatTurn; the engine's listener
	// forwards to the current one.
	listeners := []delegate.Listener{func(ev delegate.Event) {
		turnMu.Lock()
		t := turn
		turnMu.Unlock()
		if t != nil {
			t.listen(ev)
		}
	}}
	if mode == progressPlain {
		listeners = append(listeners, live.NewPlain(errOut).Listen)
	}
	stderrFile, _ := errOut.(*os.File)
	var engine *delegate.Engine
	engine = w.Engine(ledger, listeners...)
	subagents := f.subagents || hasTool(a, delegate.ToolSubagent)
	fmt.Fprintf(errOut, "Chatting with %s. /help for commands, /exit to leave.\n", a.Name)

	// Ctrl-C cancels the turn in progress, not the chat.
	interrupts := make(chan os.Signal, 1)
	signal.Notify(interrupts, os.Interrupt)
	defer signal.Stop(interrupts)

	for {
		line, err := lines.readLine("> ")
		if errors.Is(err, errLineInterrupted) {
			continue
		}
		if err != nil {
			fmt.Fprintln(out)
			return nil // EOF: leave quietly
		}
		line = strings.TrimSpace(line)
		switch {
		case line == "":
			continue
		case line == "/exit" || line == "/quit":
			return nil
		case line == "/help":
			fmt.Fprintln(out, chatHelp)
			continue
		case line == "/session":
			fmt.Fprintln(out, session)
			continue
		case strings.HasPrefix(line, "/subagents"):
			switch strings.TrimSpace(strings.TrimPrefix(line, "/subagents")) {
			case "on":
				subagents = true
			case "off":
				subagents = false
			default:
				fmt.Fprintln(out, "usage: /subagents on|off")
				continue
			}
			fmt.Fprintf(out, "subagent tool %s\n", map[bool]string{true: "on", false: "off"}[subagents])
			continue
		case strings.HasPrefix(line, "/"):
			fmt.Fprintf(out, "unknown command %s (/help lists them)\n", strings.Fields(line)[0])
			continue
		}

		turnCtx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			select {
			case <-interrupts:
				cancel()
			case <-done:
			}
		}()
		sub := subagents
		hooks := setup.w.AgentHooks(a)
		t := &chatTurn{out: out, live: mode == progressLive && stderrFile != nil, stderr: stderrFile, tree: live.NewTree(),
			cancel: engine.Cancel, interrupt: cancel}
		turnMu.Lock()
		turn = t
		turnMu.Unlock()
		env := engine.Run(turnCtx, delegate.RunRequest{Agent: a, Task: line, History: history, Model: setup.model,
			Workdir: setup.workdir, SessionID: session, Subagents: &sub, OnText: t.text, Budget: setup.budget, Hooks: hooks})
		t.end()
		close(done)
		cancel()
		fmt.Fprintln(out)
		switch {
		case env.OK():
			ex := env.Exchange(line)
			history = append(history, delegate.SessionHistory([]store.Exchange{ex})...)
			if err := ledger.AppendExchange(ctx, session, ex); err != nil {
				fmt.Fprintln(errOut, "deputy: warning: saving the session:", err)
			}
		case env.Status == delegate.StatusCancelled:
			fmt.Fprintln(errOut, "(cancelled)")
		case errors.Is(env.Err, delegate.ErrConfig):
			return configErr(env.Err)
		default:
			fmt.Fprintf(errOut, "deputy: %s: %s\n", env.Status, env.Error)
		}
	}
}

func hasTool(a *config.Agent, name string) bool {
	for _, t := range a.Tools {
		if t == name {
			return true
		}
	}
	return false
}

package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/internal/cli/live"
	"github.com/deputyhq/deputy/llm"
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
may delegate as in 'deputy run', and approvals and ask_user questions from any
agent of the tree come to you here; 'a' on an approval allows calls like it for
the rest of the chat.

The conversation is stored as a session in the ledger; resume it later with
--session ID. Without an agent, a general assistant on default_model is used.

` + chatHelp,
		Example: `  deputy chat
  deputy chat reviewer --model openai/gpt-5.6
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
	c := &chat{setup: setup, out: cmd.OutOrStdout(), errOut: cmd.ErrOrStderr()}
	if c.mode, err = progressMode(f.progress, f.verbose, c.errOut); err != nil {
		return err
	}
	c.lines = newChatInput(cmd.InOrStdin(), c.out)
	defer c.lines.Close()
	// Approvals and ask_user's questions are asked here, one at a time;
	// the live tree steps aside while one is answered.
	// An "a" allows for the rest of the chat: its messages are runs that
	// share c.approvals.
	setup.w.Person = &linePerson{in: c.lines, aside: c.pauseTurn, span: "this chat"}
	ctx := context.WithoutCancel(cmd.Context())
	if c.rec, err = setup.startRecording(ctx, f.session, false); err != nil {
		return err
	}
	defer c.rec.Close()
	if err := c.resume(f.session); err != nil {
		return err
	}
	c.engine = setup.w.Engine(c.rec.ledger, c.listeners()...)
	c.subagents = f.subagents || slices.Contains(setup.agent.Tools, delegate.ToolSubagent)
	fmt.Fprintf(c.errOut, "Chatting with %s. /help for commands, /exit to leave.\n", setup.agent.Name)
	return c.converse(ctx)
}

// chat is a conversation in the terminal: the root prepared once, and
// the state its turns share.
type chat struct {
	setup       *rootSetup
	rec         *recording
	engine      *delegate.Engine
	lines       chatInput
	out, errOut io.Writer
	mode        string
	session     string
	history     []llm.Message
	subagents   bool // the subagent tool is on (/subagents)
	approvals   delegate.Approvals

	turnMu sync.Mutex
	turn   *chatTurn // the turn that shows, nil before the first
}

// resume names the chat's session: a new one, or session when it holds
// exchanges (their history is the conversation so far).
func (c *chat) resume(session string) error {
	switch {
	case session == "":
		session = "chat-" + store.NewID()
	case c.rec.exchanges == 0:
		return &exitError{code: ExitFailed, err: fmt.Errorf("no session %q (see 'deputy sessions list')", session)}
	default:
		fmt.Fprintf(c.errOut, "Resumed session %s (%d exchanges).\n", session, c.rec.exchanges)
	}
	c.session, c.history = session, c.rec.history
	return nil
}

// currentTurn is the turn that shows, nil before the first.
func (c *chat) currentTurn() *chatTurn {
	c.turnMu.Lock()
	defer c.turnMu.Unlock()
	return c.turn
}

// pauseTurn puts the current turn's live tree aside (linePerson.aside).
func (c *chat) pauseTurn() func() {
	if t := c.currentTurn(); t != nil {
		return t.pause()
	}
	return func() {}
}

// listeners are the engine's: each turn shows through its own chatTurn,
// to which the first forwards; -v adds plain lines.
func (c *chat) listeners() []delegate.Listener {
	ls := []delegate.Listener{func(ev delegate.Event) {
		if t := c.currentTurn(); t != nil {
			t.listen(ev)
		}
	}}
	if c.mode == progressPlain {
		ls = append(ls, live.NewPlain(c.errOut).Listen)
	}
	return ls
}

// converse reads lines until /exit or the end of input: commands are
// answered here, anything else goes to the agent.
func (c *chat) converse(ctx context.Context) error {
	// Ctrl-C cancels the turn in progress, not the chat.
	interrupts := make(chan os.Signal, 1)
	signal.Notify(interrupts, os.Interrupt)
	defer signal.Stop(interrupts)
	if p := c.setup.agent.InitialPrompt; p != "" && len(c.history) == 0 {
		// Claude Code's initialPrompt: a new session's first turn, sent
		// as if typed.
		fmt.Fprintf(c.out, "> %s\n", p)
		if err := c.ask(ctx, p, interrupts); err != nil {
			return err
		}
	}
	for {
		line, err := c.lines.readLine("> ")
		if errors.Is(err, errLineInterrupted) {
			continue
		}
		if err != nil {
			fmt.Fprintln(c.out)
			return nil // EOF: leave quietly
		}
		switch line = strings.TrimSpace(line); {
		case line == "":
		case strings.HasPrefix(line, "/"):
			if leave := c.command(line); leave {
				return nil
			}
		default:
			if err := c.ask(ctx, line, interrupts); err != nil {
				return err
			}
		}
	}
}

// command answers one of chatHelp's commands, and says whether it leaves
// the chat.
func (c *chat) command(line string) (leave bool) {
	switch {
	case line == "/exit" || line == "/quit":
		return true
	case line == "/help":
		fmt.Fprintln(c.out, chatHelp)
	case line == "/session":
		fmt.Fprintln(c.out, c.session)
	case strings.HasPrefix(line, "/subagents"):
		switch strings.TrimSpace(strings.TrimPrefix(line, "/subagents")) {
		case "on":
			c.subagents = true
		case "off":
			c.subagents = false
		default:
			fmt.Fprintln(c.out, "usage: /subagents on|off")
			return false
		}
		fmt.Fprintf(c.out, "subagent tool %s\n", map[bool]string{true: "on", false: "off"}[c.subagents])
	default:
		fmt.Fprintf(c.out, "unknown command %s (/help lists them)\n", strings.Fields(line)[0])
	}
	return false
}

// ask runs one turn: line goes to the agent, whose answer streams to
// stdout until it ends or Ctrl-C (on interrupts) cancels it. Only a
// configuration error ends the chat.
func (c *chat) ask(ctx context.Context, line string, interrupts <-chan os.Signal) error {
	turnCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		select {
		case <-interrupts:
			cancel()
		case <-done:
		}
	}()
	stderrFile, _ := c.errOut.(*os.File)
	t := &chatTurn{out: c.out, live: c.mode == progressLive && stderrFile != nil, stderr: stderrFile, tree: live.NewTree(),
		cancel: c.engine.Cancel, interrupt: cancel}
	c.turnMu.Lock()
	c.turn = t
	c.turnMu.Unlock()
	sub := c.subagents
	req := c.setup.request(line, c.session)
	req.History, req.Subagents, req.OnText, req.Approvals = c.history, &sub, t.text, &c.approvals
	env := c.engine.Run(turnCtx, req)
	t.end()
	close(done)
	cancel()
	fmt.Fprintln(c.out)
	switch {
	case env.OK():
		ex := env.Exchange(line)
		c.history = append(c.history, delegate.SessionHistory([]store.Exchange{ex})...)
		c.rec.save(ctx, c.session, ex)
	case env.Status == delegate.StatusCancelled:
		fmt.Fprintln(c.errOut, "(cancelled)")
	case errors.Is(env.Err, delegate.ErrConfig):
		return configErr(env.Err)
	default:
		fmt.Fprintf(c.errOut, "deputy: %s: %s\n", env.Status, env.Error)
	}
	return nil
}

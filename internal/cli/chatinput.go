package cli

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/chzyer/readline"

	"github.com/deputyhq/deputy/agent"
	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/internal/cli/live"
)

// chatInput is where chat reads its lines and the answers to approvals and
// ask_user's questions.
type chatInput interface {
	readLine(prompt string) (string, error)
	promptReader
	Close() error
}

// errLineInterrupted is Ctrl-C at the prompt: the line is dropped, the chat
// goes on.
var errLineInterrupted = errors.New("line interrupted")

// newChatInput edits lines with history (arrow keys, Ctrl-R, the history
// file chat_history in deputy's data directory) when stdin is a terminal,
// and reads plain lines otherwise.
func newChatInput(in io.Reader, out io.Writer) chatInput {
	f, ok := in.(*os.File)
	if !ok || !readline.IsTerminal(int(f.Fd())) {
		return &lineReader{in: bufio.NewReader(in), out: out}
	}
	history := ""
	if dir := config.DataDir(); dir != "" && os.MkdirAll(dir, 0o700) == nil {
		history = filepath.Join(dir, "chat_history")
	}
	rl, err := readline.NewEx(&readline.Config{Prompt: "> ", HistoryFile: history, Stdin: f, Stdout: out,
		HistorySearchFold: true, DisableAutoSaveHistory: false})
	if err != nil {
		return &lineReader{in: bufio.NewReader(in), out: out}
	}
	return &editedInput{rl: rl}
}

// editedInput is the terminal's line editor.
type editedInput struct {
	mu sync.Mutex
	rl *readline.Instance
}

func (e *editedInput) readLine(prompt string) (string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.rl.SetPrompt(prompt)
	line, err := e.rl.Readline()
	if errors.Is(err, readline.ErrInterrupt) {
		return "", errLineInterrupted
	}
	return line, err
}

func (e *editedInput) prompt(ctx context.Context, text string) (string, error) {
	type answer struct {
		s   string
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		// Answers are not commands worth recalling: keep them out of the
		// history.
		e.rl.Config.DisableAutoSaveHistory = true
		defer func() { e.rl.Config.DisableAutoSaveHistory = false }()
		// The line editor redraws one line: what comes before the last
		// line of text is written above it.
		if i := strings.LastIndex(text, "\n"); i >= 0 {
			io.WriteString(e.rl.Stdout(), text[:i+1])
			text = text[i+1:]
		}
		e.rl.SetPrompt(text)
		s, err := e.rl.Readline()
		ch <- answer{s, err}
	}()
	select {
	case a := <-ch:
		return a.s, a.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (e *editedInput) Close() error { return e.rl.Close() }

// chatTurn shows one chat turn: the root's answer streams to stdout; text
// the model writes before a tool call ends its line; while children run,
// the live tree shows on stderr (live mode), and it is gone before the
// root writes again.
type chatTurn struct {
	mu      sync.Mutex
	out     io.Writer
	midLine bool

	live      bool
	stderr    *os.File
	tree      *live.Tree
	view      *live.View
	cancel    func(runID string) bool
	interrupt func()
}

func (t *chatTurn) text(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s == "" {
		return
	}
	io.WriteString(t.out, s)
	t.midLine = !strings.HasSuffix(s, "\n")
}

func (t *chatTurn) endLine() {
	if t.midLine {
		io.WriteString(t.out, "\n")
		t.midLine = false
	}
}

func (t *chatTurn) listen(ev delegate.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.live {
		t.tree.Listen(ev)
	}
	root := ev.Depth == 0 && ev.Type == delegate.EventProgress
	switch {
	case root && ev.Agent.Kind == agent.EventToolStart:
		t.endLine()
	case root && ev.Agent.Kind == agent.EventModelStart && t.view != nil:
		// The root answers again: the tree steps aside first.
		t.view.Stop()
		t.view = nil
	case ev.Type == delegate.EventSpawn && t.live && t.view == nil:
		t.endLine()
		t.view = live.Start(context.Background(), t.stderr, live.Options{Cancel: t.cancel, Interrupt: t.interrupt, Tree: t.tree, Vanish: true})
	}
}

// end takes the live tree away, if it still shows (the caller ends the
// answer's line).
func (t *chatTurn) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.view != nil {
		t.view.Stop()
		t.view = nil
	}
}

// pause puts the live tree aside (an ask_user question) and returns what
// brings it back.
func (t *chatTurn) pause() func() {
	t.mu.Lock()
	v := t.view
	t.mu.Unlock()
	if v == nil {
		return func() {}
	}
	v.Pause()
	return v.Resume
}

package live

import (
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/deputyhq/deputy/approval"
)

// Refresh is how often the live view redraws.
const Refresh = 150 * time.Millisecond

// Options are the live view's hooks into the run it shows.
type Options struct {
	// Cancel cancels one running run (the selected child); nil disables
	// the key.
	Cancel func(runID string) bool
	// Interrupt stops the whole run (ctrl+c: the terminal is in raw mode,
	// so the key does not raise SIGINT).
	Interrupt func()
	// Input is where keys come from; nil reads the terminal (stdin, or
	// /dev/tty when stdin is redirected).
	Input io.Reader
	// Vanish leaves nothing on the terminal when the view stops (chat,
	// whose answer goes on below); otherwise the root's row and the totals
	// stay.
	Vanish bool
	// Tree is the tree to show, when the caller feeds one already; nil
	// starts an empty one (View.Tree).
	Tree *Tree
}

// View is the live tree on a terminal. Its Tree is the listener to add to
// the engine; the view redraws from it on its own clock, so a burst of
// events never waits on the terminal.
type View struct {
	Tree *Tree
	prog *tea.Program
	done chan struct{}
	once sync.Once
}

// Start shows the view on out (stderr) until Stop.
func Start(ctx context.Context, out *os.File, opts Options) *View {
	v := &View{Tree: opts.Tree, done: make(chan struct{})}
	if v.Tree == nil {
		v.Tree = NewTree()
	}
	m := &model{tree: v.Tree, opts: opts}
	popts := []tea.ProgramOption{tea.WithOutput(out), tea.WithContext(ctx), tea.WithoutSignalHandler()}
	if opts.Input != nil {
		popts = append(popts, tea.WithInput(opts.Input))
	}
	v.prog = tea.NewProgram(m, popts...)
	go func() {
		defer close(v.done)
		_, _ = v.prog.Run()
	}()
	return v
}

// Stop draws the final state and gives the terminal back. It waits for the
// view to finish, so that nothing the caller prints next mixes with it.
func (v *View) Stop() {
	v.once.Do(func() {
		v.prog.Send(stopMsg{})
		select {
		case <-v.done:
		case <-time.After(2 * time.Second):
			v.prog.Kill()
			<-v.done
		}
	})
}

// Pause gives the terminal back for a while (a question to the user);
// Resume takes it again.
func (v *View) Pause() { _ = v.prog.ReleaseTerminal() }

// Resume redraws after Pause.
func (v *View) Resume() { _ = v.prog.RestoreTerminal() }

type tickMsg time.Time
type stopMsg struct{}

type model struct {
	tree          *Tree
	opts          Options
	width, height int
	selected      string
	shown         []string
	snap          Snapshot
	stopping      bool
	note          string
	// ask is the requests to the person waiting for an answer (ask.go).
	ask prompt
}

func tick() tea.Cmd {
	return tea.Tick(Refresh, func(t time.Time) tea.Msg { return tickMsg(t) })
}

func (m *model) Init() tea.Cmd { return tick() }

func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case tickMsg:
		m.snap = m.tree.Snapshot()
		return m, tick()
	case stopMsg:
		m.snap = m.tree.Snapshot()
		m.stopping = true
		for len(m.ask.queue) > 0 {
			m.ask.answer(approval.Answer{}) // nobody is left to answer: the run is over
		}
		return m, tea.Quit
	case askMsg:
		m.ask.queue = append(m.ask.queue, pending(msg))
	case dropMsg:
		m.ask.drop(msg.id)
	case tea.KeyPressMsg:
		if msg.String() != "ctrl+c" && m.ask.key(msg) {
			return m, nil
		}
		switch msg.String() {
		case "ctrl+c":
			if m.opts.Interrupt != nil {
				m.opts.Interrupt()
				m.note = "stopping…"
			}
		case "up", "k":
			m.move(-1)
		case "down", "j":
			m.move(+1)
		case "x", "delete":
			if r := m.snap.Rows[m.selected]; r != nil && !r.Done() && m.opts.Cancel != nil {
				if m.opts.Cancel(m.selected) {
					m.note = "cancelled " + r.Label + "#" + ShortID(r.ID)
				}
			}
		}
	}
	return m, nil
}

// move selects the next running child row up or down.
func (m *model) move(dir int) {
	var ids []string
	for _, id := range m.shown {
		if r := m.snap.Rows[id]; r != nil && !r.Done() && r.ParentID != "" {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		m.selected = ""
		return
	}
	i := -1
	for k, id := range ids {
		if id == m.selected {
			i = k
		}
	}
	switch {
	case i < 0 && dir > 0:
		i = 0
	case i < 0:
		i = len(ids) - 1
	default:
		i = (i + dir + len(ids)) % len(ids)
	}
	m.selected = ids[i]
}

func (m *model) View() tea.View {
	if m.stopping && m.opts.Vanish {
		return tea.NewView("")
	}
	if m.stopping {
		// The final frame stays on the terminal: the collapsed tree.
		text, _ := Render(m.snap, Layout{Width: m.width, Height: m.height, Now: time.Now(), Final: true})
		return tea.NewView(text + "\n")
	}
	ask := m.ask.view(m.width)
	height := m.height
	if ask != "" {
		height = max(height-strings.Count(ask, "\n")-2, 6)
	}
	text, shown := Render(m.snap, Layout{Width: m.width, Height: height, Selected: m.selected, Now: time.Now()})
	m.shown = shown
	if m.note != "" {
		text += "\n" + m.note
	}
	if ask != "" {
		text += "\n\n" + ask
	}
	return tea.NewView(text)
}

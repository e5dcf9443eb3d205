package live

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/deputyhq/deputy/tool"
)

// Layout is what Render needs besides the tree.
type Layout struct {
	// Width and Height of the terminal; 0 means 100 and 24.
	Width, Height int
	// Selected is the run id the cursor is on ("" = none).
	Selected string
	Now      time.Time
	// Plain renders without colours (tests, captures).
	Plain bool
	// Final is the frame left on the terminal when the run is over: the
	// root's row and the totals, without the keys.
	Final bool
}

var (
	styleName     = lipgloss.NewStyle().Bold(true)
	styleDim      = lipgloss.NewStyle().Faint(true)
	styleThinking = lipgloss.NewStyle().Foreground(lipgloss.Color("6"))
	styleThought  = lipgloss.NewStyle().Foreground(lipgloss.Color("6")).Italic(true).Faint(true)
	styleTool     = lipgloss.NewStyle().Foreground(lipgloss.Color("4"))
	styleRetry    = lipgloss.NewStyle().Foreground(lipgloss.Color("3")).Bold(true)
	styleFailed   = lipgloss.NewStyle().Foreground(lipgloss.Color("1")).Bold(true)
	styleDone     = lipgloss.NewStyle().Foreground(lipgloss.Color("2"))
	styleSelected = lipgloss.NewStyle().Reverse(true)
)

// Render draws the tree: a header, one row per shown run indented by
// depth, a line counting the runs left out, and a footer with the totals.
// Finished subtrees collapse into their top run's row. When the rows do
// not fit the height, the busiest are shown (running before finished, the
// most recently active first) with their ancestors, in tree order. It
// returns the text and the ids of the rows shown, top to bottom.
func Render(s Snapshot, l Layout) (string, []string) {
	if l.Width <= 0 {
		l.Width = 100
	}
	if l.Height <= 0 {
		l.Height = 24
	}
	if len(s.Order) == 0 {
		return "starting…", nil
	}
	style := func(st lipgloss.Style, text string) string {
		if l.Plain {
			return text
		}
		return st.Render(text)
	}
	running := runningChildren(s)
	candidates := treeOrder(s)
	if l.Final {
		candidates = candidates[:1]
	}
	room := max(l.Height-4, 3)
	shown := candidates
	if len(candidates) > room {
		shown = busiest(s, candidates, room, l.Selected)
	}

	var b strings.Builder
	nameW := nameWidth(s, shown, l.Width)
	// A running run's task list shows as one line under it, where the
	// rows leave room for all of them.
	withTasks := 0
	for _, id := range shown {
		if r := s.Rows[id]; !r.Done() && len(r.Todos) > 0 {
			withTasks++
		}
	}
	showTasks := !l.Final && len(shown)+withTasks <= room
	b.WriteString(style(styleDim, ansi.Truncate(fmt.Sprintf("  %-*s %-32s %5s %7s %8s %7s  %s", nameW, "AGENT", "STATE", "TURNS", "TOKENS", "COST", "TIME", "TASK"), l.Width, "")))
	b.WriteByte('\n')
	for _, id := range shown {
		r := s.Rows[id]
		state := r.State(l.Now, running[id])
		st := stateStyle(r, state)
		if r.Done() && len(r.children) > 0 {
			state += fmt.Sprintf(" (+%d)", countBelow(s, id))
		}
		name := strings.Repeat("  ", r.Depth) + r.Label + "#" + ShortID(r.ID)
		marker := "  "
		if id == l.Selected {
			marker = "› "
		}
		line := fmt.Sprintf("%s%s %s %5d %7s %8s %7s  %s", marker, style(styleName, pad(name, nameW)), style(st, pad(state, 32)),
			r.Turns, tokens(subtreeTokens(s, id)), USD(subtreeCost(s, id)), elapsed(r, l.Now), lastColumn(r, style))
		if id == l.Selected && !l.Plain {
			line = styleSelected.Render(marker) + line[len(marker):]
		}
		b.WriteString(ansi.Truncate(line, l.Width, "…"))
		b.WriteByte('\n')
		if showTasks && !r.Done() && len(r.Todos) > 0 {
			task := fmt.Sprintf("  %s  ↳ %s (%s)", strings.Repeat("  ", r.Depth), Excerpt(CurrentTask(r.Todos), 200), TodoProgress(r.Todos))
			b.WriteString(style(styleDim, ansi.Truncate(task, l.Width, "…")))
			b.WriteByte('\n')
		}
	}
	if left := len(s.Order) - len(shown); left > 0 && !l.Final {
		b.WriteString(style(styleDim, fmt.Sprintf("  … %d more not shown", left)))
		b.WriteByte('\n')
	}
	foot := footer(s, l.Now)
	if !l.Final {
		foot += " · ↑↓ select, x cancel, ctrl+c stop"
	}
	b.WriteString(ansi.Truncate(foot, l.Width, "…"))
	return b.String(), shown
}

// nameWidth is the width of the agent column: the widest of the shown
// rows' indented names, at most a third of the terminal's width.
func nameWidth(s Snapshot, shown []string, width int) int {
	w := 12
	for _, id := range shown {
		r := s.Rows[id]
		w = max(w, 2*r.Depth+len(r.Label)+1+ShortIDLen+2)
	}
	return min(w, width/3)
}

// stateStyle is how a row's state shows: what it waits for, whether it
// ended well.
func stateStyle(r *Row, state string) lipgloss.Style {
	switch {
	case strings.HasPrefix(state, "retrying"):
		return styleRetry
	case state == "thinking":
		return styleThinking
	case strings.HasPrefix(state, "running"), strings.HasPrefix(state, "waiting"):
		return styleTool
	case state == "done":
		return styleDone
	case r.Done():
		return styleFailed
	}
	return styleDim
}

// CurrentTask is the task a list says is being done: the first in
// progress (as its active form where it has one), else the first pending,
// else the last one.
func CurrentTask(items []tool.TodoItem) string {
	for _, t := range items {
		if t.Status == tool.TodoInProgress {
			if t.ActiveForm != "" {
				return t.ActiveForm
			}
			return t.Content
		}
	}
	for _, t := range items {
		if t.Status == tool.TodoPending {
			return "next: " + t.Content
		}
	}
	return items[len(items)-1].Content
}

// lastColumn is a row's task, or while it works and its model thinks
// aloud (where its provider says), the latest words of that thinking,
// marked apart from any answer.
func lastColumn(r *Row, style func(lipgloss.Style, string) string) string {
	if r.Thought != "" && !r.Done() {
		return style(styleThought, "~ "+thoughtEnd(r.Thought, 80))
	}
	return Excerpt(r.Task, 200)
}

// thoughtEnd is the end of s on one line, at most n bytes, led by "…"
// when cut.
func thoughtEnd(s string, n int) string {
	s = OneLine(s)
	if len(s) <= n {
		return s
	}
	return "…" + tail(s, n)
}

func pad(s string, n int) string {
	if w := ansi.StringWidth(s); w < n {
		return s + strings.Repeat(" ", n-w)
	}
	return ansi.Truncate(s, n, "…")
}

// footer is the tree's totals.
func footer(s Snapshot, now time.Time) string {
	var run, queued, retrying, done, failed, cancelled int
	var toks, input, cacheRead int64
	children := map[string]int{}
	for _, r := range s.Rows {
		if !r.Done() {
			children[r.ParentID]++
		}
	}
	for _, r := range s.Rows {
		toks += r.Tokens
		input, cacheRead = input+r.Input, cacheRead+r.CacheRead
		st := r.State(now, children[r.ID])
		switch {
		case r.Done() && r.Status == "ok":
			done++
		case r.Done() && r.Status == "cancelled":
			cancelled++
		case r.Done():
			failed++
		case strings.HasPrefix(st, "retrying"):
			retrying++
		case st == "queued":
			queued++
		default:
			run++
		}
	}
	root := s.Rows[s.Order[0]]
	counts := fmt.Sprintf("%d running, %d queued, %d retrying, %d done, %d failed", run, queued, retrying, done, failed)
	if cancelled > 0 {
		counts += fmt.Sprintf(", %d cancelled", cancelled)
	}
	cost := ""
	if usd := subtreeCost(s, s.Order[0]); usd != nil {
		cost = " · " + USD(usd)
	}
	cached := ""
	if share := CacheShare(cacheRead, input); share != "" {
		cached = " (" + share + ")"
	}
	return fmt.Sprintf("%s: %s · %s tokens%s%s · %s", plural(len(s.Rows), "run", "runs"), counts, tokens(toks), cached, cost, elapsed(root, now))
}

// CacheShare says how much of the input was read from the provider's
// prompt cache ("74% of input cached", rounded down), or "" when none
// was.
func CacheShare(cacheRead, input int64) string {
	if cacheRead <= 0 || input <= 0 {
		return ""
	}
	return fmt.Sprintf("%d%% of input cached", min(cacheRead, input)*100/input)
}

func tokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

func elapsed(r *Row, now time.Time) string {
	end := now
	if r.Done() {
		end = r.Finished
	}
	d := end.Sub(r.Started)
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// runningChildren counts each run's children still working.
func runningChildren(s Snapshot) map[string]int {
	out := map[string]int{}
	for _, r := range s.Rows {
		if !r.Done() && r.ParentID != "" {
			out[r.ParentID]++
		}
	}
	return out
}

// treeOrder lists the rows to show in depth-first order, children in
// start order, skipping what lies below a finished run.
func treeOrder(s Snapshot) []string {
	var out []string
	var walk func(id string)
	walk = func(id string) {
		r := s.Rows[id]
		out = append(out, id)
		if r.Done() && r.ParentID != "" {
			return
		}
		for _, c := range r.children {
			walk(c)
		}
	}
	walk(s.Order[0])
	return out
}

func countBelow(s Snapshot, id string) int {
	n := 0
	for _, c := range s.Rows[id].children {
		n += 1 + countBelow(s, c)
	}
	return n
}

func subtreeTokens(s Snapshot, id string) int64 {
	r := s.Rows[id]
	n := r.Tokens
	for _, c := range r.children {
		n += subtreeTokens(s, c)
	}
	return n
}

// subtreeCost is what the run and everything under it cost so far; nil
// when a model without a price was called.
func subtreeCost(s Snapshot, id string) *float64 {
	r := s.Rows[id]
	if r.CostUnknown {
		return nil
	}
	n := r.Cost
	for _, c := range r.children {
		v := subtreeCost(s, c)
		if v == nil {
			return nil
		}
		n += *v
	}
	return &n
}

// busiest picks at most room rows of candidates: the root, the selected
// row, then running rows before finished ones, most recently active first,
// each with its ancestors; returned in tree order.
func busiest(s Snapshot, candidates []string, room int, selected string) []string {
	pos := make(map[string]int, len(candidates))
	for i, id := range candidates {
		pos[id] = i
	}
	ranked := append([]string(nil), candidates...)
	sort.SliceStable(ranked, func(i, j int) bool {
		a, b := s.Rows[ranked[i]], s.Rows[ranked[j]]
		if a.Done() != b.Done() {
			return !a.Done()
		}
		return a.lastActive.After(b.lastActive)
	})
	picked := map[string]bool{}
	add := func(id string) bool {
		var chain []string
		for c := id; c != "" && !picked[c]; c = s.Rows[c].ParentID {
			if _, ok := pos[c]; !ok {
				break
			}
			chain = append(chain, c)
		}
		if len(picked)+len(chain) > room {
			return false
		}
		for _, c := range chain {
			picked[c] = true
		}
		return true
	}
	add(s.Order[0])
	if selected != "" {
		add(selected)
	}
	for _, id := range ranked {
		if len(picked) >= room {
			break
		}
		add(id)
	}
	out := make([]string, 0, len(picked))
	for id := range picked {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return pos[out[i]] < pos[out[j]] })
	return out
}

package cli

// What the ledger commands (runs, sessions, replay) share: opening the
// ledger without loading agents, the JSON shapes of runs and messages, and
// their human rendering.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/deputyhq/deputy/internal/cli/live"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/store"
	"github.com/deputyhq/deputy/workspace"
)

// openLedger opens the ledger the workspace would use, for the commands
// that read it: they need only the settings (for store.path), not the
// agents. When the file does not exist yet it returns a nil store and no
// error: there is nothing to show, and reading should not create a
// database as a side effect.
func openLedger(cmd *cobra.Command, g *globalFlags) (*store.Store, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	s, err := workspace.LoadSettings(g.settingsPaths(cwd))
	if err != nil {
		return nil, configErr(err)
	}
	path := workspace.LedgerPath(g.options(cwd), s)
	if path == "" {
		return nil, configErrf("cannot find the ledger: set --db, $DEPUTY_DB or HOME")
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	st, err := store.Open(cmd.Context(), path)
	if err != nil {
		return nil, failed(fmt.Errorf("opening the ledger: %w", err))
	}
	return st, nil
}

// readLedger runs read on the ledger openLedger opens (nil when there is
// none yet) and closes it after.
func readLedger(cmd *cobra.Command, g *globalFlags, read func(st *store.Store) error) error {
	st, err := openLedger(cmd, g)
	if err != nil {
		return err
	}
	if st != nil {
		defer st.Close()
	}
	return read(st)
}

// failed marks an error that is neither the user's configuration nor a
// provider's: exit code 1.
func failed(err error) error { return &exitError{code: ExitFailed, err: err} }

// lastRun is the id that names the newest run instead of one id. "l" is
// not a Crockford base32 digit, so no ULID prefix can be mistaken for it.
const lastRun = "last"

// getRun looks a run up by id or unique prefix, or, when id is "last",
// takes the newest run any of lastOf selects. It turns the store's errors
// into messages that say what to do.
func getRun(ctx context.Context, st *store.Store, id string, lastOf ...store.RunFilter) (*store.Run, error) {
	if st == nil {
		return nil, failed(fmt.Errorf("no run with id %q: the ledger is empty", id))
	}
	if strings.EqualFold(id, lastRun) {
		return newestRun(ctx, st, lastOf)
	}
	// "writer#2A3YCB", as the progress views name runs, is the tail 2A3YCB.
	if i := strings.LastIndex(id, "#"); i >= 0 {
		id = id[i+1:]
	}
	r, err := st.GetRun(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, failed(fmt.Errorf("no run with id %q (see 'deputy runs list --all')", id))
	case errors.Is(err, store.ErrAmbiguous):
		return nil, configErrf("run id %q matches more than one run; give more of it", id)
	case err != nil:
		return nil, failed(err)
	}
	return r, nil
}

// newestRun returns the most recently started run among those the
// filters select, asking for one run per filter.
func newestRun(ctx context.Context, st *store.Store, filters []store.RunFilter) (*store.Run, error) {
	var best *store.Run
	for _, f := range filters {
		f.Limit = 1
		rs, err := st.ListRuns(ctx, f)
		if err != nil {
			return nil, failed(err)
		}
		if len(rs) == 1 && (best == nil || rs[0].StartedAt.After(best.StartedAt) ||
			(rs[0].StartedAt.Equal(best.StartedAt) && rs[0].ID > best.ID)) {
			best = &rs[0]
		}
	}
	if best == nil {
		return nil, failed(errors.New("no matching runs recorded yet"))
	}
	return best, nil
}

// runView is the JSON shape of a run. As in 'deputy run --json', "usage"
// is the whole subtree's and "own_usage" the run's own model calls.
type runView struct {
	ID         string     `json:"id"`
	ParentID   string     `json:"parent_id,omitempty"`
	RootID     string     `json:"root_id"`
	Agent      string     `json:"agent"`
	Kind       string     `json:"kind"`
	Depth      int        `json:"depth"`
	Model      string     `json:"model"`
	Status     string     `json:"status"`
	Error      string     `json:"error,omitempty"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
	DurationMS int64      `json:"duration_ms"`
	Usage      llm.Usage  `json:"usage"`
	OwnUsage   llm.Usage  `json:"own_usage"`
	// CostUSD is the whole subtree's cost in US dollars, OwnCostUSD the run's
	// own model calls'; null when unknown (a model without a price).
	CostUSD    *float64 `json:"cost_usd"`
	OwnCostUSD *float64 `json:"own_cost_usd"`
	Turns      int      `json:"turns"`
	Task       string   `json:"task"`
	Output     string   `json:"output"`
	SessionID  string   `json:"session_id,omitempty"`
	// Attempt counts the times the run was started (deputy runs resume).
	Attempt int `json:"attempt"`
	// Executor is "temporal" for a run on Temporal, which Temporal
	// locates; absent for a run in the process that recorded it.
	Executor string        `json:"executor,omitempty"`
	Temporal *temporalView `json:"temporal,omitempty"`
	// Budget is the run's own tokens and dollars budget as it started
	// (--max-tokens, --max-usd, its agent's [budget]; a resume holds it
	// to it); absent when it had none.
	Budget *runBudgetView `json:"budget,omitempty"`
	// Effort and Isolation, on a root, are the reasoning effort and the
	// isolation it was started with (run --effort, else its agent's; run
	// --isolation), which a resume goes on with; absent when none.
	Effort    string `json:"effort,omitempty"`
	Isolation string `json:"isolation,omitempty"`
}

// runBudgetView is a run's recorded budget; an unset cap is null.
type runBudgetView struct {
	Tokens *int64   `json:"tokens"`
	USD    *float64 `json:"usd"`
}

// text is the budget on one line.
func (b *runBudgetView) text() string {
	var parts []string
	if b.Tokens != nil {
		parts = append(parts, fmt.Sprintf("tokens %d", *b.Tokens))
	}
	if b.USD != nil {
		parts = append(parts, fmt.Sprintf("usd $%g", *b.USD))
	}
	return strings.Join(parts, ", ")
}

// temporalView locates a run on Temporal.
type temporalView struct {
	Address    string `json:"address"`
	Namespace  string `json:"namespace"`
	TaskQueue  string `json:"task_queue"`
	WorkflowID string `json:"workflow_id"`
}

// statusText is a run's status as the tables show it: a run on Temporal
// says that it runs there.
func (v runView) statusText() string {
	if v.Executor != "" && v.Status == string(store.StatusRunning) {
		return v.Status + " on " + v.Executor
	}
	return v.Status
}

func viewRun(r *store.Run) runView {
	v := runView{ID: r.ID, ParentID: r.ParentID, RootID: r.RootID, Agent: r.Agent, Kind: string(r.Kind), Depth: r.Depth,
		Model: r.Model, Status: string(r.Status), Error: r.Error, StartedAt: r.StartedAt,
		Usage: llm.Usage{InputTokens: r.TreeInputTokens, OutputTokens: r.TreeOutputTokens,
			CacheReadTokens: r.TreeCacheReadTokens, CacheWriteTokens: r.TreeCacheWriteTokens, ReasoningTokens: r.TreeReasoningTokens},
		OwnUsage: llm.Usage{InputTokens: r.InputTokens, OutputTokens: r.OutputTokens,
			CacheReadTokens: r.CacheReadTokens, CacheWriteTokens: r.CacheWriteTokens, ReasoningTokens: r.ReasoningTokens},
		CostUSD: r.CostUSD, OwnCostUSD: r.OwnCostUSD,
		Turns: r.Turns, Task: r.Task, Output: r.Output, SessionID: r.SessionID, Attempt: r.Attempt, Executor: r.Executor,
		Effort: r.Effort, Isolation: r.Isolation}
	if r.BudgetTokens > 0 || r.BudgetUSD > 0 {
		v.Budget = &runBudgetView{}
		if r.BudgetTokens > 0 {
			v.Budget.Tokens = &r.BudgetTokens
		}
		if r.BudgetUSD > 0 {
			v.Budget.USD = &r.BudgetUSD
		}
	}
	if r.Executor == store.ExecutorTemporal {
		v.Temporal = &temporalView{Address: r.Temporal.Address, Namespace: r.Temporal.Namespace,
			TaskQueue: r.Temporal.TaskQueue, WorkflowID: r.ID}
	}
	if !r.FinishedAt.IsZero() {
		t := r.FinishedAt
		v.FinishedAt = &t
		v.DurationMS = r.FinishedAt.Sub(r.StartedAt).Milliseconds()
	}
	return v
}

func viewRuns(rs []store.Run) []runView {
	out := make([]runView, 0, len(rs))
	for i := range rs {
		out = append(out, viewRun(&rs[i]))
	}
	return out
}

// messageView is the JSON shape of one message of a conversation.
type messageView struct {
	Seq     int    `json:"seq"`
	Role    string `json:"role"`
	Content string `json:"content"`
	// Reasoning is the summary of the model's thinking on the turn, apart
	// from what it said. The provider's opaque state is not shown.
	Reasoning  string          `json:"reasoning,omitempty"`
	ToolCalls  []llm.ToolCall  `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	ToolName   string          `json:"tool_name,omitempty"`
	IsError    bool            `json:"is_error,omitempty"`
	Usage      *llm.Usage      `json:"usage,omitempty"`
	CreatedAt  time.Time       `json:"created_at"`
	RawCalls   json.RawMessage `json:"-"`
}

func viewMessages(ms []store.Message) []messageView {
	out := make([]messageView, 0, len(ms))
	for _, m := range ms {
		v := messageView{Seq: m.Seq, Role: m.Role, Content: m.Content, Reasoning: m.Reasoning, ToolCallID: m.ToolCallID,
			ToolName: m.ToolName, IsError: m.IsError, CreatedAt: m.CreatedAt, RawCalls: m.ToolCalls}
		if len(m.ToolCalls) > 0 && json.Unmarshal(m.ToolCalls, &v.ToolCalls) != nil {
			v.ToolCalls = nil // shown raw below rather than lost
		}
		u := llm.Usage{InputTokens: m.InputTokens, OutputTokens: m.OutputTokens,
			CacheReadTokens: m.CacheReadTokens, CacheWriteTokens: m.CacheWriteTokens, ReasoningTokens: m.ReasoningTokens,
			WebSearches: m.WebSearches}
		if u != (llm.Usage{}) {
			v.Usage = &u
		}
		out = append(out, v)
	}
	return out
}

// printRunHeader prints a run's fields, one per line.
func printRunHeader(out io.Writer, v runView) {
	tw := newTable(out)
	row := func(k, val string) { fmt.Fprintf(tw, "%s:\t%s\n", k, val) }
	row("run", v.ID)
	row("agent", v.Agent)
	row("kind", fmt.Sprintf("%s, depth %d", v.Kind, v.Depth))
	if v.ParentID != "" {
		row("parent", v.ParentID)
		row("root", v.RootID)
	}
	row("model", orDash(v.Model))
	if v.Effort != "" {
		row("effort", v.Effort)
	}
	status := v.statusText()
	if v.Error != "" {
		status += ": " + v.Error
	}
	row("status", status)
	if t := v.Temporal; t != nil {
		row("temporal", fmt.Sprintf("%s, namespace %s, task queue %s, workflow %s", t.Address, t.Namespace, t.TaskQueue, t.WorkflowID))
	}
	row("turns", fmt.Sprint(v.Turns))
	row("tokens", fmt.Sprintf("%s (own: %s)", usageText(v.Usage), usageText(v.OwnUsage)))
	row("cost", fmt.Sprintf("%s (own: %s)", live.USD(v.CostUSD), live.USD(v.OwnCostUSD)))
	if v.Budget != nil {
		row("budget", v.Budget.text())
	}
	if v.Isolation != "" {
		row("isolation", v.Isolation)
	}
	row("started", formatTime(v.StartedAt))
	row("duration", durationText(v))
	if v.Attempt > 1 {
		row("attempt", fmt.Sprint(v.Attempt))
	}
	if v.SessionID != "" {
		row("session", v.SessionID)
	}
	tw.Flush()
	if strings.TrimSpace(v.Task) != "" {
		fmt.Fprintf(out, "task:\n%s\n", indent(strings.TrimRight(v.Task, "\n"), "    "))
	}
	if v.Temporal != nil && v.Status == string(store.StatusRunning) {
		fmt.Fprintf(out, "It runs on Temporal: 'deputy runs resume %s' waits for it and records its tree here.\n", v.ID)
	}
}

// printConversation prints messages in order: each with its role, tool
// calls with their arguments, tool results with their error flag.
func printConversation(out io.Writer, ms []messageView) {
	for _, m := range ms {
		head := fmt.Sprintf("[%d] %s", m.Seq, m.Role)
		switch {
		case m.Role == "tool":
			head += " " + orDash(m.ToolName)
			if m.ToolCallID != "" {
				head += " (" + m.ToolCallID + ")"
			}
			if m.IsError {
				head += " ERROR"
			}
		case m.Usage != nil:
			head += " (" + usageText(*m.Usage) + ")"
		}
		fmt.Fprintln(out, head)
		if m.Reasoning != "" {
			// The model's thinking, marked apart from what it said.
			fmt.Fprintln(out, "    thinking:")
			fmt.Fprintln(out, indent(strings.TrimRight(m.Reasoning, "\n"), "    ¦ "))
		}
		if m.Content != "" {
			fmt.Fprintln(out, indent(strings.TrimRight(m.Content, "\n"), "    "))
		}
		for _, c := range m.ToolCalls {
			fmt.Fprintf(out, "    → %s(%s) %s\n", c.Name, c.ID, compactJSON(c.Arguments))
		}
		if m.ToolCalls == nil && len(m.RawCalls) > 0 {
			fmt.Fprintf(out, "    → tool calls (unreadable): %s\n", m.RawCalls)
		}
	}
}

func compactJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw) // a model may send broken arguments; show them as they came
	}
	return b.String()
}

func usageText(u llm.Usage) string {
	text := fmt.Sprintf("%d in / %d out", u.InputTokens, u.OutputTokens)
	if share := live.CacheShare(u.CacheReadTokens, u.InputTokens); share != "" {
		text += ", " + share
	}
	return text
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

// durationText is a run's wall time, or what it is doing instead.
func durationText(v runView) string {
	if v.FinishedAt == nil {
		if v.Status == string(store.StatusRunning) {
			return "running"
		}
		return "-"
	}
	if v.DurationMS < 1 {
		return "<1ms"
	}
	return live.Round(time.Duration(v.DurationMS) * time.Millisecond).String()
}

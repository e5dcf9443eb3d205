package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/internal/cli/live"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/store"
	"github.com/deputyhq/deputy/tool"
)

func newRunsCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List and inspect recorded runs",
		Long: `Every run is recorded in the ledger (see 'deputy config path'): the root run
you started and each child it delegated to, with their messages, tool calls,
token usage and timing. These commands read it back.

A run id may be given whole, as any unique prefix or as its random tail (the
last characters, as -v and the live view show them: lead#2A3YCB or 2A3YCB),
in upper or lower case, or as "last" for the newest root run.`,
		Example: `  deputy runs list
  deputy runs show 2A3YCB
  deputy runs tree 2A3YCB
  deputy runs resume last
  deputy runs diff last
  deputy runs clean`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newRunsListCmd(g), newRunsShowCmd(g), newRunsTreeCmd(g), newRunsResumeCmd(g), newRunsDiffCmd(g), newRunsCleanCmd(g))
	return cmd
}

type runsListFlags struct {
	agent  string
	status string
	since  string
	limit  int
	all    bool
	json   bool
}

func newRunsListCmd(g *globalFlags) *cobra.Command {
	f := &runsListFlags{}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List recorded runs, newest first",
		Long: `List root runs, newest first: id, agent, kind, status, tokens of the whole tree
(input + output), its cost in US dollars ("-" when a model without a price
was called), wall time, start time and the task. --all lists the child
runs too (call_agent, subagent and subquery runs).

--since takes a duration back from now (90m, 24h, 7d) or a date
(2025-01-31, 2025-01-31T09:00:00Z).`,
		Example: `  deputy runs list
  deputy runs list --agent reviewer --status error --since 7d
  deputy runs list --all --limit 50 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return listRuns(cmd, g, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.agent, "agent", "", "only runs of this agent (or sub-agent label)")
	fl.StringVar(&f.status, "status", "", "only runs with this status: ok, error, timeout, cancelled, max_turns, budget, interrupted, running")
	fl.StringVar(&f.since, "since", "", "only runs started since: a duration back from now (24h, 7d) or a date (2025-01-31)")
	fl.IntVar(&f.limit, "limit", 20, "at most this many runs (0 = no limit)")
	fl.BoolVar(&f.all, "all", false, "include child runs, not only root runs")
	fl.BoolVar(&f.json, "json", false, "print a JSON array of runs")
	return cmd
}

func listRuns(cmd *cobra.Command, g *globalFlags, f *runsListFlags) error {
	filter := store.RunFilter{Agent: f.agent, Status: store.Status(f.status), RootsOnly: !f.all, Limit: f.limit}
	if f.limit < 0 {
		return configErrf("--limit must not be negative (got %d)", f.limit)
	}
	if f.since != "" {
		t, err := parseSince(f.since, time.Now())
		if err != nil {
			return configErr(fmt.Errorf("--since: %w", err))
		}
		filter.Since = clampToLedger(t)
	}
	st, err := openLedger(cmd, g)
	if err != nil {
		return err
	}
	var runs []store.Run
	if st != nil {
		defer st.Close()
		if runs, err = st.ListRuns(cmd.Context(), filter); err != nil {
			return failed(err)
		}
	}
	views := viewRuns(runs)
	if f.json {
		return writeJSON(cmd.OutOrStdout(), views)
	}
	if len(views) == 0 {
		fmt.Fprintln(cmd.OutOrStdout(), "No runs recorded yet that match.")
		return nil
	}
	printRunTable(cmd.OutOrStdout(), views)
	return nil
}

func printRunTable(out io.Writer, views []runView) {
	tw := newTable(out)
	fmt.Fprintln(tw, "ID\tAGENT\tKIND\tSTATUS\tTOKENS\tCOST\tDURATION\tSTARTED\tTASK")
	for _, v := range views {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", v.ID, v.Agent, v.Kind, v.statusText(), v.Usage.Total(),
			live.USD(v.CostUSD), durationText(v), formatTime(v.StartedAt), orDash(live.Excerpt(v.Task, 50)))
	}
	tw.Flush()
}

// parseSince reads --since: a duration back from now (Go syntax, plus a
// whole number of days as "7d"), or a date or time (local unless it says
// otherwise).
func parseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil {
			if n < 0 || n > 100000 {
				return time.Time{}, fmt.Errorf("%q: days must be between 0 and 100000", s)
			}
			return now.AddDate(0, 0, -n), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("%q: a duration back from now must not be negative", s)
		}
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02", "2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02T15:04:05"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is neither a duration (90m, 24h, 7d) nor a date (2025-01-31, 2025-01-31T09:00:00Z)", s)
}

// The ledger keeps times as Unix nanoseconds, which span 1678 to 2262;
// a date outside would wrap around and select the wrong runs.
var (
	ledgerMinTime = time.Unix(0, math.MinInt64+1)
	ledgerMaxTime = time.Unix(0, math.MaxInt64)
)

// clampToLedger brings t into the range the ledger can compare.
func clampToLedger(t time.Time) time.Time {
	switch {
	case t.Before(ledgerMinTime):
		return ledgerMinTime
	case t.After(ledgerMaxTime):
		return ledgerMaxTime
	}
	return t
}

func newRunsShowCmd(g *globalFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show <id>",
		Short: "Show a run and its conversation",
		Long: `Show one run: its agent, kind, model, status, usage and timing (and, for a
root, the budget, effort and isolation a resume goes on with), then its
conversation in order: user and assistant messages, the tool calls the model
asked for with their arguments, and the tool results (marked ERROR when the
tool failed). The system prompt is not recorded. The approvals and ask_user
questions of the run (of its whole tree, for a root) follow: what was asked,
and how, by whom and when it was answered. The run's direct children are
listed at the end; 'deputy runs tree' shows the whole tree.`,
		Example: `  deputy runs show 2A3YCB
  deputy runs show last
  deputy runs show 2A3YCB --json | jq '.messages[] | select(.role == "tool")'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return readLedger(cmd, g, func(st *store.Store) error { return showRun(cmd, st, args[0], asJSON) })
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the run, its messages and its children as JSON")
	return cmd
}

// showRun prints the run id names: its fields, conversation and what
// happened around it.
func showRun(cmd *cobra.Command, st *store.Store, id string, asJSON bool) error {
	c, err := loadConversation(cmd, st, id, store.RunFilter{RootsOnly: true})
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if asJSON {
		return writeJSON(out, c)
	}
	printRunHeader(out, c.Run)
	printAttempts(out, c.Attempts)
	printConversationSection(out, c)
	printTodos(out, c)
	printApprovals(out, c.Approvals)
	printMemory(out, c)
	printChildren(out, c.Children)
	printWorktrees(out, c.Worktrees)
	return nil
}

// conversation is a run with its messages and direct children.
type conversation struct {
	Run      runView       `json:"run"`
	Messages []messageView `json:"messages"`
	Children []runView     `json:"children"`
	// Path is the chain of runs from the root down to this one, itself
	// included (replay --id).
	Path []runView `json:"path,omitempty"`
	// Attempts are the run's earlier attempts, when it was resumed.
	Attempts []attemptView `json:"attempts,omitempty"`
	// Memory is the entry the run added to its agent's memory, if any.
	Memory []memoryView `json:"memory,omitempty"`
	// Scratchpad is the notes of the run's tree.
	Scratchpad []noteView `json:"scratchpad,omitempty"`
	// Todos is the run's task list as todo_write last set it.
	Todos []tool.TodoItem `json:"todos,omitempty"`
	// Approvals are the requests to the person of the run (of the whole
	// tree, for a root): approvals and ask_user's questions, answered or
	// not.
	Approvals []approvalView `json:"approvals,omitempty"`
	// Worktrees are those of the run and the isolated runs below it.
	Worktrees []worktreeView `json:"worktrees,omitempty"`
}

// memoryView is one entry of an agent's memory.
type memoryView struct {
	Agent  string    `json:"agent"`
	Task   string    `json:"task"`
	Result string    `json:"result"`
	At     time.Time `json:"at"`
}

// noteView is one note of a tree's scratchpad.
type noteView struct {
	Key   string    `json:"key"`
	Value string    `json:"value"`
	Agent string    `json:"agent"`
	RunID string    `json:"run_id"`
	At    time.Time `json:"at"`
}

// attemptView is one earlier attempt of a resumed run.
type attemptView struct {
	Attempt    int       `json:"attempt"`
	Status     string    `json:"status"`
	Error      string    `json:"error,omitempty"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	Turns      int       `json:"turns"`
}

// loadConversation reads the run id names ("last": the newest that lastOf
// selects), its messages and its place in the tree.
func loadConversation(cmd *cobra.Command, st *store.Store, id string, lastOf ...store.RunFilter) (*conversation, error) {
	ctx := cmd.Context()
	r, err := getRun(ctx, st, id, lastOf...)
	if err != nil {
		return nil, err
	}
	ms, err := st.Messages(ctx, r.ID)
	if err != nil {
		return nil, failed(err)
	}
	tree, err := st.Tree(ctx, r.RootID)
	if err != nil {
		return nil, failed(err)
	}
	c := &conversation{Run: viewRun(r), Messages: viewMessages(ms), Children: []runView{}}
	atts, err := st.Attempts(ctx, r.ID)
	if err != nil {
		return nil, failed(err)
	}
	for _, a := range atts {
		c.Attempts = append(c.Attempts, attemptView{Attempt: a.Attempt, Status: string(a.Status), Error: a.Error,
			StartedAt: a.StartedAt, FinishedAt: a.FinishedAt, Turns: a.Turns})
	}
	mem, err := st.TreeMemory(ctx, r.RootID)
	if err != nil {
		return nil, failed(err)
	}
	for _, m := range mem {
		if m.RunID == r.ID {
			c.Memory = append(c.Memory, memoryView{Agent: m.Agent, Task: m.Task, Result: m.Result, At: m.At})
		}
	}
	notes, err := st.Notes(ctx, r.RootID)
	if err != nil {
		return nil, failed(err)
	}
	for _, n := range notes {
		c.Scratchpad = append(c.Scratchpad, noteView{Key: n.Key, Value: n.Value, Agent: n.Agent, RunID: n.RunID, At: n.At})
	}
	if c.Todos, err = lastTodos(ctx, st, r.ID); err != nil {
		return nil, failed(err)
	}
	evs, err := st.Events(ctx, r.ID)
	if r.ParentID == "" {
		evs, err = st.TreeEvents(ctx, r.RootID)
	}
	if err != nil {
		return nil, failed(err)
	}
	c.Approvals = approvalViews(evs)
	wts, runs, err := subtreeWorktrees(ctx, st, r)
	if err != nil {
		return nil, err
	}
	c.Worktrees = viewWorktrees(wts, runs)
	byID := map[string]*store.Run{}
	for i := range tree {
		byID[tree[i].ID] = &tree[i]
		if tree[i].ParentID == r.ID {
			c.Children = append(c.Children, viewRun(&tree[i]))
		}
	}
	// Walk up from the run to the root; the bound guards against a
	// corrupt ledger whose parents loop.
	for p, n := r, 0; p != nil && n <= len(tree); p, n = byID[p.ParentID], n+1 {
		c.Path = append([]runView{viewRun(p)}, c.Path...)
		if p.ParentID == "" {
			break
		}
	}
	return c, nil
}

func printConversationSection(out io.Writer, c *conversation) {
	fmt.Fprintln(out, "\nconversation:")
	if len(c.Messages) > 0 {
		printConversation(out, c.Messages)
		return
	}
	if c.Run.Kind == string(store.KindSubagent) {
		fmt.Fprintln(out, "    (no messages stored: sub-agent conversations are kept when agent.subagent.persistence_enabled is true)")
		return
	}
	fmt.Fprintln(out, "    (no messages stored)")
}

// lastTodos is the task list of run id's last todos event, nil when it
// kept none.
func lastTodos(ctx context.Context, st *store.Store, id string) ([]tool.TodoItem, error) {
	evs, err := st.Events(ctx, id)
	if err != nil {
		return nil, err
	}
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type != string(delegate.EventTodos) {
			continue
		}
		var f struct {
			Todos []tool.TodoItem `json:"todos"`
		}
		if err := json.Unmarshal(evs[i].Fields, &f); err != nil {
			return nil, fmt.Errorf("run %s: its task list: %w", id, err)
		}
		return f.Todos, nil
	}
	return nil, nil
}

func printTodos(out io.Writer, c *conversation) {
	if len(c.Todos) == 0 {
		return
	}
	fmt.Fprintf(out, "\ntasks (%s):\n%s\n", live.TodoProgress(c.Todos), indent(tool.FormatTodos(c.Todos), "  "))
}

// printMemory shows what the run added to its agent's memory and the
// scratchpad of its tree.
func printMemory(out io.Writer, c *conversation) {
	for _, m := range c.Memory {
		fmt.Fprintf(out, "\nmemory (added to %s's):\n", m.Agent)
		fmt.Fprintf(out, "  task:   %s\n  result: %s\n", oneLine(m.Task), oneLine(m.Result))
	}
	printSection(out, "scratchpad (shared by the whole tree)", c.Scratchpad, func(tw io.Writer, n noteView) {
		fmt.Fprintf(tw, "  %s\t%s\t(by %s)\n", n.Key, oneLine(n.Value), n.Agent)
	})
}

// oneLine keeps a value on one line of a listing.
func oneLine(s string) string {
	return llm.ClipMessage(strings.Join(strings.Fields(s), " "), 200)
}

func printAttempts(out io.Writer, atts []attemptView) {
	printSection(out, "earlier attempts", atts, func(tw io.Writer, a attemptView) {
		status := a.Status
		if a.Error != "" {
			status += ": " + a.Error
		}
		fmt.Fprintf(tw, "  %d\t%s\t%d turns\t%s\n", a.Attempt, formatTime(a.StartedAt), a.Turns, status)
	})
}

func printChildren(out io.Writer, children []runView) {
	printSection(out, "children", children, func(tw io.Writer, ch runView) {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%d tokens\t%s\t%s\n", ch.ID, ch.Agent, ch.Kind, ch.Status, ch.Usage.Total(), live.USD(ch.CostUSD), orDash(live.Excerpt(ch.Task, 50)))
	})
}

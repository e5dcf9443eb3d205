package cli

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/internal/cli/live"
	"github.com/deputyhq/deputy/store"
)

type replayFlags struct {
	list  bool
	id    string
	limit int
	json  bool
}

// errReplayUsage is the message xzatoma's replay gives when told to do
// nothing; users of it know this line.
const errReplayUsage = "Must specify --list or --id"

// childKinds are the kinds of run a parent spawns through deputy's front
// doors (call_agent, subagent, the subqueries): what replay lists.
var childKinds = sync.OnceValue(func() []store.Kind {
	var kinds []store.Kind
	for _, d := range (&delegate.Engine{}).FrontDoors() {
		if !slices.Contains(kinds, d.Kind()) {
			kinds = append(kinds, d.Kind())
		}
	}
	return kinds
})

func newReplayCmd(g *globalFlags) *cobra.Command {
	f := &replayFlags{}
	cmd := &cobra.Command{
		Use:   "replay (--list | --id <id>)",
		Short: "List and replay stored sub-agent conversations",
		Long: `Replay the conversations of sub-agents, as xzatoma's replay command does.

--list lists the child runs in the ledger, newest first: subagent runs and
every other run a parent spawned (call_agent, subquery), with id, label,
parent id, depth, status, turns, and the tokens and cost in US dollars of
the run with everything it spawned ("-" when a model without a price was
called).

--id prints one of them: its header, its conversation (messages, tool calls
with arguments, tool results) and its place in the delegation tree, from the
root down. Any run id, unique prefix or tail works, root runs included; "last" is
the newest child run.

The rows of every child run are always kept. The messages of subagent runs
are kept when agent.subagent.persistence_enabled is true in config.yaml; those
of call_agent and subquery runs always are.`,
		Example: `  deputy replay --list
  deputy replay --list --limit 5 --json
  deputy replay --id 2A3YCB
  deputy replay --id last`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case f.list && f.id != "":
				return configErrf("give either --list or --id, not both")
			case f.list:
				return replayList(cmd, g, f)
			case f.id != "":
				return readLedger(cmd, g, func(st *store.Store) error { return replayID(cmd, st, f) })
			}
			// The bare line, without the usual "deputy:" prefix: scripts
			// written for xzatoma match it exactly.
			fmt.Fprintln(cmd.ErrOrStderr(), errReplayUsage)
			return &exitError{code: ExitConfig, err: errors.New(errReplayUsage), quiet: true}
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&f.list, "list", "l", false, "list stored sub-agent conversations, newest first")
	fl.StringVarP(&f.id, "id", "i", "", "replay the conversation of this run (id, unique prefix or tail, or \"last\")")
	fl.IntVar(&f.limit, "limit", 20, "with --list, at most this many (0 = no limit)")
	fl.BoolVar(&f.json, "json", false, "print JSON")
	return cmd
}

func replayList(cmd *cobra.Command, g *globalFlags, f *replayFlags) error {
	if f.limit < 0 {
		return configErrf("--limit must not be negative (got %d)", f.limit)
	}
	st, err := openLedger(cmd, g)
	if err != nil {
		return err
	}
	var runs []store.Run
	if st != nil {
		defer st.Close()
		// One bounded query per kind, merged: the newest N children are
		// among the newest N of each kind.
		for _, kind := range childKinds() {
			rs, err := st.ListRuns(cmd.Context(), store.RunFilter{Kind: kind, Limit: f.limit})
			if err != nil {
				return failed(err)
			}
			runs = append(runs, rs...)
		}
	}
	slices.SortStableFunc(runs, func(a, b store.Run) int {
		if c := b.StartedAt.Compare(a.StartedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID) // ULIDs grow with time
	})
	if f.limit > 0 && len(runs) > f.limit {
		runs = runs[:f.limit]
	}
	views := viewRuns(runs)
	out := cmd.OutOrStdout()
	if f.json {
		return writeJSON(out, views)
	}
	if len(views) == 0 {
		fmt.Fprintln(out, "No sub-agent conversations stored yet.")
		return nil
	}
	printReplayTable(out, views)
	return nil
}

func printReplayTable(out io.Writer, views []runView) {
	tw := newTable(out)
	fmt.Fprintln(tw, "ID\tLABEL\tKIND\tPARENT\tDEPTH\tSTATUS\tTURNS\tTOKENS\tCOST\tSTARTED")
	for _, v := range views {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%d\t%d\t%s\t%s\n", v.ID, v.Agent, v.Kind, v.ParentID, v.Depth, v.Status,
			v.Turns, v.Usage.Total(), live.USD(v.CostUSD), formatTime(v.StartedAt))
	}
	tw.Flush()
}

func replayID(cmd *cobra.Command, st *store.Store, f *replayFlags) error {
	var children []store.RunFilter
	for _, k := range childKinds() {
		children = append(children, store.RunFilter{Kind: k})
	}
	c, err := loadConversation(cmd, st, f.id, children...)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if f.json {
		return writeJSON(out, c)
	}
	printRunHeader(out, c.Run)
	fmt.Fprintln(out, "\nplace in the tree:")
	for i, p := range c.Path {
		mark := ""
		if p.ID == c.Run.ID {
			mark = "  ← this run"
		}
		fmt.Fprintf(out, "%s%s (%s, %s) %s%s\n", strings.Repeat("  ", i+1), p.Agent, p.Kind, p.Status, p.ID, mark)
	}
	printConversationSection(out, c)
	printChildren(out, c.Children)
	return nil
}

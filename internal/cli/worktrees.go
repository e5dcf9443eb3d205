package cli

// The worktrees of isolated children (docs/user-guide.md#isolated-children):
// runs show lists a tree's, runs diff shows what each child changed, runs
// clean removes those that were kept.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/deputyhq/deputy/isolate"
	"github.com/deputyhq/deputy/ledger"
	"github.com/deputyhq/deputy/store"
	"github.com/deputyhq/deputy/workspace"
)

// worktreeView is one isolated run's worktree, as runs show lists it.
type worktreeView struct {
	RunID  string `json:"run_id"`
	Agent  string `json:"agent"`
	State  string `json:"state"`
	Branch string `json:"branch"`
	// Path is the worktree's directory; Removed says it is gone.
	Path    string `json:"path"`
	Removed bool   `json:"removed"`
	// Repo is the working tree its work merges into.
	Repo  string               `json:"repo"`
	Files []isolate.FileChange `json:"files,omitempty"`
}

// subtreeWorktrees returns the worktree records of run r and its
// descendants, with the runs of r's tree by id.
func subtreeWorktrees(ctx context.Context, st *store.Store, r *store.Run) ([]store.Worktree, map[string]store.Run, error) {
	tree, err := st.Tree(ctx, r.RootID)
	if err != nil {
		return nil, nil, failed(err)
	}
	byID := map[string]store.Run{}
	for _, t := range tree {
		byID[t.ID] = t
	}
	in := func(id string) bool {
		// Walk up to r; the bound guards against a ledger whose parents loop.
		for n := 0; n <= len(tree) && id != ""; n++ {
			if id == r.ID {
				return true
			}
			id = byID[id].ParentID
		}
		return false
	}
	rows, err := st.Worktrees(ctx, r.RootID)
	if err != nil {
		return nil, nil, failed(err)
	}
	rows = slices.DeleteFunc(rows, func(w store.Worktree) bool { return !in(w.RunID) })
	return rows, byID, nil
}

func viewWorktrees(rows []store.Worktree, runs map[string]store.Run) []worktreeView {
	var out []worktreeView
	for _, w := range rows {
		v := worktreeView{RunID: w.RunID, Agent: runs[w.RunID].Agent, State: w.State, Branch: w.Branch, Path: w.Path,
			Removed: !w.RemovedAt.IsZero(), Repo: w.Repo}
		var res isolate.Result
		if len(w.Result) > 0 && json.Unmarshal(w.Result, &res) == nil {
			v.Files = res.Files
		}
		out = append(out, v)
	}
	return out
}

// printWorktrees lists a tree's worktrees for runs show: the kept ones
// with their directory, to look at, merge by hand or remove with runs
// clean.
func printWorktrees(out io.Writer, ws []worktreeView) {
	printSection(out, "worktrees (isolated children)", ws, func(tw io.Writer, w worktreeView) {
		where := "removed"
		if !w.Removed {
			where = "kept in " + w.Path
		}
		files := plural(len(w.Files), "file")
		if w.State == ledger.WorktreeActive {
			files = "-" // not known before its run ends
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", w.RunID, w.Agent, w.State, files, w.Branch, where)
	})
	for _, w := range ws {
		if !w.Removed {
			fmt.Fprintln(out, "  ('deputy runs diff' shows their changes; 'deputy runs clean' removes the kept worktrees and branches)")
			return
		}
	}
}

// worktreeManager is the manager of the worktrees in deputy's data
// directory.
func worktreeManager() (*isolate.Manager, error) {
	m := workspace.Worktrees()
	if m == nil {
		return nil, configErrf("cannot find deputy's data directory for its worktrees: set HOME or XDG_DATA_HOME")
	}
	return m, nil
}

func worktreeOf(w store.Worktree) *isolate.Worktree {
	return &isolate.Worktree{ID: w.RunID, Repo: w.Repo, Common: w.Common, Path: w.Path, Workdir: w.Workdir,
		Branch: w.Branch, Base: w.Base, Commit: w.Commit}
}

func newRunsDiffCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "diff <id>",
		Short: "Show what a run's isolated children changed, child by child",
		Long: `Show, for the run and each run below it that worked in a git worktree of its
own (isolation = "worktree", or run --isolation worktree), the files it
changed and the diff: from the working state it started from to its work,
as committed on its branch deputy/<run id>, or as its worktree holds it
when the run was interrupted. Children that worked in the shared directory
have no diff of their own.

A merged child's commits stay in the repository until git's garbage
collection removes them; after that its diff cannot be shown.`,
		Example: `  deputy runs diff last
  deputy runs diff 2A3YCB | less`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return readLedger(cmd, g, func(st *store.Store) error { return diffRun(cmd, st, args[0]) })
		},
	}
}

// diffRun shows, child by child, the files and the diff of each isolated
// run of the run id names and below it.
func diffRun(cmd *cobra.Command, st *store.Store, id string) error {
	ctx, out := cmd.Context(), cmd.OutOrStdout()
	r, err := getRun(ctx, st, id, store.RunFilter{RootsOnly: true})
	if err != nil {
		return err
	}
	rows, runs, err := subtreeWorktrees(ctx, st, r)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		fmt.Fprintf(out, "run %s had no isolated children: what its tree changed was written to the shared directory\n", r.ID)
		return nil
	}
	m, err := worktreeManager()
	if err != nil {
		return err
	}
	var errs []error
	for i, w := range rows {
		if i > 0 {
			fmt.Fprintln(out)
		}
		fmt.Fprintf(out, "== %s (%s): %s, branch %s\n", runs[w.RunID].Agent, w.RunID, w.State, w.Branch)
		wt := worktreeOf(w)
		if wt.Commit != "" {
			if files, err := m.Changes(ctx, wt); err == nil {
				for _, f := range files {
					fmt.Fprintln(out, f)
				}
			}
		}
		diff, err := m.Diff(ctx, wt)
		if err != nil {
			fmt.Fprintf(out, "(no diff: %v)\n", err)
			errs = append(errs, err)
			continue
		}
		io.WriteString(out, diff)
	}
	if len(errs) == len(rows) {
		return failed(errors.Join(errs...))
	}
	return nil
}

func newRunsCleanCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "clean [id]",
		Short: "Remove the worktrees and branches isolated children left",
		Long: `Remove the git worktrees and their branches deputy/<run id> that isolated
children left behind: a child whose merge conflicted, one that failed, timed
out or ran out of budget, one of a run that was interrupted. With a run id,
those of that run and the runs below it; without one, those of every run
that is not running, and any worktree in deputy's data directory that no
run recorded (a process killed as it made one).

A merged child's worktree and branch are removed when it merges; its diff
stays available to 'deputy runs diff' until git's garbage collection. Your
own branches, index and stash are never touched.`,
		Example: `  deputy runs clean last
  deputy runs clean`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return readLedger(cmd, g, func(st *store.Store) error { return cleanWorktrees(cmd, st, args) })
		},
	}
}

// cleanWorktrees removes the kept worktrees of the run args names, or of
// every run that is not running, and unrecorded ones.
func cleanWorktrees(cmd *cobra.Command, st *store.Store, args []string) error {
	ctx, out := cmd.Context(), cmd.OutOrStdout()
	m, err := worktreeManager()
	if err != nil {
		return err
	}
	var rows []store.Worktree
	var runs map[string]store.Run
	switch {
	case len(args) == 1:
		r, err := getRun(ctx, st, args[0], store.RunFilter{RootsOnly: true})
		if err != nil {
			return err
		}
		if rows, runs, err = subtreeWorktrees(ctx, st, r); err != nil {
			return err
		}
	case st != nil:
		all, err := st.Worktrees(ctx, "")
		if err != nil {
			return failed(err)
		}
		rows, runs = all, map[string]store.Run{}
		for _, w := range all {
			if r, err := st.GetRun(ctx, w.RunID); err == nil {
				runs[w.RunID] = *r
			}
		}
	}
	recorded := map[string]bool{}
	removed := 0
	var errs []error
	for _, w := range rows {
		recorded[w.RunID] = true
		if !w.RemovedAt.IsZero() {
			continue
		}
		if root, err := st.GetRun(ctx, w.RootID); err == nil && root.Status == store.StatusRunning {
			fmt.Fprintf(out, "kept %s: its run %s is still running\n", w.Path, w.RootID)
			continue
		}
		if err := m.Remove(ctx, worktreeOf(w), false); err != nil {
			errs = append(errs, err)
			continue
		}
		w.RemovedAt = time.Now()
		if err := st.RecordWorktree(ctx, &w); err != nil {
			errs = append(errs, err)
		}
		removed++
		fmt.Fprintf(out, "removed %s and branch %s (%s, run %s)\n", w.Path, w.Branch, runs[w.RunID].Agent, w.RunID)
	}
	if len(args) == 0 {
		n, err := cleanUnrecorded(ctx, out, st, m, recorded)
		removed += n
		if err != nil {
			errs = append(errs, err)
		}
		if err := m.CleanTemp(); err != nil {
			errs = append(errs, err)
		}
	}
	if removed == 0 && len(errs) == 0 {
		fmt.Fprintln(out, "no worktree to remove")
	}
	if len(errs) > 0 {
		return failed(errors.Join(errs...))
	}
	return nil
}

// cleanUnrecorded removes the worktrees in m's directory that the ledger
// does not know of, unless their run is running.
func cleanUnrecorded(ctx context.Context, out io.Writer, st *store.Store, m *isolate.Manager, recorded map[string]bool) (int, error) {
	ids, err := m.List()
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, id := range ids {
		if recorded[id] {
			continue
		}
		if st != nil {
			if r, err := st.GetRun(ctx, id); err == nil && r.Status == store.StatusRunning {
				continue
			}
		}
		w, err := m.Lookup(id)
		if err != nil {
			// Not a worktree (half made): only the directory is left.
			if err := os.RemoveAll(filepath.Join(m.Dir, id)); err != nil {
				errs = append(errs, err)
				continue
			}
			fmt.Fprintf(out, "removed %s (not a worktree)\n", filepath.Join(m.Dir, id))
			n++
			continue
		}
		if err := m.Remove(ctx, w, false); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
		fmt.Fprintf(out, "removed %s and branch %s (not recorded in the ledger)\n", w.Path, w.Branch)
	}
	return n, errors.Join(errs...)
}

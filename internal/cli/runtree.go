package cli

// deputy runs tree: the delegation tree a run belongs to.

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/deputyhq/deputy/internal/cli/live"
	"github.com/deputyhq/deputy/store"
)

func newRunsTreeCmd(g *globalFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "tree <id>",
		Short: "Show the delegation tree a run belongs to",
		Long: `Show the whole delegation tree of the run's root, one indented line per run:
its agent or sub-agent label, kind, status, turns, tokens and cost of its
subtree ("-" when a model without a price was called), wall time and id. Give any run of the tree; the one given is marked with *.`,
		Example: `  deputy runs tree last
  deputy runs tree 2A3YCB --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return readLedger(cmd, g, func(st *store.Store) error { return showTree(cmd, st, args[0], asJSON) })
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the tree as nested JSON")
	return cmd
}

// showTree prints the delegation tree of the run id names, marking it.
func showTree(cmd *cobra.Command, st *store.Store, id string, asJSON bool) error {
	ctx := cmd.Context()
	r, err := getRun(ctx, st, id, store.RunFilter{RootsOnly: true})
	if err != nil {
		return err
	}
	runs, err := st.Tree(ctx, r.RootID)
	if err != nil {
		return failed(err)
	}
	root := buildTree(runs)
	if root == nil {
		return failed(errors.New("the ledger holds no root for run " + r.ID))
	}
	if asJSON {
		return writeJSON(cmd.OutOrStdout(), root)
	}
	printTree(cmd.OutOrStdout(), root, r.ID)
	return nil
}

// treeNode is one run of a delegation tree, with its children in the
// order they started.
type treeNode struct {
	runView
	Children []*treeNode `json:"children"`
}

// buildTree links runs (in start order, as store.Tree returns them) into
// a tree. A run whose parent is missing hangs under the root so nothing
// recorded is hidden.
func buildTree(runs []store.Run) *treeNode {
	nodes := make(map[string]*treeNode, len(runs))
	var order []*treeNode
	for i := range runs {
		n := &treeNode{runView: viewRun(&runs[i]), Children: []*treeNode{}}
		nodes[n.ID] = n
		order = append(order, n)
	}
	var root *treeNode
	for _, n := range order {
		if n.ParentID == "" && root == nil {
			root = n
		}
	}
	if root == nil {
		return nil
	}
	for _, n := range order {
		if n == root {
			continue
		}
		parent, ok := nodes[n.ParentID]
		if !ok || parent == n {
			parent = root
		}
		parent.Children = append(parent.Children, n)
	}
	return root
}

func printTree(out io.Writer, root *treeNode, mark string) {
	tw := newTable(out)
	fmt.Fprintln(tw, "RUN\tKIND\tSTATUS\tTURNS\tTOKENS\tCOST\tDURATION\tID\tTASK")
	var walk func(n *treeNode, level int)
	walk = func(n *treeNode, level int) {
		label := strings.Repeat("  ", level) + n.Agent
		if n.ID == mark && n.ParentID != "" {
			label += " *"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\n", label, n.Kind, n.Status, n.Turns, n.Usage.Total(), live.USD(n.CostUSD),
			durationText(n.runView), n.ID,
			orDash(live.Excerpt(n.Task, 50)))
		for _, c := range n.Children {
			walk(c, level+1)
		}
	}
	walk(root, 0)
	tw.Flush()
}

package cli

// Small formatting helpers shared by the commands' human output.

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/deputyhq/deputy/config"
)

// newTable returns the tabwriter every table of the CLI uses.
func newTable(out io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
}

// printSection prints a section of a listing (runs show's approvals,
// worktrees, attempts, ...): a blank line, the title, then a table with
// the row row writes for each value; nothing when there are no values.
func printSection[T any](out io.Writer, title string, values []T, row func(tw io.Writer, v T)) {
	if len(values) == 0 {
		return
	}
	fmt.Fprintf(out, "\n%s:\n", title)
	tw := newTable(out)
	for _, v := range values {
		row(tw, v)
	}
	tw.Flush()
}

func modelOrInherit(m string) string {
	if m == "" {
		return config.ModelInherit
	}
	return m
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func orEmpty(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// displayPath shows path relative to cwd when it lies inside it, so
// project files read short.
func displayPath(cwd, path string) string {
	if rel, err := filepath.Rel(cwd, path); err == nil && !strings.HasPrefix(rel, "..") && !filepath.IsAbs(rel) {
		return rel
	}
	return path
}

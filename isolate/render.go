package isolate

import (
	"fmt"
	"strings"
)

// String is the result as its parent reads it: the status first, then
// for a conflict the branch, the files and their hunks, and the files the
// run changed with their line counts ("+12 −3 src/api.go").
func (r *Result) String() string {
	var b strings.Builder
	switch r.Status {
	case Merged:
		fmt.Fprintf(&b, "merged: %s changed\n", plural(len(r.Files), "file"))
	case Unchanged:
		b.WriteString("unchanged: no file changed\n")
	case Kept:
		r.writeKept(&b, "not merged")
		if len(r.Files) > 0 {
			fmt.Fprintf(&b, "changed on the branch: %s\n", plural(len(r.Files), "file"))
		}
	case Conflict:
		r.writeKept(&b, "conflict: nothing was merged")
		for _, c := range r.Conflicts {
			fmt.Fprintf(&b, "conflict (%s): %s\n", c.Kind, c.Path)
			for _, h := range c.Hunks {
				fmt.Fprintf(&b, "%s, line %d:\n%s\n", c.Path, h.Line, h.Text)
			}
		}
		if len(r.Files) > 0 {
			fmt.Fprintf(&b, "changed on the branch: %s\n", plural(len(r.Files), "file"))
		}
	}
	for _, f := range r.Files {
		b.WriteString(f.String() + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// writeKept writes the line of work that was not merged: head, the
// reason, and where the work is.
func (r *Result) writeKept(b *strings.Builder, head string) {
	b.WriteString(head)
	if r.Reason != "" {
		b.WriteString(" (" + r.Reason + ")")
	}
	fmt.Fprintf(b, "; the changes are on branch %s", r.Branch)
	if r.Worktree != "" {
		fmt.Fprintf(b, ", checked out in %s", r.Worktree)
	}
	b.WriteString("\n")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

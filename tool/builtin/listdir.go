package builtin

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/deputyhq/deputy/tool"
)

// maxListEntries caps list_directory's answer.
const maxListEntries = 1000

type listDirectoryArgs struct {
	Path string `json:"path,omitempty" jsonschema:"directory to list, relative to the working directory (default: the working directory)"`
}

func listDirectoryTool(e *env) tool.Tool {
	return tool.New(ListDirectory,
		"List the entries of a directory, sorted by name, one per line; directories end with '/'.",
		e.listDirectory)
}

func (e *env) listDirectory(_ context.Context, a listDirectoryArgs) (tool.Result, error) {
	p, err := e.confine(a.Path)
	if err != nil {
		return pathError(err), nil
	}
	shown := orDot(e.rel(p))
	fi, err := os.Stat(p)
	if err != nil {
		return fileError(shown, err), nil
	}
	if !fi.IsDir() {
		return tool.Errorf("%s is a file, not a directory; use read_file to read it", shown), nil
	}
	entries, err := os.ReadDir(p) // sorted by name
	if err != nil {
		return fileError(shown, err), nil
	}
	if len(entries) == 0 {
		return tool.Text(fmt.Sprintf("(%s is empty)", shown)), nil
	}
	var out strings.Builder
	for i, d := range entries {
		if i == maxListEntries {
			fmt.Fprintf(&out, "[%d more entries not shown; use find_path to search]\n", len(entries)-i)
			break
		}
		out.WriteString(d.Name())
		if isDirEntry(p, d) {
			out.WriteByte('/')
		}
		out.WriteByte('\n')
	}
	return tool.Text(strings.TrimSuffix(out.String(), "\n")), nil
}

// isDirEntry reports whether d is a directory or a link to one, so links
// the model may step into are marked like the directories they stand for.
func isDirEntry(dir string, d fs.DirEntry) bool {
	if d.IsDir() {
		return true
	}
	if d.Type()&fs.ModeSymlink == 0 {
		return false
	}
	fi, err := os.Stat(filepath.Join(dir, d.Name()))
	return err == nil && fi.IsDir()
}

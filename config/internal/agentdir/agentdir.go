// Package agentdir lists the agent files of the origin packages'
// directories (Claude Code's, Codex's and opencode's agents directories
// and their subdirectories) and says what cannot be read, in one way.
package agentdir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/internal/osfile"
)

// MaxDepth bounds how many levels of subdirectories below an agents
// directory are read; it also ends a loop of symbolic links.
const MaxDepth = 8

// Tree lists the files below dir, down to MaxDepth levels of
// subdirectories, that keep accepts, in file-name order (a
// subdirectory's files where its name sorts). isDir tells which entries
// are directories to descend into; any other entry is offered to keep. A
// directory that does not exist (dir itself, say) has no files; one that
// cannot be read is a warning (Unreadable).
func Tree(dir string, isDir, keep func(path string, e fs.DirEntry) bool) ([]string, config.Diagnostics) {
	var (
		paths []string
		diags config.Diagnostics
	)
	var walk func(d string, depth int)
	walk = func(d string, depth int) {
		entries, err := os.ReadDir(d)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				diags = append(diags, Unreadable(d, err))
			}
			return
		}
		for _, e := range entries {
			p := filepath.Join(d, e.Name())
			switch {
			case isDir(p, e):
				if depth < MaxDepth {
					walk(p, depth+1)
				}
			case keep(p, e):
				paths = append(paths, p)
			}
		}
	}
	walk(dir, 0)
	return paths, diags
}

// Unreadable is the warning for an agents directory, or a subdirectory of
// one, that cannot be read.
func Unreadable(dir string, err error) config.Diagnostic {
	return config.Diagnostic{File: dir, Severity: config.Warning, Message: "cannot read agent directory: " + osfile.ErrText(err) + "; its agents are left out"}
}

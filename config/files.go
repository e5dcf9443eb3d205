package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/deputyhq/deputy/config/internal/osfile"
	"github.com/deputyhq/deputy/config/internal/text"
)

// Limits on the files an agent's globs put into its context. A context
// window is the scarce thing here; a glob that sweeps in a build directory
// should cost a warning, not the run.
const (
	maxFileSize   = 256 << 10 // per file; longer files are truncated
	maxFilesTotal = 1 << 20   // all files of one agent together
	maxFileCount  = 1000      // matches considered per agent
	// maxGlobEntries bounds the files and directories one glob looks at:
	// "/**/x" or "~/**" would otherwise walk the whole disk, and a
	// directory holding symbolic links to itself has no end.
	maxGlobEntries = 100_000
)

// A fileTree is where globs are walked and files read: the machine's file
// system (root ""), or in tests a directory standing in for its root, so
// that no test walks the machine's.
type fileTree struct {
	root       string
	maxEntries int // per glob (maxGlobEntries)
}

// hostTree is the machine's file system.
var hostTree = fileTree{maxEntries: maxGlobEntries}

// path is where the file p (absolute, or relative to the current
// directory) lies in t.
func (t fileTree) path(p string) string {
	if t.root == "" {
		return p
	}
	return filepath.Join(t.root, p)
}

// File is one file matched by an agent's files globs.
type File struct {
	// Path is relative to the workdir, with forward slashes, or absolute
	// when the file lies outside it.
	Path      string
	Content   string
	Truncated bool // Content is a prefix of the file (size limits)
}

// ResolveFiles expands globs (doublestar syntax: "**" crosses
// directories) against workdir and reads the files they match. The order
// is deterministic: globs in the order given, each glob's matches sorted,
// a file matched twice kept at its first place. A glob that matches
// nothing, an unreadable or binary file, and every truncation are warnings
// (Key "files"; File is left empty for the caller to fill in).
func ResolveFiles(globs []string, workdir string) ([]File, Diagnostics) {
	return hostTree.resolveFiles(globs, workdir)
}

func (t fileTree) resolveFiles(globs []string, workdir string) ([]File, Diagnostics) {
	matches, diags := t.expandGlobs(globs, workdir)
	var (
		files   []File
		total   int
		skipped []string
	)
	for _, m := range matches {
		if total >= maxFilesTotal {
			skipped = append(skipped, m.display)
			continue
		}
		data, err := osfile.ReadPrefix(t.path(m.abs), maxFileSize)
		if err != nil {
			diags = append(diags, fileWarning("cannot read %s: %s", m.display, err))
			continue
		}
		if bytes.IndexByte(data[:min(len(data), 8<<10)], 0) >= 0 {
			diags = append(diags, fileWarning("%s looks binary; skipped", m.display))
			continue
		}
		f := File{Path: m.display}
		if len(data) > maxFileSize {
			data = text.TruncateUTF8(data, maxFileSize)
			f.Truncated = true
			diags = append(diags, fileWarning("%s is larger than %d KiB; only its start is included", m.display, maxFileSize>>10))
		}
		if left := maxFilesTotal - total; len(data) > left {
			data = text.TruncateUTF8(data, left)
			f.Truncated = true
			diags = append(diags, fileWarning("%s is cut short: all files together may hold at most %d KiB", m.display, maxFilesTotal>>10))
		}
		f.Content = string(data)
		total += len(data)
		files = append(files, f)
	}
	if len(skipped) > 0 {
		diags = append(diags, fileWarning("the %d KiB limit for all files is reached; left out: %s", maxFilesTotal>>10, strings.Join(skipped, ", ")))
	}
	return files, diags
}

type globMatch struct {
	abs     string // absolute (or workdir-joined) path, for reading
	display string // File.Path
}

// expandGlobs returns the files globs match, in ResolveFiles' order,
// without reading them.
func (t fileTree) expandGlobs(globs []string, workdir string) ([]globMatch, Diagnostics) {
	if workdir == "" {
		workdir = "."
	}
	var (
		out   []globMatch
		diags Diagnostics
		seen  = map[string]bool{}
	)
	for _, g := range globs {
		g = strings.TrimSpace(g)
		if g == "" {
			diags = append(diags, Diagnostic{Key: "files", Severity: Error, Message: "empty glob"})
			continue
		}
		p := filepath.ToSlash(osfile.ExpandHome(g))
		base, pattern := doublestar.SplitPattern(p)
		if base = filepath.FromSlash(base); !filepath.IsAbs(base) {
			base = filepath.Join(workdir, base)
		}
		base = filepath.Clean(base) // "/../x" is "/x", in a test's tree too
		if !doublestar.ValidatePattern(pattern) {
			diags = append(diags, Diagnostic{Key: "files", Severity: Error, Message: fmt.Sprintf("glob %q is not a valid pattern", g)})
			continue
		}
		walk := &boundedFS{FS: os.DirFS(t.path(base)), left: t.maxEntries}
		found, err := doublestar.Glob(walk, pattern, doublestar.WithFilesOnly())
		if err != nil {
			diags = append(diags, fileWarning("glob %q: %s", g, err))
			continue
		}
		if walk.left < 0 {
			diags = append(diags, fileWarning("glob %q looks at more than %d files and directories; the rest are not searched (narrow the glob)", g, t.maxEntries))
		} else if len(found) == 0 {
			diags = append(diags, fileWarning("glob %q matches no files in %s", g, workdir))
			continue
		}
		slices.Sort(found)
		for _, rel := range found {
			if len(out) >= maxFileCount {
				diags = append(diags, fileWarning("more than %d files match; the rest are left out", maxFileCount))
				return out, diags
			}
			abs := filepath.Join(base, filepath.FromSlash(rel))
			if seen[abs] {
				continue
			}
			seen[abs] = true
			out = append(out, globMatch{abs: abs, display: displayPath(abs, workdir)})
		}
	}
	return out, diags
}

// boundedFS is a directory tree a glob walks, listing at most left
// entries in all; once they are spent, left is below zero and no
// directory is listed any more (the glob skips it as unreadable).
type boundedFS struct {
	fs.FS
	left int
}

var errWalkBound = errors.New("too many files and directories")

func (b *boundedFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if b.left < 0 {
		return nil, errWalkBound
	}
	entries, err := fs.ReadDir(b.FS, name)
	if len(entries) > b.left {
		entries, err = entries[:b.left], nil
		b.left = -1
		return entries, err
	}
	b.left -= len(entries)
	return entries, err
}

func (b *boundedFS) Stat(name string) (fs.FileInfo, error) { return fs.Stat(b.FS, name) }

// displayPath is abs relative to workdir when it lies inside it.
func displayPath(abs, workdir string) string {
	if r, err := filepath.Rel(workdir, abs); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return filepath.ToSlash(r)
	}
	if a, err := filepath.Abs(abs); err == nil {
		return a
	}
	return abs
}

func fileWarning(format string, args ...any) Diagnostic {
	return Diagnostic{Key: "files", Severity: Warning, Message: fmt.Sprintf(format, args...)}
}

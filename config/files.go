package config

import (
	"bytes"
	"fmt"
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
)

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
	matches, diags := expandGlobs(globs, workdir)
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
		data, err := osfile.ReadPrefix(m.abs, maxFileSize)
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
func expandGlobs(globs []string, workdir string) ([]globMatch, Diagnostics) {
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
		if !filepath.IsAbs(filepath.FromSlash(base)) {
			base = filepath.Join(workdir, filepath.FromSlash(base))
		}
		if !doublestar.ValidatePattern(pattern) {
			diags = append(diags, Diagnostic{Key: "files", Severity: Error, Message: fmt.Sprintf("glob %q is not a valid pattern", g)})
			continue
		}
		found, err := doublestar.Glob(os.DirFS(base), pattern, doublestar.WithFilesOnly())
		if err != nil {
			diags = append(diags, fileWarning("glob %q: %s", g, err))
			continue
		}
		if len(found) == 0 {
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

package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/deputyhq/deputy/internal/safeopen"
)

// Limits on the files an agent's globs put into its context. A context
// window is the scarce thing here; a glob that sweeps in a build directory
// should cost a warning, not the run.
const (
	MaxFileSize   = 256 << 10 // per file; longer files are truncated
	MaxFilesTotal = 1 << 20   // all files of one agent together
	MaxFileCount  = 1000      // matches considered per agent
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
		if total >= MaxFilesTotal {
			skipped = append(skipped, m.display)
			continue
		}
		data, err := readLimitedPrefix(m.abs, MaxFileSize)
		if err != nil {
			diags = append(diags, fileWarning("cannot read %s: %s", m.display, err))
			continue
		}
		if bytes.IndexByte(data[:min(len(data), 8<<10)], 0) >= 0 {
			diags = append(diags, fileWarning("%s looks binary; skipped", m.display))
			continue
		}
		f := File{Path: m.display}
		if len(data) > MaxFileSize {
			data = truncateUTF8(data, MaxFileSize)
			f.Truncated = true
			diags = append(diags, fileWarning("%s is larger than %d KiB; only its start is included", m.display, MaxFileSize>>10))
		}
		if left := MaxFilesTotal - total; len(data) > left {
			data = truncateUTF8(data, left)
			f.Truncated = true
			diags = append(diags, fileWarning("%s is cut short: all files together may hold at most %d KiB", m.display, MaxFilesTotal>>10))
		}
		f.Content = string(data)
		total += len(data)
		files = append(files, f)
	}
	if len(skipped) > 0 {
		diags = append(diags, fileWarning("the %d KiB limit for all files is reached; left out: %s", MaxFilesTotal>>10, strings.Join(skipped, ", ")))
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
		p := filepath.ToSlash(expandHome(g))
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
			if len(out) >= MaxFileCount {
				diags = append(diags, fileWarning("more than %d files match; the rest are left out", MaxFileCount))
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

// readLimitedPrefix reads at most limit+1 bytes of a regular file, so the
// caller can tell that it is longer than limit without reading all of it.
func readLimitedPrefix(path string, limit int) ([]byte, error) {
	f, err := safeopen.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, pe.Err
		}
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, int64(limit)+1))
}

// truncateUTF8 cuts b to at most n bytes without splitting a UTF-8
// sequence.
func truncateUTF8(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	b = b[:n]
	for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
		r, size := utf8.DecodeLastRune(b)
		if r != utf8.RuneError || size > 1 {
			break
		}
		b = b[:len(b)-1]
	}
	return b
}

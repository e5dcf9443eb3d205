package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/deputyhq/deputy/tool"
)

// maxFindResults caps find_path's answer.
const maxFindResults = 500

type findPathArgs struct {
	Pattern string `json:"pattern" jsonschema:"glob relative to the working directory; '*' matches within one directory, '**' across directories, e.g. '**/*.go' or 'docs/*.md'"`
}

func findPathTool(e *env) tool.Tool {
	return tool.New(FindPath,
		fmt.Sprintf("Find files and directories whose path matches a glob pattern with '**' support. "+
			"Returns matching paths relative to the working directory, sorted, at most %d; directories end with '/'.", maxFindResults),
		e.findPath)
}

// errEnough stops the walk once the cap is passed.
var errEnough = errors.New("enough matches")

func (e *env) findPath(ctx context.Context, a findPathArgs) (tool.Result, error) {
	pattern, res, ok := e.relativePattern(a.Pattern)
	if !ok {
		return res, nil
	}
	realRoot, err := e.confine("")
	if err != nil {
		return pathError(err), nil
	}
	searchGit := strings.Contains(pattern, ".git")
	var matches []string
	capped := false
	err = doublestar.GlobWalk(ctxFS{ctx, os.DirFS(realRoot)}, pattern, func(p string, d fs.DirEntry) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !searchGit && slices.Contains(strings.Split(p, "/"), ".git") {
			if d.IsDir() {
				return doublestar.SkipDir
			}
			return nil
		}
		// os.DirFS follows a link named before the first wildcard
		// ("link/*"); anything that lands outside the workdir is dropped.
		if _, err := Confine(realRoot, filepath.FromSlash(p)); err != nil {
			return nil
		}
		if len(matches) == maxFindResults {
			capped = true
			return errEnough
		}
		if d.IsDir() {
			p += "/"
		}
		matches = append(matches, p)
		return nil
	}, doublestar.WithNoFollow())
	switch {
	case errors.Is(err, errEnough):
	case errors.Is(err, doublestar.ErrBadPattern):
		return tool.Errorf("bad glob pattern %q", a.Pattern), nil
	case ctx.Err() != nil:
		return tool.Errorf("find_path cancelled: %v", ctx.Err()), nil
	case err != nil:
		return tool.Errorf("find_path: %v", err), nil
	}
	if len(matches) == 0 {
		return tool.Text(fmt.Sprintf("no paths match %q", a.Pattern)), nil
	}
	slices.Sort(matches)
	out := strings.Join(matches, "\n")
	if capped {
		out += fmt.Sprintf("\n[stopped at %d matches; use a narrower pattern]", maxFindResults)
	}
	return tool.Text(out), nil
}

// ctxFS is a file system that stops answering once ctx is done. The glob
// walk only calls back on matches, so without it a search that matches
// nothing would not notice cancellation until it had seen the whole tree;
// with it, every directory read fails at once and the walk unwinds.
type ctxFS struct {
	ctx  context.Context
	fsys fs.FS
}

func (c ctxFS) Open(name string) (fs.File, error) {
	if err := c.ctx.Err(); err != nil {
		return nil, err
	}
	return c.fsys.Open(name)
}

// ReadDir keeps os.DirFS's entry types, which doublestar's no-follow
// mode relies on to tell links from directories.
func (c ctxFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if err := c.ctx.Err(); err != nil {
		return nil, err
	}
	return fs.ReadDir(c.fsys, name)
}

func (c ctxFS) Stat(name string) (fs.FileInfo, error) {
	if err := c.ctx.Err(); err != nil {
		return nil, err
	}
	return fs.Stat(c.fsys, name)
}

// relativePattern turns the model's pattern into one io/fs accepts:
// relative, slash-separated, without "./" or "..". An absolute pattern
// inside the working directory is made relative. On failure it returns the
// error result to give.
func (e *env) relativePattern(pattern string) (string, tool.Result, bool) {
	if pattern == "" {
		return "", tool.Errorf("pattern must not be empty"), false
	}
	orig := pattern
	if filepath.IsAbs(pattern) {
		rel := ""
		for _, root := range e.rootSpellings() {
			if r, err := filepath.Rel(root, pattern); err == nil && !strings.HasPrefix(r, "..") {
				rel = r
				break
			}
		}
		if rel == "" {
			return "", tool.Errorf("pattern %q is outside the working directory; give it relative to the working directory", orig), false
		}
		pattern = rel
	}
	pattern = filepath.ToSlash(pattern)
	for strings.HasPrefix(pattern, "./") {
		pattern = strings.TrimLeft(pattern[2:], "/")
	}
	if pattern == "" || pattern == "." {
		pattern = "*"
	}
	for _, seg := range strings.Split(pattern, "/") {
		if seg == ".." {
			return "", tool.Errorf("pattern %q leaves the working directory (\"..\" is not allowed)", orig), false
		}
	}
	if !doublestar.ValidatePattern(pattern) {
		return "", tool.Errorf("bad glob pattern %q", orig), false
	}
	return pattern, tool.Result{}, true
}

// rootSpellings returns the working directory as configured and with its
// links resolved; an absolute path may use either.
func (e *env) rootSpellings() []string {
	out := []string{e.root}
	if real, err := filepath.EvalSymlinks(e.root); err == nil && real != e.root {
		out = append(out, real)
	}
	return out
}

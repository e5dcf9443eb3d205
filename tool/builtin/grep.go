package builtin

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/deputyhq/deputy/internal/safeopen"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
)

const (
	// maxGrepMatches caps grep's answer by count; OutputMaxBytes caps it by size.
	maxGrepMatches = 200
	// maxGrepLine is how much of a matching line is shown.
	maxGrepLine = 300
	// maxGrepFileSize skips files too big to be source code worth a model's time.
	maxGrepFileSize = 16 << 20
	// maxScanLine is the longest line grep can match on; a file with a
	// longer line is searched up to that line.
	maxScanLine = 1 << 20
)

type grepArgs struct {
	Pattern string `json:"pattern" jsonschema:"regular expression in Go (RE2) syntax, matched against each line"`
	Path    string `json:"path,omitempty" jsonschema:"file or directory to search, relative to the working directory (default: the working directory)"`
	Include string `json:"include,omitempty" jsonschema:"only search files matching this glob, e.g. '*.go' (file name) or 'src/**/*.ts' (path)"`
}

func grepTool(e *env) tool.Tool {
	return tool.New(Grep,
		"Search file contents with a regular expression. Returns matching lines as path:line:text, "+
			"skipping .git, binary files and symbolic links.",
		e.grep)
}

// errGrepFull stops the walk once the output is full.
var errGrepFull = errors.New("output full")

// grepRun is the state of one grep call.
type grepRun struct {
	e       *env
	root    string // the resolved working directory, paths are shown relative to it
	re      *regexp.Regexp
	include string
	out     strings.Builder
	matches int
	full    bool
	skipped int // files too large to search
	// br and buf are reused from file to file.
	br  *bufio.Reader
	buf []byte
}

func (e *env) grep(ctx context.Context, a grepArgs) (tool.Result, error) {
	if a.Pattern == "" {
		return tool.Errorf("pattern must not be empty"), nil
	}
	re, err := regexp.Compile(a.Pattern)
	if err != nil {
		return tool.Errorf("bad regular expression %q: %v", a.Pattern, unwrapSyntax(err)), nil
	}
	include := filepath.ToSlash(a.Include)
	if include != "" && !doublestar.ValidatePattern(include) {
		return tool.Errorf("bad include glob %q", a.Include), nil
	}
	start, err := e.confine(a.Path)
	if err != nil {
		return pathError(err), nil
	}
	root, err := e.confine("")
	if err != nil {
		return pathError(err), nil
	}
	g := &grepRun{e: e, root: root, re: re, include: include}
	fi, err := os.Stat(start)
	if err != nil {
		return fileError(orDot(e.rel(start)), err), nil
	}
	if fi.IsDir() {
		err = filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			if err != nil {
				return nil // unreadable entries are skipped, not fatal
			}
			if d.IsDir() {
				if d.Name() == ".git" {
					return filepath.SkipDir
				}
				return nil
			}
			// WalkDir does not follow links; skipping them keeps grep from
			// reading through one to outside the workdir.
			if !d.Type().IsRegular() || !g.included(p) {
				return nil
			}
			return g.file(p)
		})
	} else {
		err = g.file(start)
	}
	switch {
	case errors.Is(err, errGrepFull):
	case ctx.Err() != nil:
		return tool.Errorf("grep cancelled: %v", ctx.Err()), nil
	case err != nil:
		return tool.Errorf("grep: %v", err), nil
	}
	return g.result(a.Pattern), nil
}

// included applies the include glob: to the file name when the glob has no
// '/', else to the path relative to the working directory.
func (g *grepRun) included(p string) bool {
	if g.include == "" {
		return true
	}
	name := filepath.Base(p)
	if strings.Contains(g.include, "/") {
		name = relTo(g.root, p)
	}
	ok, _ := doublestar.Match(g.include, name)
	return ok
}

// file searches one file, appending its matches.
func (g *grepRun) file(p string) error {
	f, err := safeopen.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	} else if fi.Size() > maxGrepFileSize {
		g.skipped++
		return nil
	}
	if g.br == nil {
		g.br = bufio.NewReaderSize(f, 64<<10)
	} else {
		g.br.Reset(f)
	}
	br := g.br
	if head, _ := br.Peek(sniffLen); looksBinary(head) {
		return nil
	}
	shown := relTo(g.root, p)
	for lineNo := 1; ; lineNo++ {
		line, cut, err := readLine(br, maxScanLine, g.buf)
		g.buf = line[:0]
		if err == io.EOF || cut {
			// A line over maxScanLine is no text a model wants to see;
			// what came before it has been searched.
			return nil
		}
		if err != nil {
			return nil
		}
		if !g.re.Match(line) {
			continue
		}
		text := strings.ToValidUTF8(string(line), "\uFFFD")
		if len(text) > maxGrepLine {
			text = llm.CutUTF8(text, maxGrepLine) + " …"
		}
		entry := fmt.Sprintf("%s:%d:%s\n", shown, lineNo, text)
		if g.matches == maxGrepMatches || g.out.Len()+len(entry) > g.e.opts.OutputMaxBytes {
			g.full = true
			return errGrepFull
		}
		g.out.WriteString(entry)
		g.matches++
	}
}

// result renders what was found, with notes on anything left out.
func (g *grepRun) result(pattern string) tool.Result {
	var notes []string
	if g.full {
		notes = append(notes, fmt.Sprintf("[stopped after %s; narrow the pattern, path or include]", plural(g.matches, "match", "matches")))
	}
	if g.skipped > 0 {
		notes = append(notes, fmt.Sprintf("[skipped %s larger than %d MiB]", plural(g.skipped, "file", "files"), maxGrepFileSize>>20))
	}
	if g.matches == 0 {
		notes = append([]string{fmt.Sprintf("no matches for %q", pattern)}, notes...)
	}
	return tool.Text(g.out.String() + strings.Join(notes, "\n"))
}

// unwrapSyntax keeps regexp's explanation and drops its "error parsing
// regexp: " prefix, which would repeat what the caller already says.
func unwrapSyntax(err error) string {
	var se *syntax.Error
	if errors.As(err, &se) {
		return se.Code.String() + ": `" + se.Expr + "`"
	}
	return err.Error()
}

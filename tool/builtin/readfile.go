package builtin

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/deputyhq/deputy/internal/safeopen"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
)

const (
	// defaultReadLines is how many lines read_file shows without a limit.
	defaultReadLines = 2000
	// maxLineBytes caps one shown line; longer lines are cut and marked.
	maxLineBytes = 2000
)

type readFileArgs struct {
	Path   string `json:"path" jsonschema:"file to read, relative to the working directory"`
	Offset int    `json:"offset,omitempty" jsonschema:"line number to start at, counting from 1 (default 1)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"maximum number of lines to return (default 2000)"`
}

func readFileTool(e *env) tool.Tool {
	return tool.New(ReadFile,
		"Read a text file in the working directory. Returns its lines as they are (no line numbers); "+
			"long files are cut, with a note saying which lines were shown and how to read on with offset.",
		e.readFile)
}

func (e *env) readFile(_ context.Context, a readFileArgs) (tool.Result, error) {
	if a.Path == "" {
		return tool.Errorf("path must not be empty"), nil
	}
	if a.Offset < 0 || a.Limit < 0 {
		return tool.Errorf("offset and limit must not be negative"), nil
	}
	offset, limit := max(a.Offset, 1), a.Limit
	if limit == 0 {
		limit = defaultReadLines
	}
	p, err := e.confine(a.Path)
	if err != nil {
		return pathError(err), nil
	}
	shown := e.rel(p)
	f, err := e.open(p, os.O_RDONLY, 0)
	var nr *safeopen.NotRegularError
	if errors.As(err, &nr) && nr.Mode.IsDir() {
		return tool.Errorf("%s is a directory; use list_directory to see what it holds", shown), nil
	}
	if err != nil {
		return fileError(shown, err), nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fileError(shown, err), nil
	}
	br := bufio.NewReaderSize(f, 64<<10)
	if head, _ := br.Peek(sniffLen); looksBinary(head) {
		return tool.Errorf("%s looks like a binary file (%d bytes); read_file only shows text", shown, fi.Size()), nil
	}

	var out strings.Builder
	var (
		lineNo, first, last int
		linesCut            bool
		stop                string // why output ended early, if it did
	)
	var buf []byte
	for {
		line, cut, err := readLine(br, maxLineBytes, buf)
		buf = line[:0]
		if err == io.EOF {
			break
		}
		if err != nil {
			return fileError(shown, err), nil
		}
		lineNo++
		if lineNo < offset || stop != "" {
			continue // keep counting, for the total in the note
		}
		if lineNo-offset >= limit {
			stop = "limit"
			continue
		}
		text := strings.ToValidUTF8(string(line), "\uFFFD")
		if cut {
			text = llm.CutUTF8(text, maxLineBytes) + " … [line cut]"
			linesCut = true
		}
		if out.Len()+len(text)+1 > e.opts.ReadMaxBytes && last > 0 {
			stop = "size"
			continue
		}
		if first == 0 {
			first = lineNo
		}
		last = lineNo
		out.WriteString(text)
		out.WriteByte('\n')
	}

	switch {
	case lineNo == 0:
		return tool.Text(fmt.Sprintf("(%s is empty)", shown)), nil
	case first == 0:
		return tool.Errorf("offset %d is past the end of %s (%s)", offset, shown, plural(lineNo, "line", "lines")), nil
	}
	var notes []string
	if stop != "" || first > 1 {
		note := fmt.Sprintf("[showing lines %d-%d of %d", first, last, lineNo)
		if last < lineNo {
			note += fmt.Sprintf("; read on with offset=%d", last+1)
		}
		notes = append(notes, note+"]")
	}
	if linesCut {
		notes = append(notes, fmt.Sprintf("[lines longer than %d bytes were cut]", maxLineBytes))
	}
	if len(notes) > 0 {
		out.WriteString(strings.Join(notes, "\n"))
	}
	return tool.Text(out.String()), nil
}

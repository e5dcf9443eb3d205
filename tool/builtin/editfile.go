package builtin

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/deputyhq/deputy/tool"
)

type editFileArgs struct {
	Path    string `json:"path" jsonschema:"file to edit, relative to the working directory"`
	OldText string `json:"old_text" jsonschema:"exact text to replace; it must occur exactly once in the file, so include enough surrounding lines to make it unique"`
	NewText string `json:"new_text" jsonschema:"text to put in its place (empty to delete it)"`
}

func editFileTool(e *env) tool.Tool {
	return tool.New(EditFile,
		"Replace one exact occurrence of old_text with new_text in a file. "+
			"Fails without changing anything when old_text is missing or occurs more than once.",
		e.editFile)
}

func (e *env) editFile(_ context.Context, a editFileArgs) (tool.Result, error) {
	if a.Path == "" {
		return tool.Errorf("path must not be empty"), nil
	}
	if a.OldText == "" {
		return tool.Errorf("old_text must not be empty; use write_file to create a file"), nil
	}
	if a.OldText == a.NewText {
		return tool.Errorf("old_text and new_text are the same; nothing to change"), nil
	}
	p, err := e.confine(a.Path)
	if err != nil {
		return pathError(err), nil
	}
	shown := e.rel(p)
	f, err := e.open(p, os.O_RDWR, 0)
	if err != nil {
		return fileError(shown, err), nil
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return fileError(shown, err), nil
	}
	content := string(data)
	oldText, newText := a.OldText, a.NewText
	n := strings.Count(content, oldText)
	// read_file shows lines without "\r"; a model quoting them back into a
	// CRLF file means the CRLF text.
	if n == 0 && strings.Contains(content, "\r\n") && strings.Contains(oldText, "\n") && !strings.Contains(oldText, "\r") {
		oldText = strings.ReplaceAll(oldText, "\n", "\r\n")
		newText = strings.ReplaceAll(newText, "\n", "\r\n")
		n = strings.Count(content, oldText)
	}
	switch {
	case n == 0:
		return tool.Errorf("old_text not found in %s", shown), nil
	case n > 1:
		return tool.Errorf("old_text occurs %d times in %s; include more context", n, shown), nil
	}
	i := strings.Index(content, oldText)
	updated := content[:i] + newText + content[i+len(oldText):]
	if err := rewrite(f, []byte(updated)); err != nil {
		return fileError(shown, err), nil
	}
	startLine := strings.Count(content[:i], "\n") + 1
	endLine := startLine + strings.Count(newText, "\n")
	where := fmt.Sprintf("line %d", startLine)
	if endLine > startLine {
		where = fmt.Sprintf("lines %d-%d", startLine, endLine)
	}
	return tool.Text(fmt.Sprintf("edited %s: replaced 1 occurrence, now at %s", shown, where)), nil
}

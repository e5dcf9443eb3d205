package builtin

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/deputyhq/deputy/internal/safeopen"
	"github.com/deputyhq/deputy/tool"
)

type writeFileArgs struct {
	Path    string `json:"path" jsonschema:"file to write, relative to the working directory; missing parent directories are created"`
	Content string `json:"content" jsonschema:"the complete new content of the file"`
}

func writeFileTool(e *env) tool.Tool {
	return tool.New(WriteFile,
		"Create a file or replace its whole content. For a small change to an existing file prefer edit_file.",
		e.writeFile)
}

// rewrite replaces the whole content of f, a regular file open for writing,
// and closes it.
func rewrite(f *os.File, data []byte) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		return err
	}
	return f.Close()
}

func (e *env) writeFile(_ context.Context, a writeFileArgs) (tool.Result, error) {
	if a.Path == "" {
		return tool.Errorf("path must not be empty"), nil
	}
	p, err := e.confine(a.Path)
	if err != nil {
		return pathError(err), nil
	}
	shown := e.rel(p)
	verb := "created"
	mode := fs.FileMode(0o644)
	switch fi, err := os.Stat(p); {
	case err == nil && fi.IsDir():
		return tool.Errorf("%s is a directory", shown), nil
	case err == nil && !fi.Mode().IsRegular():
		return fileError(shown, &safeopen.NotRegularError{Mode: fi.Mode()}), nil
	case err == nil:
		verb, mode = "overwrote", fi.Mode().Perm()
	case !errors.Is(err, fs.ErrNotExist):
		return fileError(shown, err), nil
	}
	// Confine resolved every existing link and the rest of the path does
	// not exist yet, so the directories made here are inside the workdir.
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fileError(filepath.ToSlash(filepath.Dir(shown)), err), nil
	}
	f, err := e.open(p, os.O_WRONLY|os.O_CREATE, mode)
	if err != nil {
		return fileError(shown, err), nil
	}
	defer f.Close()
	if err := rewrite(f, []byte(a.Content)); err != nil {
		return fileError(shown, err), nil
	}
	return tool.Text(verb + " " + shown + " (" + plural(len(a.Content), "byte", "bytes") + ")"), nil
}

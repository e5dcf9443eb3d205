//go:build unix

package builtin

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/deputyhq/deputy/tool"
)

// bounded runs f and fails the test if it has not returned within 10s: a
// tool that blocks on a named pipe would otherwise hang the test binary.
func bounded(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s blocked for 10s", what)
	}
}

// A named pipe in the working directory (nobody writing to it, nobody
// reading) must not make any file tool wait: each refuses it at once.
func TestFileToolsRefuseNamedPipe(t *testing.T) {
	r, dir := testRegistry(t, Options{}, map[string]string{"ok.txt": "needle\n"})
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, c := range []struct {
		name string
		args any
	}{
		{ReadFile, map[string]any{"path": "pipe"}},
		{EditFile, map[string]any{"path": "pipe", "old_text": "a", "new_text": "b"}},
		{WriteFile, map[string]any{"path": "pipe", "content": "x"}},
	} {
		var res tool.Result
		bounded(t, c.name, func() { res = call(t, r, c.name, c.args) })
		wantErr(t, res, "pipe is a named pipe, not a regular file")
	}
	// grep skips the pipe and still finds the regular file's match.
	var res tool.Result
	bounded(t, Grep, func() { res = call(t, r, Grep, map[string]any{"pattern": "needle"}) })
	wantOK(t, res, "ok.txt:1")
	bounded(t, Grep, func() { res = call(t, r, Grep, map[string]any{"pattern": "needle", "path": "pipe"}) })
}

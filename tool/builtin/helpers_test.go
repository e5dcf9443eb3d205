package builtin

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/tool"
)

// testRegistry returns the built-in tools over a fresh working directory
// holding files (name -> content; a name ending in "/" is a directory).
func testRegistry(t testing.TB, opts Options, files map[string]string) (*tool.Registry, string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opts.Workdir = dir
	return New(opts), dir
}

// call runs the named tool with args (marshalled to JSON unless already a
// string) and fails the test on a Go error, which built-ins never return.
func call(t *testing.T, r *tool.Registry, name string, args any) tool.Result {
	t.Helper()
	return callCtx(context.Background(), t, r, name, args)
}

func callCtx(ctx context.Context, t *testing.T, r *tool.Registry, name string, args any) tool.Result {
	t.Helper()
	tl, ok := r.Get(name)
	if !ok {
		t.Fatalf("no tool %q", name)
	}
	var raw []byte
	if s, ok := args.(string); ok {
		raw = []byte(s)
	} else {
		var err error
		if raw, err = json.Marshal(args); err != nil {
			t.Fatal(err)
		}
	}
	res, err := tl.Run(ctx, raw)
	if err != nil {
		t.Fatalf("%s(%s) returned a Go error: %v", name, raw, err)
	}
	return res
}

// wantOK and wantErr check a result's kind and that it contains each part.
func wantOK(t *testing.T, res tool.Result, parts ...string) {
	t.Helper()
	if res.IsError {
		t.Errorf("unexpected error result: %s", res.Content)
		return
	}
	wantParts(t, res, parts)
}

func wantErr(t *testing.T, res tool.Result, parts ...string) {
	t.Helper()
	if !res.IsError {
		t.Errorf("want an error result, got: %s", res.Content)
		return
	}
	wantParts(t, res, parts)
}

func wantParts(t *testing.T, res tool.Result, parts []string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(res.Content, p) {
			t.Errorf("result %q does not contain %q", res.Content, p)
		}
	}
}

func readBack(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

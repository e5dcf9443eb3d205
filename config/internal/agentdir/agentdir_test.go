package agentdir_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/config/internal/agentdir"
	"github.com/deputyhq/deputy/config/internal/osfile"
	"github.com/deputyhq/deputy/config/internal/testfile"
)

func markdown(_ string, e fs.DirEntry) bool { return strings.HasSuffix(e.Name(), ".md") }

// Files in file-name order, a subdirectory's where its name sorts, down to
// MaxDepth levels and no further; what keep refuses is left out.
func TestTree(t *testing.T) {
	dir := t.TempDir()
	deep := "d" // MaxDepth levels below dir
	for range agentdir.MaxDepth - 1 {
		deep = filepath.Join(deep, "d")
	}
	for _, p := range []string{"b.md", "a/x.md", "c.txt", filepath.Join(deep, "last.md"), filepath.Join(deep, "d", "beyond.md")} {
		testfile.Write(t, filepath.Join(dir, p), "")
	}
	paths, diags := agentdir.Tree(dir, osfile.IsDir, markdown)
	want := []string{filepath.Join(dir, "a", "x.md"), filepath.Join(dir, "b.md"), filepath.Join(dir, deep, "last.md")}
	if d := cmp.Diff(want, paths); d != "" || len(diags) != 0 {
		t.Errorf("paths (-want +got):\n%s\ndiagnostics %v", d, diags)
	}

	// A directory that does not exist has no files and no warning.
	if paths, diags := agentdir.Tree(filepath.Join(dir, "missing"), osfile.IsDir, markdown); paths != nil || diags != nil {
		t.Errorf("missing directory: %v, %v", paths, diags)
	}

	// One that cannot be read is a warning naming it; the rest is read.
	if os.Geteuid() == 0 {
		t.Skip("root reads every directory")
	}
	locked := filepath.Join(dir, "a")
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(locked, 0o755) })
	paths, diags = agentdir.Tree(dir, osfile.IsDir, markdown)
	if d := cmp.Diff(want[1:], paths); d != "" || len(diags) != 1 ||
		diags[0].String() != locked+": cannot read agent directory: permission denied; its agents are left out" {
		t.Errorf("paths (-want +got):\n%s\ndiagnostics %v", d, diags)
	}
}

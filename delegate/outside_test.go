package delegate_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A program in a module of its own, depending on deputy through a replace
// directive as a new user would before a release, builds, runs a delegating
// tree without a ledger, and links no SQLite. The binary's size is logged
// (go test -v -run Outside ./delegate) for docs/performance.md.
func TestOutsideModuleWithoutLedger(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program: not in -short")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "outside", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	goMod := "module example.com/outside\n\ngo 1.26\n\nrequire github.com/deputyhq/deputy v0.0.0\n\nreplace github.com/deputyhq/deputy => " + repo + "\n"
	for name, data := range map[string][]byte{"main.go": src, "go.mod": []byte(goMod)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// deputy's go.sum covers every module the program can need.
	if sum, err := os.ReadFile(filepath.Join(repo, "go.sum")); err == nil {
		if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(goCmd, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	bin := filepath.Join(dir, "outside")
	run("build", "-o", bin, ".")
	deps := run("list", "-deps", ".")
	for line := range strings.Lines(deps) {
		pkg := strings.TrimSpace(line)
		if strings.HasPrefix(pkg, "modernc.org/sqlite") || pkg == "database/sql" || pkg == "github.com/deputyhq/deputy/store" {
			t.Errorf("the program links %s", pkg)
		}
	}
	if !strings.Contains(deps, "github.com/deputyhq/deputy/delegate\n") {
		t.Errorf("go list -deps does not list delegate:\n%s", deps)
	}
	out, err := exec.Command(bin).CombinedOutput()
	if err != nil {
		t.Fatalf("running the program: %v\n%s", err, out)
	}
	if got, want := string(out), "ok - helper said: hello\n"; got != want {
		t.Errorf("the program printed %q, want %q", got, want)
	}
	if fi, err := os.Stat(bin); err == nil {
		t.Logf("binary size: %d bytes (%.1f MB)", fi.Size(), float64(fi.Size())/(1<<20))
	}
}

package delegate_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The engine and what it is built on link no database: a program without
// a ledger does not pay for SQLite. (A program outside the module is
// checked in package workspace's tests.)
func TestNoSQLiteBelowTheLedger(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list dependencies with")
	}
	pkgs := []string{"./delegate", "./agent", "./tool", "./llm", "./config", "./ledger"}
	cmd := exec.Command(goCmd, append([]string{"list", "-deps"}, pkgs...)...)
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for line := range strings.Lines(string(out)) {
		pkg := strings.TrimSpace(line)
		if strings.HasPrefix(pkg, "modernc.org/sqlite") || pkg == "github.com/deputyhq/deputy/store" || pkg == "database/sql" {
			t.Errorf("%s is linked by %v", pkg, pkgs)
		}
	}
}

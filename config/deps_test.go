package config_test

import (
	"os/exec"
	"strings"
	"testing"
)

// Dependencies point one way: the origin packages (config/claude,
// config/axe, ...) import config, and config imports none of them, nor
// anything that composes them.
func TestConfigKnowsNoOrigin(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list dependencies with")
	}
	out, err := exec.Command(goCmd, "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const self = "github.com/deputyhq/deputy/config"
	for line := range strings.Lines(string(out)) {
		pkg := strings.TrimSpace(line)
		if strings.HasPrefix(pkg, self+"/") && !strings.HasPrefix(pkg, self+"/internal/") || pkg == "github.com/deputyhq/deputy/workspace" {
			t.Errorf("config depends on %s", pkg)
		}
	}
}

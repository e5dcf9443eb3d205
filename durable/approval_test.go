//go:build temporal

package durable_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/permission"
)

// On Temporal nobody is there to approve: a call an ask rule asks about
// is refused at once, as a local run without a person refuses it, and
// the permission rules cross the workflow boundary as they cross a local
// call: the worker's own allow and bypassPermissions cannot undo the
// lead's deny.
func TestAskIsARefusalOnTemporal(t *testing.T) {
	script := `
rules:
  - match: {system: "^LEAD", last_role: user}
    reply: {tool_calls: [{name: call_agent, arguments: {agent: worker-a, task: "part A"}}]}
  - match: {system: "^LEAD", last_role: tool}
    reply: {text: "{{ index .ToolResults 0 }}"}
  - match: {system: "^WORKER A", last_role: user}
    reply:
      tool_calls:
        - {name: terminal, arguments: {command: "touch made.txt"}}
        - {name: terminal, arguments: {command: "rm keep.txt"}}
  - match: {system: "^WORKER A", last_role: tool}
    reply: {text: "{{ join .ToolResults \" | \" }}"}
`
	parse := func(s string) permission.Rule {
		r, err := permission.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	eng, _, lead := newEngineWith(t, script)
	lead.Permissions = permission.Rules{Ask: []permission.Rule{parse("terminal(touch:*)")}, Deny: []permission.Rule{parse("terminal(rm:*)")}}
	worker, _ := eng.Agents.Get("worker-a")
	worker.Tools = []string{"terminal"}
	worker.Permissions = permission.Rules{Allow: []permission.Rule{parse("terminal")}, Mode: permission.ModeBypass}
	dir := t.TempDir()
	writeFile(t, dir, "keep.txt", "kept")
	_, got := onTemporal(t, eng, eng, delegate.RunRequest{Agent: lead, Task: "go", Workdir: dir})
	if got.Status != delegate.StatusOK {
		t.Fatalf("workflow: %s %s", got.Status, got.Error)
	}
	want := `Error: Permission denied: terminal "touch made.txt" needs a person's approval (the rule terminal(touch:*) asks for it), and nobody is there to give it; it did not run. Do without it, or finish and say what you needed. | ` +
		`Error: Permission denied: terminal "rm keep.txt" is refused by the rule terminal(rm:*).`
	if !strings.HasPrefix(got.Output, want) {
		t.Errorf("the lead read:\n%s\nwant:\n%s", got.Output, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "made.txt")); err == nil {
		t.Error("made.txt was made without an approval")
	}
	if _, err := os.Stat(filepath.Join(dir, "keep.txt")); err != nil {
		t.Errorf("keep.txt: %v", err)
	}
}

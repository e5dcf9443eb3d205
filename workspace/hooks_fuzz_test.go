package workspace

import (
	"strings"
	"testing"
)

// FuzzHookDecision: whatever a hook prints, its answer is read without a
// panic; only a PreToolUse hook blocks, and a block always says why.
func FuzzHookDecision(f *testing.F) {
	for _, seed := range []string{
		`{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no rm"}}`,
		`{"hookSpecificOutput": {"permissionDecision": "ask"}}`,
		`{"hookSpecificOutput": {"permissionDecision": "allow", "additionalContext": "lint ok"}}`,
		`{"decision": "block", "reason": "tests fail"}`, `{"decision": "block", "reason": " "}`,
		`{"hookSpecificOutput": [1]}`, "lint ok\n", `null`, ``,
	} {
		f.Add("PreToolUse", []byte(seed))
		f.Add("PostToolUse", []byte(seed))
	}
	f.Fuzz(func(t *testing.T, event string, stdout []byte) {
		out := decision(event, stdout)
		if out.block && (event != "PreToolUse" || strings.TrimSpace(out.reason) == "") {
			t.Errorf("%s hook %q: %+v", event, stdout, out)
		}
		if again := decision(event, stdout); again != out {
			t.Errorf("not deterministic: %+v, then %+v", out, again)
		}
	})
}

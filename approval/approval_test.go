package approval_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/approval"
)

func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		tool, args, want string
	}{
		{"terminal", `{"command":"touch approved.txt"}`, "$ touch approved.txt"},
		{"edit_file", `{"path":"a.go","old_text":"x := 1\n","new_text":"x := 2\ny := 3"}`, "--- a.go\n+++ a.go\n-x := 1\n+x := 2\n+y := 3"},
		{"write_file", `{"path":"n.txt","content":"one\ntwo"}`, "+++ n.txt (2 lines)\n+one\n+two"},
		{"fetch", `{"url":"https://go.dev/x"}`, "GET https://go.dev/x"},
		{"mcp__gh__create", `{"title": "x",  "n": 1}`, `mcp__gh__create {"n":1,"title":"x"}`},
		{"terminal", `not json`, "terminal not json"},
		{"ask_user", ``, "ask_user"},
		{"terminal", `{"command":"rm -rf ~ \u001b[2K\recho hi"}`, `$ rm -rf ~ \x1b[2K\x0decho hi`},
	} {
		if got := approval.Describe(tc.tool, json.RawMessage(tc.args)); got != tc.want {
			t.Errorf("Describe(%s, %s) = %q, want %q", tc.tool, tc.args, got, tc.want)
		}
	}
	long := approval.Describe("terminal", json.RawMessage(`{"command":"`+strings.Repeat(`echo x\n`, 100)+`"}`))
	if !strings.HasSuffix(long, "\n… (61 more lines)") || strings.Count(long, "\n") != 40 {
		t.Errorf("a long command is not cut: %q", long[len(long)-40:])
	}
	r := approval.Request{Path: []string{"lead", "researcher", "fetcher"}}
	if r.PathText() != "lead › researcher › fetcher" {
		t.Errorf("path %q", r.PathText())
	}
}

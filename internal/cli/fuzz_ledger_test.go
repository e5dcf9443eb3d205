package cli

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/deputyhq/deputy/store"
)

// FuzzViewMessages: the tool calls of a ledger message are JSON read back
// from the database, which an older deputy, a crash or a hand edit may
// have left in any shape. runs show and replay render any of it without a
// panic, and a value they cannot read is kept raw for display, never lost.
func FuzzViewMessages(f *testing.F) {
	for _, s := range []string{
		`[{"id":"call_1","name":"read_file","arguments":{"path":"a.txt"}}]`,
		`[{"id":"c","name":"call_agent","arguments":"{\"agent\":\"x\"}"},{"id":"d","name":"grep"}]`,
		`[]`, `null`, `{}`, `[{"id":3}]`, `[{"arguments":{`, "\xff", ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, calls []byte) {
		views := viewMessages([]store.Message{{Seq: 1, Role: "assistant", ToolCalls: calls, InputTokens: 3}})
		if len(views) != 1 {
			t.Fatalf("%d views of one message", len(views))
		}
		v := views[0]
		if !bytes.Equal(v.RawCalls, calls) {
			t.Fatalf("raw tool calls changed: %q", v.RawCalls)
		}
		if len(calls) > 0 && !json.Valid(calls) && v.ToolCalls != nil {
			t.Fatalf("invalid JSON %q read as %+v", calls, v.ToolCalls)
		}
		if v.Usage == nil || v.Usage.InputTokens != 3 {
			t.Fatalf("usage %+v", v.Usage)
		}
	})
}

package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/deputyhq/deputy/approval"
	"github.com/deputyhq/deputy/store"
)

// The answers a program writes on stdin under --stream-json, and what a
// line that is not one says.
func TestParseStreamAnswer(t *testing.T) {
	for _, tc := range []struct {
		line, id string
		kind     approval.Kind
		ans      approval.Answer
		err      string
	}{
		{line: `{"type":"approval","id":"A","decision":"allow"}`, id: "A", kind: approval.KindApproval, ans: approval.Answer{Allow: true}},
		{line: `{"type":"approval","id":"A","decision":"allow","always":true}`, id: "A", kind: approval.KindApproval, ans: approval.Answer{Allow: true, Always: true}},
		{line: `{"type":"approval","id":"A","decision":"deny","reason":"no"}`, id: "A", kind: approval.KindApproval, ans: approval.Answer{Text: "no"}},
		{line: `{"type":"answer","id":"Q","text":""}`, id: "Q", kind: approval.KindQuestion, ans: approval.Answer{Allow: true}},
		{line: `{"type":"approval","id":"A","decision":"yes"}`, err: `decision "yes": it is "allow" or "deny"`},
		{line: `{"type":"approval","decision":"allow"}`, err: "no id (the id of the request it answers)"},
		{line: `{"type":"answer","id":"Q"}`, err: "an answer to a question has a text"},
		{line: `{"type":"approve","id":"A"}`, err: `type "approve": it is "approval" or "answer"`},
		{line: `{"type":"approval","id":"A","decision":"allow","Always":1}`, err: `not an answer: json: cannot unmarshal number into Go struct field streamAnswer.always of type bool`},
		{line: `{"type":"approval","id":"A","decision":"allow","remember":true}`, err: `not an answer: json: unknown field "remember"`},
	} {
		id, reply, err := parseStreamAnswer([]byte(tc.line))
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: %v, want %q", tc.line, err, tc.err)
			}
			continue
		}
		if err != nil || id != tc.id || reply.kind != tc.kind || reply.ans != tc.ans {
			t.Errorf("%s: %q %+v %v", tc.line, id, reply, err)
		}
	}
}

// A stream answer may come before its request is asked (the program reads
// the event before the engine waits), and once stdin ends nobody is there.
func TestStreamPerson(t *testing.T) {
	in, w := io.Pipe()
	var warn strings.Builder
	p := newStreamPerson(in, &warn)
	io.WriteString(w, "{\"type\":\"approval\",\"id\":\"early\",\"decision\":\"allow\"}\n")
	io.WriteString(w, "nonsense\n")
	go io.WriteString(w, "{\"type\":\"answer\",\"id\":\"late\",\"text\":\"x\"}\n")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if a, err := p.Ask(ctx, &approval.Request{ID: "early", Kind: approval.KindApproval}); err != nil || !a.Allow {
		t.Errorf("early: %+v %v", a, err)
	}
	if a, err := p.Ask(ctx, &approval.Request{ID: "late", Kind: approval.KindApproval}); err != nil || a.Allow {
		t.Errorf("an answer of the other kind is a deny: %+v %v", a, err)
	}
	w.Close()
	if _, err := p.Ask(ctx, &approval.Request{ID: "after", Kind: approval.KindApproval}); err != approval.ErrNobody {
		t.Errorf("after stdin ended: %v", err)
	}
	want := "deputy: warning: stdin line 2: not an answer: invalid character 'o' in literal null (expecting 'u'); ignored (under --stream-json stdin carries answers, each a JSON object: see docs/observability.md)\n" +
		"deputy: warning: stdin line 3 answers the approval late as if it were a question; taken as a refusal\n"
	if warn.String() != want {
		t.Errorf("warnings:\n%s\nwant:\n%s", warn.String(), want)
	}
}

// FuzzStreamAnswer: whatever a program writes on stdin under
// --stream-json, a line is an answer with an id or an error, never a panic.
func FuzzStreamAnswer(f *testing.F) {
	for _, s := range []string{
		`{"type":"approval","id":"A","decision":"allow","always":true}`,
		`{"type":"approval","id":"A","decision":"deny","reason":"not now"}`,
		`{"type":"answer","id":"Q","text":"main"}`,
		`{"type":"answer","id":"","text":null}`, `[]`, `{"type":3}`, "\xff", `{"id":"A","decision":"allow"} trailing`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		id, reply, err := parseStreamAnswer(line)
		if err == nil && (id == "" || reply.kind == "") {
			t.Fatalf("%q: an answer without an id or a kind", line)
		}
	})
}

// FuzzViewApprovals: approval events read back from the ledger become
// views, or are skipped, never a panic.
func FuzzViewApprovals(f *testing.F) {
	f.Add("approval_request", []byte(`{"depth":2,"kind":"call_agent","label":"h","request":{"id":"A","kind":"approval","path":["a","h"],"tool":"terminal","arguments":{"command":"ls"},"detail":"$ ls","time":"2026-11-28T10:00:00Z"}}`),
		"approval_answered", []byte(`{"request":{"id":"A","kind":"approval"},"answer":{"allow":true,"by":"person","time":"2026-11-28T10:00:01Z"}}`))
	f.Add("question", []byte(`{"request":{"id":"Q","kind":"question","question":"?"}}`), "question_answered", []byte(`{"request":{"id":"Q"},"answer":null}`))
	f.Fuzz(func(t *testing.T, t1 string, f1 []byte, t2 string, f2 []byte) {
		views := approvalViews([]store.Event{{Type: t1, Fields: json.RawMessage(f1)}, {Type: t2, Fields: json.RawMessage(f2)}})
		for _, v := range views {
			if v.ID == "" || v.Outcome == "" {
				t.Fatalf("view %+v", v)
			}
		}
		printApprovals(io.Discard, views)
	})
}

// A file piped in under --stream-json (as if it were the task's context)
// gets a few warnings, not one a line.
func TestStreamPersonWarnsAFewTimes(t *testing.T) {
	var warn strings.Builder
	p := newStreamPerson(strings.NewReader(strings.Repeat("diff --git a/x b/x\n", 50)), &warn)
	<-p.gone
	if n := strings.Count(warn.String(), "\n"); n != maxBadLines+1 || !strings.HasSuffix(warn.String(), "they are ignored without a word\n") {
		t.Errorf("%d warnings:\n%s", n, warn.String())
	}
}

// A line too long to be an answer is skipped with a warning, and the
// answers after it still count: it does not end stdin's answers, which
// would refuse every later request as if nobody were there.
func TestStreamPersonSkipsAHugeLine(t *testing.T) {
	huge := `{"type":"approval","id":"H","decision":"deny","reason":"` + strings.Repeat("x", maxAnswerLine) + "\"}\n"
	in := strings.NewReader(huge + "{\"type\":\"approval\",\"id\":\"next\",\"decision\":\"allow\"}\n")
	var warn strings.Builder
	p := newStreamPerson(in, &warn)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if a, err := p.Ask(ctx, &approval.Request{ID: "next", Kind: approval.KindApproval}); err != nil || !a.Allow {
		t.Errorf("the answer after the huge line: %+v %v", a, err)
	}
	<-p.gone
	want := fmt.Sprintf("deputy: warning: stdin line 1: longer than %d bytes; ignored (under --stream-json stdin carries answers, each a JSON object: see docs/observability.md)\n", maxAnswerLine)
	if warn.String() != want {
		t.Errorf("warnings:\n%s\nwant:\n%s", warn.String(), want)
	}
}

// FuzzReadLine: stdin under --stream-json read line by line gives back
// each line of the input as it is (without its newline and a CR before
// it) or, for one longer than the limit, nothing but a mark; the reader's
// small buffer makes long lines come in pieces.
func FuzzReadLine(f *testing.F) {
	f.Add([]byte("{\"type\":\"approval\"}\n\nshort\r\n"), uint8(8))
	f.Add([]byte(strings.Repeat("x", 40)+"\nend"), uint8(16))
	f.Fuzz(func(t *testing.T, data []byte, limit uint8) {
		br := bufio.NewReaderSize(bytes.NewReader(data), 16)
		want := strings.Split(string(data), "\n")
		for i := 0; ; i++ {
			if i >= len(want) {
				t.Fatalf("more lines than the input's %d", len(want))
			}
			line, tooLong, err := readLine(br, int(limit))
			w := strings.TrimSuffix(want[i], "\r")
			switch {
			case len(want[i]) > int(limit) && !tooLong && len(w) > int(limit):
				t.Fatalf("line %d (%d bytes) not marked too long for limit %d", i, len(want[i]), limit)
			case !tooLong && string(line) != w:
				t.Fatalf("line %d: %q, want %q", i, line, w)
			case tooLong && line != nil:
				t.Fatalf("line %d too long, yet kept %q", i, line)
			}
			if err != nil {
				if i != len(want)-1 {
					t.Fatalf("ended at line %d of %d: %v", i, len(want), err)
				}
				return
			}
		}
	})
}

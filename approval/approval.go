// Package approval is how a run puts a question to a person: the approval
// a permission rule asks for before a tool call runs, and ask_user's
// questions. The delegation engine hands every such request, from any
// depth of a tree, to whoever runs the root through one small interface,
// Asker, which the terminal view, the --stream-json reader and the MCP
// server implement. With nobody there the engine's answer is a refusal,
// never a wait.
package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Kind says what a request asks for.
type Kind string

const (
	// KindApproval asks whether a tool call may run.
	KindApproval Kind = "approval"
	// KindQuestion is ask_user's question, answered with text.
	KindQuestion Kind = "question"
)

// Request is one question to the person who runs the root.
type Request struct {
	// ID names the request; an answer names it back.
	ID   string `json:"id"`
	Kind Kind   `json:"kind"`
	// RootID and RunID are the tree and the run that asks.
	RootID string `json:"root_id"`
	RunID  string `json:"run_id"`
	// Path is the labels of the runs from the root down to the one that
	// asks (lead, researcher, fetcher).
	Path []string `json:"path"`
	// ToolCallID is the call the request is about (ask_user's own call
	// for a question).
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Tool and Arguments are the call to approve, exactly as the model
	// asked for it.
	Tool      string          `json:"tool,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Detail is what a person reads before answering: the command, a diff
	// of the edit, the URL (Describe).
	Detail string `json:"detail,omitempty"`
	// Why names what asks: the rule and where it is written, or the mode.
	Why string `json:"why,omitempty"`
	// Always are the rules that answering "allow for the rest of the run"
	// adds (terminal(git push:*)); empty when only calls with these very
	// arguments would be allowed again.
	Always []string `json:"always,omitempty"`
	// Question is ask_user's question.
	Question string    `json:"question,omitempty"`
	Time     time.Time `json:"time"`
}

// PathText is the request's path as a person reads it: lead › researcher.
func (r *Request) PathText() string { return strings.Join(r.Path, " › ") }

// Who answered a request.
const (
	ByPerson  = "person"  // someone answered
	ByRule    = "rule"    // an earlier "allow for the rest of the run", or an answer kept from before a resume
	ByTimeout = "timeout" // nobody answered in time: a deny
	ByNobody  = "nobody"  // nobody was there to ask: a deny
	ByCancel  = "cancelled"
)

// Answer is what came back.
type Answer struct {
	// Allow approves the call. For a question it says an answer was
	// given (Text).
	Allow bool `json:"allow"`
	// Always, with Allow, allows calls like this one for the rest of the
	// run (Request.Always).
	Always bool `json:"always,omitempty"`
	// Text is the reason given with a deny, or the answer to a question.
	Text string `json:"text,omitempty"`
	// By says who answered (ByPerson, ...); the engine sets it.
	By   string    `json:"by"`
	Time time.Time `json:"time"`
}

// Asker is whoever runs the root of a tree: it shows a request to a person
// and returns the answer. It is called from the runs' goroutines, for
// requests that may be pending at the same time; an Asker that shows one at
// a time queues the others in the order they came. It returns ErrNobody
// when nobody can answer (stdin closed, a client that cannot be asked), and
// ctx's error when ctx ends first (the request's timeout, the run
// cancelled).
type Asker interface {
	Ask(ctx context.Context, r *Request) (Answer, error)
}

// ErrNobody says nobody is there to answer.
var ErrNobody = errors.New("nobody is there to answer")

// AskerFunc is a function that is an Asker.
type AskerFunc func(ctx context.Context, r *Request) (Answer, error)

// Ask calls f.
func (f AskerFunc) Ask(ctx context.Context, r *Request) (Answer, error) { return f(ctx, r) }

// maxDetail bounds what Describe shows of a call, in lines.
const maxDetail = 40

// Describe is what a person reads of a tool call before approving it: the
// command of terminal, a diff of edit_file, the path and first lines of
// write_file, the URL of fetch, and the JSON arguments of any other tool.
// Long text is cut at a line count, saying how much is left out.
func Describe(tool string, args json.RawMessage) string {
	var a struct {
		Command string `json:"command"`
		Path    string `json:"path"`
		OldText string `json:"old_text"`
		NewText string `json:"new_text"`
		Content string `json:"content"`
		URL     string `json:"url"`
	}
	_ = json.Unmarshal(args, &a)
	switch {
	case tool == "terminal" && a.Command != "":
		return cutLines("$ "+a.Command, maxDetail)
	case tool == "edit_file" && a.Path != "":
		var b strings.Builder
		b.WriteString("--- " + a.Path + "\n+++ " + a.Path + "\n")
		for l := range strings.Lines(a.OldText) {
			b.WriteString("-" + strings.TrimSuffix(l, "\n") + "\n")
		}
		for l := range strings.Lines(a.NewText) {
			b.WriteString("+" + strings.TrimSuffix(l, "\n") + "\n")
		}
		return cutLines(strings.TrimSuffix(b.String(), "\n"), maxDetail)
	case tool == "write_file" && a.Path != "":
		var b strings.Builder
		n := strings.Count(a.Content, "\n")
		if a.Content != "" && !strings.HasSuffix(a.Content, "\n") {
			n++
		}
		fmt.Fprintf(&b, "+++ %s (%d lines)\n", a.Path, n)
		for l := range strings.Lines(a.Content) {
			b.WriteString("+" + strings.TrimSuffix(l, "\n") + "\n")
		}
		return cutLines(strings.TrimSuffix(b.String(), "\n"), maxDetail)
	case tool == "fetch" && a.URL != "":
		return cutLines("GET "+a.URL, 1)
	}
	if len(args) == 0 {
		return tool
	}
	return cutLines(tool+" "+oneLine(args), maxDetail)
}

// oneLine is JSON without its insignificant whitespace (the text as given
// when it is not JSON), valid UTF-8.
func oneLine(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			return string(b)
		}
	}
	return strings.ToValidUTF8(string(raw), "\uFFFD")
}

// Printable is s as a terminal may show it: control characters other than
// newlines and tabs (an escape sequence the model wrote into a command,
// which could hide what it runs) are written out as \xNN.
func Printable(s string) string {
	var b strings.Builder
	for _, c := range strings.ToValidUTF8(s, "\uFFFD") {
		if c != '\n' && c != '\t' && (c < 0x20 || c >= 0x7f && c < 0xa0) {
			fmt.Fprintf(&b, "\\x%02x", c)
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// cutLines keeps the first n lines of s, and says how many more there were;
// a line longer than 500 bytes is cut too. What it keeps is Printable.
func cutLines(s string, n int) string {
	lines := strings.Split(Printable(s), "\n")
	for i, l := range lines {
		if len(l) > 500 {
			cut := 500
			for cut > 0 && !utf8.RuneStart(l[cut]) {
				cut--
			}
			lines[i] = l[:cut] + fmt.Sprintf("… (%d more bytes)", len(l)-cut)
		}
	}
	if len(lines) <= n {
		return strings.Join(lines, "\n")
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n… (%d more lines)", len(lines)-n)
}

package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/mattn/go-isatty"

	"github.com/deputyhq/deputy/approval"
)

// The person who runs the root, as each command reaches them
// (approval.Asker): at the terminal, line by line (linePerson) or in the
// live view (live.View.Ask); a program, through --stream-json's events and
// JSON lines on stdin (streamPerson). Without either, nobody: the engine
// denies what asks.

// promptReader reads one line after showing a prompt, until ctx ends.
type promptReader interface {
	prompt(ctx context.Context, text string) (string, error)
}

// terminalOf is r when it is a terminal, where a person can answer; nil
// otherwise.
func terminalOf(r io.Reader) *os.File {
	if f, ok := r.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
		return f
	}
	return nil
}

// personAt asks the person at the terminal tty line by line, the
// requests on stderr.
func personAt(tty *os.File, stderr io.Writer) *linePerson {
	return &linePerson{in: &lineReader{in: bufio.NewReader(tty), out: stderr}}
}

// linePerson asks on the terminal: the request on stderr, the answer read
// as a line. Requests come one at a time, in the order they came.
type linePerson struct {
	in    promptReader
	turns fifo
	// aside, when set, puts a live view aside while a request shows, and
	// returns what brings it back.
	aside func() func()
	// span is how long an "a" answer allows: "this run", or "this chat"
	// when chat shares its allows across its messages.
	span string
}

func (p *linePerson) Ask(ctx context.Context, r *approval.Request) (approval.Answer, error) {
	leave, err := p.turns.enter(ctx)
	if err != nil {
		return approval.Answer{}, err
	}
	defer leave()
	if p.aside != nil {
		back := p.aside()
		defer back()
	}
	if r.Kind == approval.KindQuestion {
		text, err := p.in.prompt(ctx, "\n? "+r.PathText()+" asks: "+approval.Printable(strings.TrimSpace(r.Question))+"\n> ")
		return approval.Answer{Allow: true, Text: text}, err
	}
	text := approvalPrompt(r, p.span)
	for {
		line, err := p.in.prompt(ctx, text)
		if err != nil {
			return approval.Answer{}, err
		}
		verb, reason, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch strings.ToLower(verb) {
		case "y", "yes":
			return approval.Answer{Allow: true}, nil
		case "a", "always":
			return approval.Answer{Allow: true, Always: true}, nil
		case "n", "no":
			return approval.Answer{}, nil
		case "e":
			if reason = strings.TrimSpace(reason); reason == "" {
				if reason, err = p.in.prompt(ctx, "reason for the model> "); err != nil {
					return approval.Answer{}, err
				}
			}
			return approval.Answer{Text: strings.TrimSpace(reason)}, nil
		}
		text = "y, a, n or e? > "
	}
}

// approvalPrompt shows an approval request as lines: who asks, the call,
// what asks for it, and the answers ("a" for span; "" is this run).
func approvalPrompt(r *approval.Request, span string) string {
	if span == "" {
		span = "this run"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n? %s wants to run %s:\n", r.PathText(), r.Tool)
	for l := range strings.Lines(r.Detail) {
		b.WriteString("  " + strings.TrimRight(l, "\n") + "\n")
	}
	b.WriteString("  asked by " + r.Why + "\n")
	always := r.Tool + " with these arguments"
	if len(r.Always) > 0 {
		always = strings.Join(r.Always, ", ")
	}
	b.WriteString("  y allow once · a allow " + always + " for " + span + " · n deny · e deny with a reason\n> ")
	return b.String()
}

// fifo lets one caller at a time through, in the order they came.
type fifo struct {
	mu    sync.Mutex
	queue []chan struct{}
}

// enter waits for the caller's turn; leave hands it on.
func (f *fifo) enter(ctx context.Context) (leave func(), err error) {
	ticket := make(chan struct{})
	f.mu.Lock()
	f.queue = append(f.queue, ticket)
	if len(f.queue) == 1 {
		close(ticket)
	}
	f.mu.Unlock()
	leave = func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		for i, t := range f.queue {
			if t == ticket {
				f.queue = append(f.queue[:i], f.queue[i+1:]...)
				if i == 0 && len(f.queue) > 0 {
					close(f.queue[0])
				}
				return
			}
		}
	}
	select {
	case <-ticket:
		return leave, nil
	case <-ctx.Done():
		leave()
		return nil, ctx.Err()
	}
}

// streamPerson is a program driving `run --stream-json`: it reads the
// approval_request and question events on stdout and answers on stdin,
// one JSON object per line:
//
//	{"type":"approval","id":ID,"decision":"allow"|"deny","reason":TEXT,"always":BOOL}
//	{"type":"answer","id":ID,"text":TEXT}
//
// A line that is not such an answer is reported on stderr and skipped. Once
// stdin ends, nobody is there: what asks then is denied at once.
type streamPerson struct {
	warn io.Writer

	mu      sync.Mutex
	waiting map[string]chan streamReply
	early   map[string]streamReply // answers read before their request was asked
	ended   bool
	gone    chan struct{} // closed when stdin ends
}

// maxEarly bounds the answers kept for requests not yet asked.
const maxEarly = 1024

// maxBadLines is how many lines of stdin that are not answers are reported.
const maxBadLines = 3

func newStreamPerson(in io.Reader, warn io.Writer) *streamPerson {
	p := &streamPerson{warn: warn, waiting: map[string]chan streamReply{}, early: map[string]streamReply{}, gone: make(chan struct{})}
	go p.read(in)
	return p
}

// streamAnswer is one line of stdin.
type streamAnswer struct {
	Type     string  `json:"type"`
	ID       string  `json:"id"`
	Decision string  `json:"decision"`
	Reason   string  `json:"reason"`
	Always   bool    `json:"always"`
	Text     *string `json:"text"`
}

// maxAnswerLine bounds a line of stdin: a longer one is no answer, and is
// skipped.
const maxAnswerLine = 4 << 20

func (p *streamPerson) read(in io.Reader) {
	br := bufio.NewReaderSize(in, 64<<10)
	bad := 0
	for n := 1; ; n++ {
		line, tooLong, err := readLine(br, maxAnswerLine)
		var id string
		var reply streamReply
		var perr error
		switch {
		case tooLong:
			perr = fmt.Errorf("longer than %d bytes", maxAnswerLine)
		case len(bytes.TrimSpace(line)) > 0:
			id, reply, perr = parseStreamAnswer(line)
			reply.line = n
		}
		if perr != nil {
			// A few warnings, not one a line of a file piped in as if it
			// were the task's context.
			if bad++; bad <= maxBadLines {
				fmt.Fprintf(p.warn, "deputy: warning: stdin line %d: %v; ignored (under --stream-json stdin carries answers, each a JSON object: see docs/observability.md)\n", n, perr)
			} else if bad == maxBadLines+1 {
				fmt.Fprintln(p.warn, "deputy: warning: stdin: more lines that are not answers; they are ignored without a word")
			}
		} else if id != "" {
			p.deliver(id, reply)
		}
		if err != nil {
			break
		}
	}
	p.mu.Lock()
	p.ended = true
	p.mu.Unlock()
	close(p.gone)
}

// readLine reads one line of br without its newline; of a line longer than
// limit it keeps nothing and says so, reading on to its end. err is the
// reader's (io.EOF at the end), after which nothing more is read; the line
// read up to it is returned with it.
func readLine(br *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		chunk = bytes.TrimSuffix(chunk, []byte("\n"))
		if !tooLong {
			if len(line)+len(chunk) > limit {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err != bufio.ErrBufferFull {
			return bytes.TrimSuffix(line, []byte("\r")), tooLong, err
		}
	}
}

// streamReply is one answer read, for the request of its kind.
type streamReply struct {
	kind approval.Kind
	ans  approval.Answer
	line int
}

// parseStreamAnswer reads one answer line.
func parseStreamAnswer(line []byte) (string, streamReply, error) {
	var a streamAnswer
	dec := json.NewDecoder(strings.NewReader(string(line)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return "", streamReply{}, fmt.Errorf("not an answer: %v", err)
	}
	if a.ID == "" {
		return "", streamReply{}, fmt.Errorf("no id (the id of the request it answers)")
	}
	switch a.Type {
	case "approval":
		switch a.Decision {
		case "allow":
			return a.ID, streamReply{kind: approval.KindApproval, ans: approval.Answer{Allow: true, Always: a.Always}}, nil
		case "deny":
			return a.ID, streamReply{kind: approval.KindApproval, ans: approval.Answer{Text: a.Reason}}, nil
		}
		return "", streamReply{}, fmt.Errorf("decision %q: it is \"allow\" or \"deny\"", a.Decision)
	case "answer":
		if a.Text == nil {
			return "", streamReply{}, fmt.Errorf("an answer to a question has a text")
		}
		return a.ID, streamReply{kind: approval.KindQuestion, ans: approval.Answer{Allow: true, Text: *a.Text}}, nil
	}
	return "", streamReply{}, fmt.Errorf("type %q: it is \"approval\" or \"answer\"", a.Type)
}

func (p *streamPerson) deliver(id string, ans streamReply) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ch, ok := p.waiting[id]; ok {
		delete(p.waiting, id)
		ch <- ans
		return
	}
	if len(p.early) < maxEarly {
		p.early[id] = ans
	}
}

func (p *streamPerson) Ask(ctx context.Context, r *approval.Request) (approval.Answer, error) {
	ch := make(chan streamReply, 1)
	p.mu.Lock()
	if reply, ok := p.early[r.ID]; ok {
		delete(p.early, r.ID)
		p.mu.Unlock()
		return p.checkKind(r, reply), nil
	}
	if p.ended {
		p.mu.Unlock()
		return approval.Answer{}, approval.ErrNobody
	}
	p.waiting[r.ID] = ch
	p.mu.Unlock()
	select {
	case reply := <-ch:
		return p.checkKind(r, reply), nil
	case <-p.gone:
		return approval.Answer{}, approval.ErrNobody
	case <-ctx.Done():
		p.mu.Lock()
		delete(p.waiting, r.ID)
		p.mu.Unlock()
		return approval.Answer{}, ctx.Err()
	}
}

// checkKind takes an answer of the other kind (a decision for a question,
// a text for an approval) as a refusal, and says so on stderr.
func (p *streamPerson) checkKind(r *approval.Request, reply streamReply) approval.Answer {
	if reply.kind == r.Kind {
		return reply.ans
	}
	fmt.Fprintf(p.warn, "deputy: warning: stdin line %d answers %s %s as if it were a%s; taken as a refusal\n",
		reply.line, article(r.Kind), r.ID, map[approval.Kind]string{approval.KindApproval: "n approval", approval.KindQuestion: " question"}[reply.kind])
	return approval.Answer{}
}

func article(k approval.Kind) string {
	if k == approval.KindApproval {
		return "the approval"
	}
	return "the question"
}

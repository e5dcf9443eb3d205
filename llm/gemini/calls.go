package gemini

import (
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
)

// maxCalls bounds the call table. An agent replays a call within a turn or
// two, so the oldest entries are the ones to lose.
const maxCalls = 4096

// callInfo is what the wire needs about a past call that llm.ToolCall cannot
// carry.
type callInfo struct {
	// signature is the thoughtSignature the call came with.
	signature []byte
	// madeUp marks an ID the adapter invented because the server sent
	// none; it is not sent back.
	madeUp bool
}

// callTable remembers, per call ID, what a Provider learned about the
// function calls it received, so a replayed call goes back as it came.
type callTable struct {
	mu    sync.Mutex
	byID  map[string]callInfo
	order []string // insertion order, for eviction
}

func (t *callTable) put(id string, info callInfo) {
	if id == "" || (len(info.signature) == 0 && !info.madeUp) {
		return // nothing to remember
	}
	info.signature = append([]byte(nil), info.signature...)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byID == nil {
		t.byID = make(map[string]callInfo)
	}
	if _, ok := t.byID[id]; !ok {
		t.order = append(t.order, id)
	}
	t.byID[id] = info
	for len(t.order) > maxCalls {
		delete(t.byID, t.order[0])
		t.order = t.order[1:]
	}
}

func (t *callTable) get(id string) callInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byID[id]
}

// wireID returns the ID to send for a call: the server's own, or "" for one
// the adapter made up.
func (t *callTable) wireID(id string) string {
	if t.get(id).madeUp {
		return ""
	}
	return id
}

// newCallID returns a fresh ID for a call the server sent without one.
func (p *Provider) newCallID() string {
	return fmt.Sprintf("call_%d", p.callSeq.Add(1))
}

// skipSignature is the value Google documents for a function call whose
// history was not produced by Gemini: it tells the server to skip its
// signature check. On the wire it is the base64 text
// "skip_thought_signature_validator"; genai base64-encodes the bytes, so
// the bytes are that text decoded.
var skipSignature = func() []byte {
	b, err := base64.URLEncoding.DecodeString("skip_thought_signature_validator")
	if err != nil {
		panic(err) // a constant; cannot happen
	}
	return b
}()

// checksSignatures reports whether model may refuse a replayed function call
// without a signature. Gemini 1.x and 2.x never do.
func checksSignatures(model string) bool {
	m := strings.TrimPrefix(model, "models/")
	return !strings.HasPrefix(m, "gemini-1") && !strings.HasPrefix(m, "gemini-2")
}

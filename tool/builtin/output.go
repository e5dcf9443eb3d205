package builtin

import (
	"fmt"
	"strings"
	"sync"
)

// outputBuffer collects a command's combined output, keeping its first and
// last halves within max bytes: the start says what ran, the end holds the
// error a model most needs. It is safe for concurrent writers.
type outputBuffer struct {
	mu      sync.Mutex
	headCap int
	tailCap int
	head    []byte
	tail    []byte
	dropped int64
}

func newOutputBuffer(max int) *outputBuffer {
	max = maxInt(max, 2)
	return &outputBuffer{headCap: max / 2, tailCap: max - max/2}
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// Write implements io.Writer; it never fails.
func (b *outputBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if room := b.headCap - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	b.tail = append(b.tail, p...)
	// Trim lazily, at twice the cap, so a stream of small writes does not
	// copy the tail on every call.
	if len(b.tail) > 2*b.tailCap {
		drop := len(b.tail) - b.tailCap
		b.dropped += int64(drop)
		b.tail = append([]byte(nil), b.tail[drop:]...)
	}
	return n, nil
}

// String returns the kept output, with a marker where bytes were left out.
func (b *outputBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	tail, dropped := b.tail, b.dropped
	if len(tail) > b.tailCap {
		dropped += int64(len(tail) - b.tailCap)
		tail = tail[len(tail)-b.tailCap:]
	}
	var s strings.Builder
	s.Write(b.head)
	if dropped > 0 {
		fmt.Fprintf(&s, "\n[... %d bytes of output omitted ...]\n", dropped)
	}
	s.Write(tail)
	// A cut may split a character; the model gets valid UTF-8 regardless.
	return strings.ToValidUTF8(s.String(), "\uFFFD")
}

package llmtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync"
)

// anPrefix is a request as the Anthropic API reads it for prompt caching
// and for binding thinking blocks: tools, then system blocks, then every
// message's content blocks, in that order, one element each, with the
// running hash and token count of everything up to it. An element is its
// block's canonical JSON (keys sorted, cache_control left out: a
// breakpoint's marker is not part of what it caches), so a prefix sent
// again with other spacing, key order or breakpoints hashes the same.
type anPrefix struct {
	elems []anElem
}

type anElem struct {
	hash   [32]byte
	tokens int  // of this element and every one before it
	cached bool // the block carries cache_control
}

// hash is the running hash of the prefix so far (of nothing: zeros).
func (p *anPrefix) hash() [32]byte {
	if len(p.elems) == 0 {
		return [32]byte{}
	}
	return p.elems[len(p.elems)-1].hash
}

// tokens is the prefix's size so far, in the fake's tokens (a quarter of
// the canonical bytes, at least one per element).
func (p *anPrefix) tokens() int {
	if len(p.elems) == 0 {
		return 0
	}
	return p.elems[len(p.elems)-1].tokens
}

// add appends one element: where it is (tool, system, user, assistant)
// and its canonical JSON.
func (p *anPrefix) add(where string, canon []byte, cached bool) {
	p.elems = append(p.elems, anElem{hash: anNext(p.hash(), where, canon), tokens: p.tokens() + max(len(canon)/4, 1), cached: cached})
}

// anNext is the running hash after prev of one more element.
func anNext(prev [32]byte, where string, canon []byte) [32]byte {
	h := sha256.New()
	h.Write(prev[:])
	h.Write([]byte(where))
	h.Write([]byte{0})
	h.Write(canon)
	var next [32]byte
	h.Sum(next[:0])
	return next
}

// anCanon is a block's canonical JSON, and whether it carries
// cache_control. A block that is not a JSON object is an error.
func anCanon(raw json.RawMessage) ([]byte, bool, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return nil, false, fmt.Errorf("want a JSON object")
	}
	cc, cached := obj["cache_control"]
	cached = cached && cc != nil
	delete(obj, "cache_control")
	b, err := json.Marshal(obj)
	return b, cached, err
}

// anMaxBreakpoints is the most cache_control markers a request may carry
// (prompt-caching page, read 2026-11-28).
const anMaxBreakpoints = 4

// anLookback is how many blocks a breakpoint looks back for an earlier
// cache entry (prompt-caching page, read 2026-11-28).
const anLookback = 20

// anCacheUse is what the prompt cache did for one request, in tokens:
// read from it, written to it, and neither.
type anCacheUse struct {
	read, write, input int
	// writes are the keys the request writes once it is answered.
	writes [][32]byte
}

// anCache is the fake's prompt cache: the prefixes written up to a
// breakpoint, per model. Entries do not expire (tests run for less than
// the 5-minute lifetime); the oldest go past anCacheEntries.
type anCache struct {
	keys fifoMap[[32]byte, bool]
}

const anCacheEntries = 1 << 14

func anCacheKey(model string, h [32]byte) [32]byte {
	return sha256.Sum256(append([]byte(anFamily(model)+"\x00"), h[:]...))
}

// use works out what a request with prefix p on model reads and writes:
// the longest cached prefix found from any breakpoint, looking back
// anLookback blocks, is read; what follows it up to the last breakpoint
// is written, when it is at least the model's smallest cacheable prompt;
// the rest is plain input. autoLast adds a breakpoint on the last block
// (the request's top-level cache_control). It returns nil when the
// request has no breakpoint, and an error past anMaxBreakpoints.
func (c *anCache) use(model string, p *anPrefix, autoLast bool, minTokens int) (*anCacheUse, error) {
	var marks []int
	for i, e := range p.elems {
		if e.cached {
			marks = append(marks, i)
		}
	}
	if autoLast && len(p.elems) > 0 && (len(marks) == 0 || marks[len(marks)-1] != len(p.elems)-1) {
		marks = append(marks, len(p.elems)-1)
	}
	if len(marks) > anMaxBreakpoints {
		return nil, fmt.Errorf("A maximum of %d blocks with cache_control may be provided. Found %d.", anMaxBreakpoints, len(marks))
	}
	if len(marks) == 0 {
		return nil, nil
	}
	hit := -1
	if c != nil {
		for _, m := range marks {
			for i := m; i >= 0 && i > m-anLookback; i-- {
				if _, ok := c.keys.get(anCacheKey(model, p.elems[i].hash)); ok {
					hit = max(hit, i)
					break
				}
			}
		}
	}
	u := &anCacheUse{}
	if hit >= 0 {
		u.read = p.elems[hit].tokens
	}
	last := marks[len(marks)-1]
	if last > hit && p.elems[last].tokens >= minTokens {
		u.write = p.elems[last].tokens - u.read
	}
	for _, m := range marks {
		if p.elems[m].tokens >= minTokens {
			u.writes = append(u.writes, anCacheKey(model, p.elems[m].hash))
		}
	}
	u.input = p.tokens() - u.read - u.write
	return u, nil
}

// store writes a request's entries once it is answered.
func (c *anCache) store(u *anCacheUse) {
	if c == nil || u == nil {
		return
	}
	for _, k := range u.writes {
		c.keys.put(k, true, anCacheEntries)
	}
}

// fifoMap is a map safe for concurrent use that forgets its oldest keys
// past a bound, so a fake left serving stays in bounded memory.
type fifoMap[K comparable, V any] struct {
	mu    sync.Mutex
	m     map[K]V
	order []K
}

func (f *fifoMap[K, V]) put(k K, v V, bound int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[K]V{}
	}
	if _, ok := f.m[k]; !ok {
		f.order = append(f.order, k)
	}
	f.m[k] = v
	for len(f.order) > bound {
		delete(f.m, f.order[0])
		f.order = f.order[1:]
	}
}

func (f *fifoMap[K, V]) get(k K) (V, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.m[k]
	return v, ok
}

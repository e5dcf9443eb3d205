package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deputyhq/deputy/approval"
	"github.com/deputyhq/deputy/delegate"
)

// Multi round-trip calls. From MCP protocol version 2026-07-28 on (SEP-2322,
// "multi round-trip requests"), a server may not send the client a request
// (elicitation/create) while it serves a tool call: the call's result says
// instead that input is required (its InputRequests, each an elicitation),
// and the client calls the tool again with the answers (InputResponses)
// and the result's RequestState. An agent's tree outlives the request that
// started it: it runs in the background, its requests to the person wait
// for the next call, and the call that finds the tree done gets its result.

// A round is one agent call's tree, between the calls of the client that
// carry it on.
type round struct {
	id     string // the RequestState: unguessable, names the tree
	cancel context.CancelFunc
	done   chan struct{}
	env    *delegate.Envelope // set before done is closed

	asks chan *roundAsk // the tree's requests, not yet sent to the client

	mu      sync.Mutex
	pending map[string]*roundAsk // sent to the client, by input request id
	expire  *time.Timer          // ends a tree whose client stopped calling
	prog    *progress
}

// roundAsk is one request of the tree to the person, and its answer.
type roundAsk struct {
	req   *approval.Request
	reply chan approval.Answer // buffered: the answer is never waited for
	gone  chan struct{}        // closed when the asking run stops waiting
}

// rounds are the trees of a server whose calls are not over.
type rounds struct {
	mu sync.Mutex
	m  map[string]*round
	// idle is how long a tree waits for its client's next call before it
	// is cancelled.
	idle time.Duration
}

func newRounds() *rounds { return &rounds{m: map[string]*round{}, idle: 15 * time.Minute} }

// start runs the tree of one call in the background: run gets the tree's
// context and person.
func (rs *rounds) start(prog *progress, run func(ctx context.Context, person approval.Asker) *delegate.Envelope) *round {
	ctx, cancel := context.WithCancel(context.Background())
	r := &round{id: randomID(), cancel: cancel, done: make(chan struct{}), asks: make(chan *roundAsk),
		pending: map[string]*roundAsk{}, prog: prog}
	rs.mu.Lock()
	rs.m[r.id] = r
	rs.mu.Unlock()
	go func() {
		r.env = run(ctx, r)
		close(r.done)
	}()
	return r
}

// find returns the tree a retried call names.
func (rs *rounds) find(id string) *round {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.m[id]
}

func (rs *rounds) forget(r *round) {
	rs.mu.Lock()
	delete(rs.m, r.id)
	rs.mu.Unlock()
}

// Ask is the tree's person: the request waits for the client's next call.
func (r *round) Ask(ctx context.Context, req *approval.Request) (approval.Answer, error) {
	a := &roundAsk{req: req, reply: make(chan approval.Answer, 1), gone: make(chan struct{})}
	defer close(a.gone)
	select {
	case r.asks <- a:
	case <-ctx.Done():
		return approval.Answer{}, ctx.Err()
	}
	select {
	case ans := <-a.reply:
		return ans, nil
	case <-ctx.Done():
		return approval.Answer{}, ctx.Err()
	}
}

// answer gives the tree the client's answers to the requests it was sent.
// A request the client left unanswered is denied.
func (r *round) answer(responses sdk.InputResponseMap) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, a := range r.pending {
		res, _ := responses[id].(*sdk.ElicitResult)
		ans := approval.Answer{}
		if res != nil {
			ans = answerOf(a.req, res)
		}
		a.reply <- ans
		delete(r.pending, id)
	}
}

// wait serves one call of the client: the tree's result once it is done,
// or, when the tree asks first, the requests the client must answer
// (input_required) with the tree's RequestState. The client cancelling
// the call cancels the tree.
func (rs *rounds) wait(ctx context.Context, r *round, result func(*delegate.Envelope) *sdk.CallToolResult) (*sdk.CallToolResult, error) {
	r.stopExpiry()
	select {
	case <-r.done:
		rs.forget(r)
		return result(r.env), nil
	case a := <-r.asks:
		inputs := sdk.InputRequestMap{}
		r.send(inputs, a)
		for more := true; more; { // what else asks now goes in the same round
			select {
			case b := <-r.asks:
				r.send(inputs, b)
			default:
				more = false
			}
		}
		r.expireIn(rs.idle, func() { r.cancel(); rs.forget(r) })
		return &sdk.CallToolResult{InputRequests: inputs, RequestState: r.id}, nil
	case <-ctx.Done():
		r.cancel()
		<-r.done
		rs.forget(r)
		return nil, ctx.Err()
	}
}

// send adds a request to a round's input requests, unless its run stopped
// waiting for it.
func (r *round) send(inputs sdk.InputRequestMap, a *roundAsk) {
	select {
	case <-a.gone:
		return
	default:
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending[a.req.ID] = a
	inputs[a.req.ID] = &sdk.ElicitParams{Message: elicitMessage(a.req), RequestedSchema: elicitSchema(a.req)}
}

func (r *round) stopExpiry() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.expire != nil {
		r.expire.Stop()
		r.expire = nil
	}
}

func (r *round) expireIn(d time.Duration, f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.expire = time.AfterFunc(d, f)
}

// randomID is 128 random bits, as hex: a RequestState nobody can guess.
func randomID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("mcp: reading random bytes: %v", err)) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b[:])
}

// multiRound reports whether the client speaks a protocol version with
// multi round-trip requests (2026-07-28 or later): it is then asked through
// the tool call's results, not with requests of the server's own.
func multiRound(ss *sdk.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && strings.Compare(p.ProtocolVersion, "2026-07-28") >= 0
}

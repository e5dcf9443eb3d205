package llmtest

import (
	"bytes"
	"slices"
	"sync"

	"github.com/deputyhq/deputy/llm"
)

// Recorder keeps copies of the requests a provider received. Providers in
// this package embed it; the zero value is ready to use.
type Recorder struct {
	mu   sync.Mutex
	reqs []*llm.Request
	off  bool
}

// StopRecording makes the recorder keep no more requests. A scripted model
// that serves a whole program (deputy run with model "script/...") would
// otherwise hold a copy of every request it answered, tools and all, until
// the program ends.
func (r *Recorder) StopRecording() {
	r.mu.Lock()
	r.off = true
	r.mu.Unlock()
}

// Requests returns copies of the recorded requests, in arrival order.
func (r *Recorder) Requests() []*llm.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*llm.Request, len(r.reqs))
	for i, req := range r.reqs {
		out[i] = cloneRequest(req)
	}
	return out
}

// record stores a copy, so a caller that reuses its request afterwards
// does not change the record.
func (r *Recorder) record(req *llm.Request) {
	r.mu.Lock()
	off := r.off
	r.mu.Unlock()
	if off {
		return
	}
	c := cloneRequest(req)
	r.mu.Lock()
	r.reqs = append(r.reqs, c)
	r.mu.Unlock()
}

// cloneRequest copies req deeply enough that no slice is shared.
func cloneRequest(req *llm.Request) *llm.Request {
	if req == nil {
		return nil
	}
	c := *req
	c.Messages = make([]llm.Message, len(req.Messages))
	for i, m := range req.Messages {
		c.Messages[i] = cloneMessage(m)
	}
	c.Tools = slices.Clone(req.Tools)
	for i := range c.Tools {
		c.Tools[i].Parameters = bytes.Clone(c.Tools[i].Parameters)
	}
	if o := req.Output; o != nil {
		c.Output = &llm.OutputSchema{Name: o.Name, Schema: bytes.Clone(o.Schema)}
	}
	if p := req.Params.Temperature; p != nil {
		v := *p
		c.Params.Temperature = &v
	}
	if p := req.Params.MaxTokens; p != nil {
		v := *p
		c.Params.MaxTokens = &v
	}
	return &c
}

func cloneMessage(m llm.Message) llm.Message {
	if m.ToolCalls != nil {
		calls := make([]llm.ToolCall, len(m.ToolCalls))
		for i, tc := range m.ToolCalls {
			calls[i] = cloneToolCall(tc)
		}
		m.ToolCalls = calls
	}
	if st := m.State; st != nil {
		m.State = &llm.State{Format: st.Format, Model: st.Model, Data: bytes.Clone(st.Data)}
	}
	return m
}

func cloneToolCall(tc llm.ToolCall) llm.ToolCall {
	tc.Arguments = bytes.Clone(tc.Arguments)
	return tc
}

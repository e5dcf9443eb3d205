package anthropic

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/param"

	"github.com/deputyhq/deputy/llm"
)

// Provider state. An assistant turn's State holds its content blocks in
// order, each as the API sent it: thinking blocks with their signatures,
// redacted_thinking blocks, the thinking blocks the 5.5 models return
// for the text they write between tool calls, text and tool_use. The
// next request sends the turn back from them, complete and unmodified
// (platform.claude.com, build-with-claude/thinking-tool-workflows: the
// thinking blocks must come back with the tool results, and rebuilding
// the message or leaving out redacted_thinking blocks is a 400;
// build-with-claude/preserved-thinking: a block is tied to the model
// that produced it and to what came before it; read 2026-11-28).
//
// State made by another model is not sent: the turn is rebuilt from its
// text and tool calls. The API drops a block the current model cannot
// read on the newest models, and older ones refuse a signature they did
// not make, so leaving it out is the one form every model takes. State
// that no longer matches the message's text and tool calls (the message
// was edited after it came) is not sent either, nor state whose turn now
// follows another conversation than the one it was made in: on the
// models that bind a thinking block to its prefix, the system prompt,
// tools and messages before it, a changed prefix is a 400 (a session
// that replays an answer without the tool turns that led to it, a
// history cut short). State records a digest of its prefix for that.

// stateData is State.Data: the turn's content blocks as the API sent
// them, the digest of the request they answered (prefixDigest), and
// whether the message's Content marks the sources its text cites
// (citations.go).
type stateData struct {
	Content []json.RawMessage `json:"content"`
	Prefix  string            `json:"prefix"`
	Cited   bool              `json:"cited,omitempty"`
}

// stateOf records blocks, an answer's content, as the turn's State, the
// model being the one the request named (the name the next request of
// the conversation will use), prefix the digest of that request, cited
// whether its Content marks its sources.
func stateOf(model, prefix string, blocks []sdk.ContentBlockUnion, cited bool) *llm.State {
	if len(blocks) == 0 {
		return nil
	}
	d := stateData{Content: rawBlocks(blocks), Prefix: prefix, Cited: cited}
	if d.Content == nil {
		return nil
	}
	data, err := json.Marshal(d)
	if err != nil {
		return nil
	}
	return &llm.State{Format: llm.StateAnthropic, Model: model, Data: data}
}

// stateBlock is what the adapter reads of a block in State.
type stateBlock struct {
	Type      string     `json:"type"`
	Text      string     `json:"text"`
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Citations []citation `json:"citations"`
}

// parseState reads State's blocks, each a JSON object with a type. It
// reports false for data that is not such.
func parseState(data json.RawMessage) (stateData, []stateBlock, bool) {
	var d stateData
	if err := json.Unmarshal(data, &d); err != nil || len(d.Content) == 0 {
		return d, nil, false
	}
	blocks := make([]stateBlock, len(d.Content))
	for i, raw := range d.Content {
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &blocks[i]) != nil || blocks[i].Type == "" {
			return d, nil, false
		}
	}
	return d, blocks, true
}

// stateTurn is m sent back from its State: the turn exactly as model
// produced it, after the prefix whose digest is prefix. It reports false
// when m has no State of this format, when another model made it, when
// it does not match m's text and tool calls, or when it was made after
// another prefix.
func stateTurn(m llm.Message, model, prefix string) (sdk.MessageParam, bool) {
	st := m.StateOf(llm.StateAnthropic)
	if st == nil || st.Model != model {
		return sdk.MessageParam{}, false
	}
	d, blocks, ok := parseState(st.Data)
	if !ok || d.Prefix != prefix || !matches(blocks, d.Cited, m) {
		return sdk.MessageParam{}, false
	}
	return rawTurn(d.Content)
}

// rawTurn is an assistant turn of blocks, each sent as it is.
func rawTurn(blocks []json.RawMessage) (sdk.MessageParam, bool) {
	turn, err := json.Marshal(map[string]any{"role": "assistant", "content": blocks})
	if err != nil || len(blocks) == 0 {
		return sdk.MessageParam{}, false
	}
	return param.Override[sdk.MessageParam](json.RawMessage(turn)), true
}

// rawBlocks is each block of content as the API sent it; nil when one is
// not valid JSON.
func rawBlocks(content []sdk.ContentBlockUnion) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(content))
	for _, b := range content {
		raw := json.RawMessage(b.RawJSON())
		if !json.Valid(raw) {
			return nil
		}
		out = append(out, raw)
	}
	return out
}

// matches reports whether blocks say what m says: its text (the text
// blocks joined, with cited their sources marked) and its tool calls (the
// tool_use blocks, by ID and name, in order).
func matches(blocks []stateBlock, cited bool, m llm.Message) bool {
	var text []textPart
	var calls int
	for _, b := range blocks {
		switch b.Type {
		case "text":
			text = append(text, textPart{text: b.Text, cites: b.Citations})
		case "tool_use":
			if calls >= len(m.ToolCalls) || m.ToolCalls[calls].ID != b.ID || m.ToolCalls[calls].Name != b.Name {
				return false
			}
			calls++
		}
	}
	return answerText(text, cited) == m.Content && calls == len(m.ToolCalls)
}

// prefixHash is the running digest of a request's prefix: the system
// prompt and tools, then each message, as JSON with cache_control left
// out (a breakpoint is not part of the prefix, and moves every turn).
type prefixHash struct {
	h hash.Hash
	// added counts the messages added so far.
	added int
}

// newPrefixHash starts the digest with params' system prompt and tools.
func newPrefixHash(params *sdk.MessageNewParams) *prefixHash {
	p := &prefixHash{h: sha256.New()}
	p.add(params.System)
	p.add(params.Tools)
	return p
}

// add adds v, encoded as the request encodes it.
func (p *prefixHash) add(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(err.Error())
	}
	var tree any
	if json.Unmarshal(b, &tree) == nil {
		b, _ = json.Marshal(dropCacheControl(tree))
	}
	p.h.Write(b)
	p.h.Write([]byte{0})
}

// sum is the digest so far.
func (p *prefixHash) sum() string { return hex.EncodeToString(p.h.Sum(nil)) }

// dropCacheControl removes every cache_control member of v.
func dropCacheControl(v any) any {
	switch v := v.(type) {
	case map[string]any:
		delete(v, "cache_control")
		for _, sub := range v {
			dropCacheControl(sub)
		}
	case []any:
		for _, sub := range v {
			dropCacheControl(sub)
		}
	}
	return v
}

// prefixDigest is the digest of the whole of params: the prefix of its
// answer.
func prefixDigest(params *sdk.MessageNewParams) string {
	p := newPrefixHash(params)
	for _, m := range params.Messages {
		p.add(m)
	}
	return p.sum()
}

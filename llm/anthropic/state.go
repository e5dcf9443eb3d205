package anthropic

import (
	"bytes"
	"encoding/json"
	"strings"

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
// was edited after it came) is not sent either.

// stateOf records blocks, an answer's content, as the turn's State, the
// model being the one the request named (the name the next request of
// the conversation will use).
func stateOf(model string, blocks []sdk.ContentBlockUnion) *llm.State {
	if len(blocks) == 0 {
		return nil
	}
	raws := make([]json.RawMessage, 0, len(blocks))
	for _, b := range blocks {
		raw := json.RawMessage(b.RawJSON())
		if !json.Valid(raw) {
			return nil
		}
		raws = append(raws, raw)
	}
	data, err := json.Marshal(raws)
	if err != nil {
		return nil
	}
	return &llm.State{Format: llm.StateAnthropic, Model: model, Data: data}
}

// stateBlock is what the adapter reads of a block in State.
type stateBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
	ID   string `json:"id"`
	Name string `json:"name"`
}

// parseState reads State's blocks: each a JSON object with a type. It
// reports false for data that is not such an array.
func parseState(data json.RawMessage) ([]json.RawMessage, []stateBlock, bool) {
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil || len(raws) == 0 {
		return nil, nil, false
	}
	blocks := make([]stateBlock, len(raws))
	for i, raw := range raws {
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &blocks[i]) != nil || blocks[i].Type == "" {
			return nil, nil, false
		}
	}
	return raws, blocks, true
}

// stateTurn is m sent back from its State: the turn exactly as model
// produced it. It reports false when m has no State of this format, when
// another model made it, or when it does not match m's text and tool
// calls.
func stateTurn(m llm.Message, model string) (sdk.MessageParam, bool) {
	st := m.StateOf(llm.StateAnthropic)
	if st == nil || st.Model != model {
		return sdk.MessageParam{}, false
	}
	raws, blocks, ok := parseState(st.Data)
	if !ok || !matches(blocks, m) {
		return sdk.MessageParam{}, false
	}
	turn, err := json.Marshal(map[string]any{"role": "assistant", "content": raws})
	if err != nil {
		return sdk.MessageParam{}, false
	}
	return param.Override[sdk.MessageParam](json.RawMessage(turn)), true
}

// matches reports whether blocks say what m says: its text (the text
// blocks joined) and its tool calls (the tool_use blocks, by ID and name,
// in order).
func matches(blocks []stateBlock, m llm.Message) bool {
	var text strings.Builder
	var calls int
	for _, b := range blocks {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			if calls >= len(m.ToolCalls) || m.ToolCalls[calls].ID != b.ID || m.ToolCalls[calls].Name != b.Name {
				return false
			}
			calls++
		}
	}
	return text.String() == m.Content && calls == len(m.ToolCalls)
}

package gemini

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"

	"google.golang.org/genai"

	"github.com/deputyhq/deputy/llm"
)

// Thought signatures (ai.google.dev/gemini-api/docs/thought-signatures,
// read 2026-11-28): a thinking model puts an opaque thoughtSignature on
// parts of its answer (the first functionCall part of a step, else the
// last part), and a request must send each back on the part it came on.
// Gemini 3 refuses (4xx) a request whose current turn (everything after
// the last user content with text) has a step whose first functionCall
// lacks its signature. The adapter keeps an answer's parts as they came in
// the message's State (format llm.StateGemini), which the ledger keeps
// and Temporal carries, and sends them back from there.

// stateData is the parts of an answer as they came, for Message.State:
// nil when the answer needs nothing back (no part has a signature, is a
// thought or a server-side tool's, and every call came with its ID). A
// grounded answer's state is an object, its parts and its grounding
// metadata (whose sources end the message's Content); any other is the
// array of parts.
func stateData(parts []*genai.Part, grounding *genai.GroundingMetadata) json.RawMessage {
	needed := grounding != nil && len(parts) > 0
	for _, p := range parts {
		if len(p.ThoughtSignature) > 0 || p.Thought || (p.FunctionCall != nil && p.FunctionCall.ID == "") ||
			p.ToolCall != nil || p.ToolResponse != nil {
			needed = true
			break
		}
	}
	if !needed {
		return nil
	}
	var v any = parts
	if grounding != nil {
		v = groundedState{Parts: parts, Grounding: grounding}
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil // genai's own types; cannot happen
	}
	return data
}

// groundedState is the state of a grounded answer.
type groundedState struct {
	Parts     []*genai.Part            `json:"parts"`
	Grounding *genai.GroundingMetadata `json:"grounding"`
}

// readState reads a state's parts and grounding, in either form.
func readState(data json.RawMessage) ([]*genai.Part, *genai.GroundingMetadata, bool) {
	var parts []*genai.Part
	if err := json.Unmarshal(data, &parts); err == nil {
		return parts, nil, true
	}
	var g groundedState
	if err := json.Unmarshal(data, &g); err != nil || g.Parts == nil {
		return nil, nil, false
	}
	return g.Parts, g.Grounding, true
}

// stateParts returns the parts m came with, from its state, when they
// still say what m says (its text, with the sources of its grounding,
// and its calls, in order) and were made by model: a signature is its
// model's. ok is false otherwise, and m is rebuilt from its text and
// calls.
func stateParts(model string, m llm.Message) (parts []*genai.Part, ok bool) {
	st := m.StateOf(llm.StateGemini)
	if st == nil || (st.Model != "" && st.Model != model) {
		return nil, false
	}
	parts, grounding, ok := readState(st.Data)
	if !ok {
		return nil, false
	}
	var text strings.Builder
	calls := 0
	for _, p := range parts {
		switch {
		case p == nil:
			return nil, false
		case p.FunctionCall != nil:
			if calls >= len(m.ToolCalls) || m.ToolCalls[calls].Name != p.FunctionCall.Name {
				return nil, false
			}
			calls++
		case !p.Thought:
			text.WriteString(p.Text)
		}
	}
	if calls != len(m.ToolCalls) || groundedText(text.String(), grounding) != m.Content {
		return nil, false
	}
	return parts, true
}

// madeUpIDs are the IDs of m's calls that the adapter made up because the
// server sent none (its state's functionCall parts have no ID): they are
// not sent back.
func madeUpIDs(parts []*genai.Part, m llm.Message) map[string]bool {
	var out map[string]bool
	k := 0
	for _, p := range parts {
		if p.FunctionCall == nil {
			continue
		}
		if p.FunctionCall.ID == "" {
			if out == nil {
				out = map[string]bool{}
			}
			out[m.ToolCalls[k].ID] = true
		}
		k++
	}
	return out
}

// newCallPrefix is a Provider's prefix for the IDs it makes up: random,
// so that a conversation resumed by another process gets no ID it already
// has.
func newCallPrefix() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return "call_" + hex.EncodeToString(b[:]) + "_"
}

// newCallID returns a fresh ID for a call the server sent without one.
func (p *Provider) newCallID() string {
	return p.callPrefix + strconv.FormatInt(p.callSeq.Add(1), 10)
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

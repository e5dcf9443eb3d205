package llmtest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
)

// The fake signs the thinking blocks it sends, as the Anthropic API does,
// so that it can tell a block that comes back unchanged from one that was
// edited, emptied, forged or moved into another conversation. A signature
// holds the family that made the block, the hash of its prefix (the
// system prompt, tools and everything before the block, anPrefix), and a
// MAC over both and the block's content. The prefix is compared only on
// families whose blocks are bound to their conversation.

// anSigningKey is fixed, so signatures are the same from one fake to the
// next (a run resumed against a new fake still verifies).
var anSigningKey = []byte("llmtest: the fake Anthropic API's thinking signatures")

func anMAC(parts ...string) string {
	m := hmac.New(sha256.New, anSigningKey)
	m.Write([]byte(strings.Join(parts, "\x00")))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

const (
	anSigPrefix      = "llmtest.sig1."
	anRedactedPrefix = "llmtest.red1."
	// anRedactedTrigger in a user message makes the model answer with a
	// redacted_thinking block, as the real API documents for testing
	// (extended-thinking page, read 2026-11-28).
	anRedactedTrigger = "ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING_46C9A13E193C177646C7398A98432ECCCE4C1253D5E2D82641AC0E52CC2876CB"
)

// anSign signs a block of type typ (thinking: its text; redacted: its
// nonce) made by family after prefix: the family, the prefix's hash, the
// content's hash, and a MAC over the three.
func anSign(family string, prefix [32]byte, typ, content string) string {
	fam := base64.RawURLEncoding.EncodeToString([]byte(family))
	at := hex.EncodeToString(prefix[:])
	sum := anContentHash(typ, content)
	return fam + "." + at + "." + sum + "." + anMAC(family, at, sum)
}

func anContentHash(typ, content string) string {
	h := sha256.Sum256([]byte(typ + "\x00" + content))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

// anSignature is a thinking block's signature field.
func anSignature(family string, prefix [32]byte, text string) string {
	return anSigPrefix + anSign(family, prefix, "thinking", text)
}

// anRedactedData is a redacted_thinking block's data field.
func anRedactedData(family string, prefix [32]byte, nonce string) string {
	return anRedactedPrefix + nonce + "." + anSign(family, prefix, "redacted", nonce)
}

// anVerdict is what the API makes of a thinking block sent back.
type anVerdict int

const (
	anValid      anVerdict = iota
	anUnreadable           // another family's: dropped without an error
	anMissing              // a thinking block without a signature
	anInvalid              // a signature the fake did not make
	anModified             // a signature of the fake's over other content
	anRebound              // unchanged, but its prefix changed: 400 on bound families
)

// anVerify checks a returned block of type typ ("thinking" with its text
// and signature, or "redacted_thinking" with its data) against model m
// and the prefix before it.
func anVerify(m anModel, prefix [32]byte, typ, text, signed string) anVerdict {
	var content, sig string
	switch typ {
	case "thinking":
		if !strings.HasPrefix(signed, anSigPrefix) {
			return anInvalid
		}
		content, sig = text, strings.TrimPrefix(signed, anSigPrefix)
	default:
		rest, ok := strings.CutPrefix(signed, anRedactedPrefix)
		if !ok {
			return anInvalid
		}
		nonce, s, ok := strings.Cut(rest, ".")
		if !ok {
			return anInvalid
		}
		content, sig, typ = nonce, s, "redacted"
	}
	parts := strings.Split(sig, ".")
	if len(parts) != 4 {
		return anInvalid
	}
	fam, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return anInvalid
	}
	family, at, sum := string(fam), parts[1], parts[2]
	if !hmac.Equal([]byte(parts[3]), []byte(anMAC(family, at, sum))) {
		return anInvalid
	}
	if sum != anContentHash(typ, content) {
		return anModified
	}
	if !m.reads(family) {
		return anUnreadable
	}
	if m.boundToPrefix && at != hex.EncodeToString(prefix[:]) {
		return anRebound
	}
	return anValid
}

// anIssued remembers the thinking blocks (their signatures, a redacted
// block's data) of each tool-calling turn the fake answered, so that the
// next request of that conversation can be held to sending them all
// back, in order. A turn is known by its prefix and its other blocks
// (text and tool calls).
type anIssued struct {
	turns fifoMap[[32]byte, anIssuedTurn]
}

// anIssuedTurn is a turn's thinking blocks and the family that made them.
type anIssuedTurn struct {
	family string
	ids    []string
}

const anIssuedTurns = 1 << 14

// anTurnKey identifies an assistant turn by the hash of what came before
// it and the canonical JSON of its blocks other than thinking.
func anTurnKey(prefix [32]byte, others [][]byte) [32]byte {
	h := sha256.New()
	h.Write(prefix[:])
	for _, b := range others {
		h.Write(b)
		h.Write([]byte{0})
	}
	var k [32]byte
	h.Sum(k[:0])
	return k
}

func (s *anIssued) put(key [32]byte, turn anIssuedTurn) {
	if s != nil {
		s.turns.put(key, turn, anIssuedTurns)
	}
}

func (s *anIssued) get(key [32]byte) (anIssuedTurn, bool) {
	if s == nil {
		return anIssuedTurn{}, false
	}
	return s.turns.get(key)
}

// anFault is a thinking block that failed its check.
type anFault struct {
	msg, block int
	verdict    anVerdict
}

// err is the provider's 400 for the fault; latest says the block is in
// the turn the request answers, where a block edited is reported as
// one the API forbids changing.
func (f anFault) err(latest bool) error {
	switch {
	case f.verdict == anMissing:
		return newHTTPError(errBadRequest, "messages.%d.content.%d.thinking.signature: Field required", f.msg, f.block)
	case f.verdict == anModified && latest:
		return newHTTPError(errBadRequest, "%v", anModifiedError(f.msg, f.block))
	case f.verdict == anRebound:
		return newHTTPError(errBadRequest, "messages.%d.content.%d: The block is bound to a different conversation: the system prompt, tools or messages before it are not the ones it was produced after", f.msg, f.block)
	}
	return newHTTPError(errBadRequest, "messages.%d.content.%d: Invalid `signature` in `thinking` block", f.msg, f.block)
}

// anModifiedError is the 400 for a tool-calling turn sent back without
// its thinking blocks as they were.
func anModifiedError(msg, block int) error {
	return fmt.Errorf("messages.%d.content.%d: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.", msg, block)
}

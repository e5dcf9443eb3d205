package llmtest

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Gemini's thought signatures, as ai.google.dev/gemini-api/docs/thought-signatures
// describes them (read 2026-11-28):
//
//   - Gemini 3 models sign their answers: the first functionCall part of an
//     answer with calls (parallel calls after the first get none), else the
//     last part. A stream may carry a text's signature in its last chunk, on
//     a part with empty text (as a captured gemini-3.1 stream shows).
//   - A request must send each signature back on the part it came on.
//   - Gemini 3 validates the current turn only: the contents after the last
//     user content with text (a content of functionResponse parts does not
//     start a turn). In it, the first functionCall part of every model
//     content must carry its signature, or the request fails with 400
//     INVALID_ARGUMENT. The message is the one the API gives (quoted in
//     docs.apiyi.com's FAQ on it, 2026-10): "Function call is missing a
//     thought_signature in functionCall parts. ... function call
//     `default_api:NAME`, position N." The fake enforces this in strict
//     mode only, so a test may still send a hand-built history.
//   - The value "skip_thought_signature_validator" is accepted in place of a
//     signature, for histories Gemini did not produce.
//   - A signature that is not the model's for that part is refused ("Corrupted
//     thought signature."), in either mode.
//
// The fake's signatures are base64 of "llmtest-signature:KIND:NAME:RESPONSE",
// KIND "call" (NAME the function) or "text", so it can tell that each came
// back on its part.

// gemini3 matches the model names that sign: gemini-3 and later.
var gemini3 = regexp.MustCompile(`^(?:models/)?gemini-(\d+)`)

// signsThoughts reports whether model is a Gemini 3 or later model.
func signsThoughts(model string) bool {
	m := gemini3.FindStringSubmatch(model)
	if m == nil {
		return false
	}
	major, err := strconv.Atoi(m[1])
	return err == nil && major >= 3
}

const signaturePrefix = "llmtest-signature:"

// sign puts the fake's signature on part, a map of the wire's JSON;
// servers, when not "", is the digest of the answer's server-side tool
// parts (gemini_search.go), which the signature binds.
func sign(part map[string]any, responseID, servers string) {
	kind, name := "text", ""
	if fc, ok := part["functionCall"].(map[string]any); ok {
		kind, name = "call", fmt.Sprint(fc["name"])
	}
	sig := signaturePrefix + kind + ":" + name + ":" + responseID
	if servers != "" {
		sig += ":servers=" + servers
	}
	part["thoughtSignature"] = base64.StdEncoding.EncodeToString([]byte(sig))
}

// signedServers is the digest of server parts a signature of the fake's
// binds, and whether it binds any.
func signedServers(sig string) (string, bool) {
	b, ok := decodeSignature(sig)
	if !ok {
		return "", false
	}
	i := strings.LastIndex(string(b), ":servers=")
	if !strings.HasPrefix(string(b), signaturePrefix) || i < 0 {
		return "", false
	}
	return string(b[i+len(":servers="):]), true
}

// skipValidator is the documented bypass, as bytes.
var skipValidator, _ = base64.URLEncoding.DecodeString("skip_thought_signature_validator")

// decodeSignature reads a thoughtSignature as the API does: base64,
// standard or URL-safe, padded or not.
func decodeSignature(s string) ([]byte, bool) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, true
		}
	}
	return nil, false
}

// signatureFits reports whether sig is the bypass or a signature the fake
// made for a part like p.
func signatureFits(sig string, p gmPart) bool {
	b, ok := decodeSignature(sig)
	if !ok {
		return false
	}
	if string(b) == string(skipValidator) {
		return true
	}
	rest, ok := strings.CutPrefix(string(b), signaturePrefix)
	if !ok {
		return false
	}
	kind, rest, _ := strings.Cut(rest, ":")
	name, _, _ := strings.Cut(rest, ":")
	if p.FunctionCall != nil {
		return kind == "call" && name == p.FunctionCall.Name
	}
	return kind == "text"
}

// missingSignature is the 400 a Gemini 3 model answers a request whose
// current turn has a step without its signature, or nil.
func missingSignature(raw []gmContent, contents [][]gmPart) *httpError {
	start := 0
	for i := len(raw) - 1; i >= 0; i-- {
		if raw[i].Role != "model" && hasText(contents[i]) {
			start = i + 1
			break
		}
	}
	for i := start; i < len(raw); i++ {
		if raw[i].Role != "model" {
			continue
		}
		for _, p := range contents[i] {
			if p.FunctionCall == nil {
				continue
			}
			if p.ThoughtSignature == "" {
				return newHTTPError(errBadRequest, "Function call is missing a thought_signature in functionCall parts. "+
					"This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. "+
					"Additional data, function call `default_api:%s`, position %d. "+
					"Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.", p.FunctionCall.Name, i+1)
			}
			break // only the first call of a step is signed
		}
	}
	return nil
}

// hasText reports whether a content has a part other than a function's
// response: a user's words start a turn, a tool's results do not.
func hasText(parts []gmPart) bool {
	for _, p := range parts {
		if p.FunctionResponse == nil {
			return true
		}
	}
	return false
}

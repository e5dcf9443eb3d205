package llmtest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"

	"github.com/deputyhq/deputy/llm"
)

// Grounding with Google Search, as ai.google.dev documents it (read
// 2026-11-28: gemini-api/docs/google-search, tool-combination):
//
//   - The tool is {"googleSearch": {}}. The answer's candidate carries
//     groundingMetadata: webSearchQueries, groundingChunks (each a web page
//     as a Google redirect URI, titled with its domain), groundingSupports
//     (the text each page supports) and a searchEntryPoint.
//   - Built-in tools and function declarations in one request are Gemini 3
//     only; earlier models answer 400 "Tool use with function calling is
//     unsupported". Combined, toolConfig.includeServerSideToolInvocations
//     asks for the search in the answer's parts, a toolCall and its
//     toolResponse (same id, toolType GOOGLE_SEARCH_WEB), which the next
//     request circulates back with the turn.
//
// The fake refuses, in strict mode, a combination on a model that has
// none, or without includeServerSideToolInvocations; a toolResponse whose
// toolCall is not before it in the same content on any server. It binds
// the server parts of an answer to the signature it puts on the answer
// (the servers field, a digest of them), so that, in strict mode, a turn
// sent back without them or with them changed is refused.

// gmSearchType is the toolType of a search's toolCall and toolResponse.
const gmSearchType = "GOOGLE_SEARCH_WEB"

// gmSearchParts are the toolCall and toolResponse parts of an answer's
// searches.
func gmSearchParts(searches []Search, id string) []any {
	var parts []any
	for i, s := range searches {
		sid := "gs_" + id + "_" + strconv.Itoa(i+1)
		var results []any
		for _, r := range s.Results {
			results = append(results, map[string]any{"title": r.Title, "url": r.URL, "snippet": r.Snippet})
		}
		parts = append(parts,
			map[string]any{"toolCall": map[string]any{"id": sid, "toolType": gmSearchType, "args": map[string]any{"queries": []string{s.Query}}}},
			map[string]any{"toolResponse": map[string]any{"id": sid, "toolType": gmSearchType, "response": map[string]any{"results": results}}})
	}
	return parts
}

// gmRedirect is the Google redirect URI a grounding chunk gives for a page.
func gmRedirect(page string) string {
	return "https://vertexaisearch.cloud.google.com/grounding-api-redirect/" + base64.RawURLEncoding.EncodeToString([]byte(page))
}

// gmGrounding is the groundingMetadata of an answer whose text is text.
func gmGrounding(searches []Search, text string) map[string]any {
	var queries []string
	chunks, indices := []any{}, []int{}
	for _, s := range searches {
		queries = append(queries, s.Query)
		for _, r := range s.Results {
			title := r.Title
			if u, err := url.Parse(r.URL); err == nil {
				title = u.Hostname()
			}
			indices = append(indices, len(chunks))
			chunks = append(chunks, map[string]any{"web": map[string]any{"uri": gmRedirect(r.URL), "title": title}})
		}
	}
	g := map[string]any{"webSearchQueries": queries, "groundingChunks": chunks,
		"searchEntryPoint": map[string]any{"renderedContent": "<div class=\"llmtest-search\"></div>"}}
	if len(indices) > 0 && text != "" {
		g["groundingSupports"] = []any{map[string]any{"segment": map[string]any{"startIndex": 0, "endIndex": len(text), "text": text},
			"groundingChunkIndices": indices}}
	}
	return g
}

// gmServersDigest is the digest of a content's server parts, "" without
// any: the signature binds them.
func gmServersDigest(raws []json.RawMessage, parts []gmPart) string {
	h := sha256.New()
	n := 0
	for i, p := range parts {
		if p.ToolCall == nil && p.ToolResponse == nil {
			continue
		}
		canon, _, err := anCanon(raws[i])
		if err != nil {
			canon = raws[i]
		}
		h.Write(canon)
		h.Write([]byte{0})
		n++
	}
	if n == 0 {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// gmServersOfAnswer is the digest of the server parts the fake gives out,
// as the client sends them back.
func gmServersOfAnswer(parts []any) string {
	var raws []json.RawMessage
	var gps []gmPart
	for _, p := range parts {
		raw := mustJSON(p)
		var gp gmPart
		_ = json.Unmarshal(raw, &gp)
		raws, gps = append(raws, raw), append(gps, gp)
	}
	return gmServersDigest(raws, gps)
}

// gmCheckServers checks a model content's server parts: a toolResponse
// answers a toolCall before it (an error on any server); the parts are
// the ones the signature was given with (lost, for a strict server).
func gmCheckServers(raws []json.RawMessage, parts []gmPart) (lost error, err error) {
	var calls []string
	for k, p := range parts {
		switch {
		case p.ToolCall != nil:
			calls = append(calls, p.ToolCall.ID)
		case p.ToolResponse != nil:
			if !slices.Contains(calls, p.ToolResponse.ID) {
				return nil, fmt.Errorf("parts[%d]: toolResponse %q does not follow a toolCall with that id", k, p.ToolResponse.ID)
			}
		}
	}
	digest := gmServersDigest(raws, parts)
	for _, p := range parts {
		if want, ok := signedServers(p.ThoughtSignature); ok && want != digest {
			return fmt.Errorf("the toolCall and toolResponse parts of a model turn must be sent back with it as they were (tool combination: circulate them)"), nil
		}
	}
	return nil, nil
}

// gmOffersSearch reports whether req offers Google Search.
func gmOffersSearch(req *llm.Request) bool { return serverTool(req, llm.ServerWebSearch) != nil }

package llmtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/deputyhq/deputy/llm"
)

// Anthropic's web search tool, as platform.claude.com documents it (read
// 2026-11-28: agents-and-tools/tool-use/web-search-tool, server-tools,
// tool-reference, build-with-claude/handling-stop-reasons):
//
//   - The tool is {"type": "web_search_20250305" | "web_search_20260209" |
//     "web_search_20260318", "name": "web_search"} with allowed_domains or
//     blocked_domains (not both; domains without a scheme, each with its
//     subdomains) and max_uses (at least 1).
//   - The API runs the searches inside the call: each is a server_tool_use
//     block (ID srvtoolu_...), followed in the same turn by its
//     web_search_tool_result block (tool_use_id) holding web_search_result
//     objects (url, title, encrypted_content, page_age), or an error
//     object (max_uses_exceeded past max_uses). The text built on them
//     carries web_search_result_location citations (url, title,
//     cited_text, encrypted_index). usage.server_tool_use counts the
//     searches billed.
//   - The next request sends the blocks back as they came: their
//     encrypted content is what citations are checked against.
//   - stop_reason pause_turn: the server-side loop ran long; the client
//     sends the turn back as it is and the answer goes on.
//
// The fake "encrypts" with a MAC over the result it stands for, so that
// a block sent back edited, or forged, is refused (on any server, as the
// real API cannot read it), and it remembers the server blocks of each
// answer by the answer's tool_use IDs and citations: a strict server
// refuses a turn that comes back without them or with them changed.

// anSearchTool is the web search tool of a request.
type anSearchTool struct {
	allowed, blocked []string
	maxUses          int
}

// anWebSearchVersions are the tool's versions (tool-reference).
var anWebSearchVersions = []string{"web_search_20250305", "web_search_20260209", "web_search_20260318"}

// anWebSearch reads tools[i], a tool whose type starts with web_search_.
func anWebSearch(i int, raw json.RawMessage, typ string) (llm.ToolSpec, *anSearchTool, error) {
	var t struct {
		Name           string   `json:"name"`
		AllowedDomains []string `json:"allowed_domains"`
		BlockedDomains []string `json:"blocked_domains"`
		MaxUses        *int     `json:"max_uses"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return llm.ToolSpec{}, nil, fmt.Errorf("tools[%d]: %w", i, err)
	}
	switch {
	case !slices.Contains(anWebSearchVersions, typ):
		return llm.ToolSpec{}, nil, fmt.Errorf("tools.%d.type: Input tag %q found using 'type' does not match any of the expected tags: %s", i, typ, strings.Join(anWebSearchVersions, ", "))
	case t.Name != "web_search":
		return llm.ToolSpec{}, nil, fmt.Errorf("tools.%d.name: Input should be 'web_search'", i)
	case len(t.AllowedDomains) > 0 && len(t.BlockedDomains) > 0:
		return llm.ToolSpec{}, nil, fmt.Errorf("tools.%d: use allowed_domains or blocked_domains, not both", i)
	case t.MaxUses != nil && *t.MaxUses < 1:
		return llm.ToolSpec{}, nil, fmt.Errorf("tools.%d.max_uses: Input should be greater than or equal to 1", i)
	}
	for _, d := range append(slices.Clone(t.AllowedDomains), t.BlockedDomains...) {
		if strings.Contains(d, "://") || strings.TrimSpace(d) == "" {
			return llm.ToolSpec{}, nil, fmt.Errorf("tools.%d: domain %q: give a domain without its scheme (example.com, not https://example.com)", i, d)
		}
	}
	st := &anSearchTool{allowed: t.AllowedDomains, blocked: t.BlockedDomains}
	if t.MaxUses != nil {
		st.maxUses = *t.MaxUses
	}
	spec := llm.ToolSpec{Name: t.Name, Server: &llm.ServerTool{Kind: llm.ServerWebSearch,
		AllowedDomains: t.AllowedDomains, MaxUses: st.maxUses}}
	return spec, st, nil
}

// Encrypted content and indexes: a kind, the URL in the clear (so that a
// reader of the log sees what it stands for), and a MAC over both and
// the title (and for an index, the text cited).
const anEncryptedPrefix = "llmtest.enc1."

func anEncrypted(kind, url, title, cited string) string {
	return anEncryptedPrefix + kind + "." + base64.RawURLEncoding.EncodeToString([]byte(url)) + "." + anMAC("search", kind, url, title, cited)
}

// anCitation is a citation of a text block, as sent back.
type anCitation struct {
	Type           string `json:"type"`
	URL            string `json:"url"`
	Title          string `json:"title"`
	CitedText      string `json:"cited_text"`
	EncryptedIndex string `json:"encrypted_index"`
}

// anSearchResult is one web_search_result, as sent back.
type anSearchResult struct {
	Type             string `json:"type"`
	URL              string `json:"url"`
	Title            string `json:"title"`
	EncryptedContent string `json:"encrypted_content"`
}

// anSearchID is the ID of the n-th search of answer id.
func anSearchID(id string, n int) string { return "srvtoolu_" + id + "_" + strconv.Itoa(n) }

// anSearchBlocks lays out the searches of an answer: a server_tool_use
// block and its result for each, the results kept to the tool's domains,
// a search past max_uses answered max_uses_exceeded. It returns the
// blocks, the results the text cites, how many searches are billed, and
// whether the answer pauses after the last of them (the searches after a
// pause are the rest's).
func anSearchBlocks(searches []Search, tool *anSearchTool, id string, done int) (blocks []anOut, cited []ResultReply, billed int64, paused bool) {
	for i, s := range searches {
		n := done + i + 1
		use := anOut{typ: "server_tool_use", id: anSearchID(id, n), query: s.Query}
		res := anOut{typ: "web_search_tool_result", id: use.id}
		if tool.maxUses > 0 && n > tool.maxUses {
			res.errCode = "max_uses_exceeded"
		} else {
			res.results = s.kept(tool.allowed, tool.blocked)
			cited = append(cited, res.results...)
			billed++
		}
		blocks = append(blocks, use, res)
		if s.Pause {
			return blocks, cited, billed, true
		}
	}
	return blocks, cited, billed, false
}

// searchJSON is a search block as the API sends it.
func (o anOut) searchJSON() map[string]any {
	if o.typ == "server_tool_use" {
		return map[string]any{"type": o.typ, "id": o.id, "name": "web_search", "input": map[string]any{"query": o.query}}
	}
	if o.errCode != "" {
		return map[string]any{"type": o.typ, "tool_use_id": o.id,
			"content": map[string]any{"type": "web_search_tool_result_error", "error_code": o.errCode}}
	}
	results := []any{}
	for _, r := range o.results {
		results = append(results, map[string]any{"type": "web_search_result", "url": r.URL, "title": r.Title,
			"encrypted_content": anEncrypted("content", r.URL, r.Title, ""), "page_age": nil})
	}
	return map[string]any{"type": o.typ, "tool_use_id": o.id, "content": results}
}

// citationsJSON are the citations of a text block that cites results.
func citationsJSON(results []ResultReply) []any {
	var out []any
	for _, r := range results {
		out = append(out, map[string]any{"type": "web_search_result_location", "url": r.URL, "title": r.Title,
			"cited_text": r.Snippet, "encrypted_index": anEncrypted("index", r.URL, r.Title, r.Snippet)})
	}
	return out
}

// anServed remembers the server blocks of each answer the fake gave out,
// by the answer's anchors: its tool_use IDs and its citations' encrypted
// indexes, which a turn sent back still carries.
type anServed struct {
	blocks fifoMap[string, [][]byte]
}

func (s *anServed) put(anchors []string, blocks [][]byte) {
	if s == nil || len(blocks) == 0 {
		return
	}
	for _, a := range anchors {
		s.blocks.put(a, blocks, anIssuedTurns)
	}
}

func (s *anServed) get(anchor string) ([][]byte, bool) {
	if s == nil {
		return nil, false
	}
	return s.blocks.get(anchor)
}

// anServerTurn is what readAssistant finds of the server tools in a turn:
// the IDs of its server_tool_use blocks so far, its server blocks'
// canonical JSON and its anchors.
type anServerTurn struct {
	uses    []string
	blocks  [][]byte
	anchors []string
}

// read checks block j of turn i, of type typ, as sent back: a result
// must follow its server_tool_use, and what the fake encrypted must be
// unchanged (an error on any server).
func (t *anServerTurn) read(i, j int, raw json.RawMessage, canon []byte) error {
	var b struct {
		Type      string            `json:"type"`
		ID        string            `json:"id"`
		ToolUseID string            `json:"tool_use_id"`
		Content   json.RawMessage   `json:"content"`
		Citations []json.RawMessage `json:"citations"`
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		return fmt.Errorf("messages[%d].content[%d]: %w", i, j, err)
	}
	switch b.Type {
	case "server_tool_use":
		t.uses = append(t.uses, b.ID)
		t.blocks = append(t.blocks, canon)
	case "web_search_tool_result":
		if !slices.Contains(t.uses, b.ToolUseID) {
			return newHTTPError(errBadRequest, "messages.%d.content.%d: web_search_tool_result block with tool_use_id %q does not follow a server_tool_use block with that id in the same turn", i, j, b.ToolUseID)
		}
		var results []anSearchResult
		if json.Unmarshal(b.Content, &results) == nil {
			for _, r := range results {
				if r.EncryptedContent != anEncrypted("content", r.URL, r.Title, "") {
					return newHTTPError(errBadRequest, "messages.%d.content.%d: invalid encrypted_content in web_search_result %q", i, j, r.URL)
				}
			}
		}
		t.blocks = append(t.blocks, canon)
	case "tool_use":
		t.anchors = append(t.anchors, b.ID)
	case "text":
		for _, raw := range b.Citations {
			var c anCitation
			if json.Unmarshal(raw, &c) != nil || c.Type != "web_search_result_location" {
				continue
			}
			if c.EncryptedIndex != anEncrypted("index", c.URL, c.Title, c.CitedText) {
				return newHTTPError(errBadRequest, "messages.%d.content.%d: invalid encrypted_index in web_search_result_location citation %q", i, j, c.URL)
			}
			t.anchors = append(t.anchors, c.EncryptedIndex)
		}
	}
	return nil
}

// lost is the error a strict server answers for turn i when it comes back
// without the server blocks the fake gave out with it, or with them
// changed; nil when it has them all.
func (t *anServerTurn) lost(i int, served *anServed) *httpError {
	for _, a := range t.anchors {
		issued, ok := served.get(a)
		if !ok {
			continue
		}
		for _, b := range issued {
			if !slices.ContainsFunc(t.blocks, func(c []byte) bool { return string(c) == string(b) }) {
				return newHTTPError(errBadRequest, "messages.%d: the server_tool_use and web_search_tool_result blocks of this assistant turn must be sent back as they were in the original response", i)
			}
		}
	}
	return nil
}

package llmtest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/deputyhq/deputy/llm"
)

// rsOutput builds the output items of an answer, in the order OpenAI
// gives them: the reasoning item (when the model reasons at the request's
// effort, or the script gave a summary), the message, the function calls.
// The items a reasoning item preceded are remembered in issued, when set.
func rsOutput(c *call, a *Answer, id string, issued *issuedReasoning) []map[string]any {
	var out []map[string]any
	searches, cited := rsSearches(c, a, id)
	text, annotations := rsCitedText(a.Text, cited)
	// What the turn is known by when it comes back (issuedKey): its items'
	// IDs, unique to this response, and for items sent back without
	// them, the text and the call IDs, which another turn may repeat.
	var keys []string
	if text != "" || len(a.ToolCalls) == 0 {
		keys = append(keys, "id:msg_"+id, "text:"+text)
	}
	for i, tc := range a.ToolCalls {
		keys = append(keys, "id:fc_"+id+"_"+strconv.Itoa(i+1), "call:"+tc.ID)
	}
	for _, k := range keys {
		if rid := "rs_" + id; issued != nil && (c.thinks || a.Reasoning != "") {
			issued.add(k, rid)
		}
		if issued != nil && len(searches) > 0 {
			var ids []string
			for _, s := range searches {
				ids = append(ids, s["id"].(string))
			}
			issued.add("searches:"+k, strings.Join(ids, ","))
		}
	}
	if c.thinks || a.Reasoning != "" {
		rid := "rs_" + id
		summary := []any{}
		if c.summary && a.Reasoning != "" {
			summary = append(summary, map[string]any{"type": "summary_text", "text": a.Reasoning})
		}
		out = append(out, map[string]any{"type": "reasoning", "id": rid, "summary": summary,
			"encrypted_content": sealReasoning(rid, c.req.Model)})
	}
	for _, s := range searches {
		out = append(out, s)
	}
	if a.Text != "" || len(a.ToolCalls) == 0 {
		out = append(out, map[string]any{"type": "message", "id": "msg_" + id, "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": annotations}}})
	}
	for i, tc := range a.ToolCalls {
		out = append(out, map[string]any{"type": "function_call", "id": "fc_" + id + "_" + strconv.Itoa(i+1), "status": "completed",
			"call_id": tc.ID, "name": tc.Name, "arguments": string(tc.Arguments)})
	}
	return out
}

// rsResponse is the response object: the body of a plain answer, and
// what a stream's first and last events carry.
func rsResponse(c *call, a *Answer, id string, output []map[string]any, done bool) map[string]any {
	status := "in_progress"
	var incomplete any
	if done {
		status = "completed"
		switch finishOr(a) {
		case llm.FinishLength:
			status, incomplete = "incomplete", map[string]any{"reason": "max_output_tokens"}
		case llm.FinishContentFilter:
			status, incomplete = "incomplete", map[string]any{"reason": "content_filter"}
		}
	}
	r := map[string]any{
		"id": "resp_" + id, "object": "response", "created_at": time.Now().Unix(), "status": status,
		"model": c.req.Model, "output": output, "incomplete_details": incomplete, "error": nil,
		"parallel_tool_calls": true, "tools": []any{}, "store": false,
	}
	if done {
		r["usage"] = rsUsage(withCacheHit(a.Usage, c.cacheHit))
	}
	return r
}

func rsUsage(u llm.Usage) map[string]any {
	return map[string]any{
		"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens, "total_tokens": u.Total(),
		// input_tokens and output_tokens count these too.
		"input_tokens_details":  map[string]any{"cached_tokens": u.CacheReadTokens},
		"output_tokens_details": map[string]any{"reasoning_tokens": u.ReasoningTokens},
	}
}

func (wr responsesWire) response(c *call, a *Answer, id string) []byte {
	return mustJSON(rsResponse(c, a, id, rsOutput(c, a, id, wr.issued()), true))
}

// issued is the memory of reasoning items given out, nil without a
// server.
func (wr responsesWire) issued() *issuedReasoning {
	if wr.st == nil {
		return nil
	}
	return &wr.st.issued
}

// events streams the answer as OpenAI does: response.created, then per
// output item its added event, its deltas (reasoning summary, text, or
// function arguments, each in pieces) and its done event with the whole
// item (the reasoning item's encrypted content only there), then
// response.completed with the whole response and its usage.
func (wr responsesWire) events(c *call, a *Answer, id string) []sseEvent {
	var evs []sseEvent
	seq := 0
	emit := func(typ string, fields map[string]any) {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		evs = append(evs, sseEvent{name: typ, data: mustJSON(fields)})
	}
	emit("response.created", map[string]any{"response": rsResponse(c, a, id, []map[string]any{}, false)})
	output := rsOutput(c, a, id, wr.issued())
	for i, item := range output {
		itemID := item["id"]
		emit("response.output_item.added", map[string]any{"output_index": i, "item": rsAdded(item)})
		switch item["type"] {
		case "reasoning":
			for j, part := range item["summary"].([]any) {
				text := part.(map[string]any)["text"].(string)
				emit("response.reasoning_summary_part.added", map[string]any{"item_id": itemID, "output_index": i, "summary_index": j,
					"part": map[string]any{"type": "summary_text", "text": ""}})
				for _, piece := range splitText(text, 2) {
					emit("response.reasoning_summary_text.delta", map[string]any{"item_id": itemID, "output_index": i, "summary_index": j, "delta": piece})
				}
				emit("response.reasoning_summary_text.done", map[string]any{"item_id": itemID, "output_index": i, "summary_index": j, "text": text})
				emit("response.reasoning_summary_part.done", map[string]any{"item_id": itemID, "output_index": i, "summary_index": j, "part": part})
			}
		case "web_search_call":
			for _, step := range []string{"in_progress", "searching", "completed"} {
				emit("response.web_search_call."+step, map[string]any{"item_id": itemID, "output_index": i})
			}
		case "message":
			part := item["content"].([]any)[0].(map[string]any)
			text := part["text"].(string)
			emit("response.content_part.added", map[string]any{"item_id": itemID, "output_index": i, "content_index": 0,
				"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
			for _, piece := range splitText(text, 3) {
				emit("response.output_text.delta", map[string]any{"item_id": itemID, "output_index": i, "content_index": 0, "delta": piece})
			}
			for j, an := range part["annotations"].([]any) {
				emit("response.output_text.annotation.added", map[string]any{"item_id": itemID, "output_index": i, "content_index": 0,
					"annotation_index": j, "annotation": an})
			}
			emit("response.output_text.done", map[string]any{"item_id": itemID, "output_index": i, "content_index": 0, "text": text})
			emit("response.content_part.done", map[string]any{"item_id": itemID, "output_index": i, "content_index": 0,
				"part": item["content"].([]any)[0]})
		case "function_call":
			args := item["arguments"].(string)
			for _, piece := range splitText(args, 3) {
				emit("response.function_call_arguments.delta", map[string]any{"item_id": itemID, "output_index": i, "delta": piece})
			}
			emit("response.function_call_arguments.done", map[string]any{"item_id": itemID, "output_index": i, "arguments": args})
		}
		emit("response.output_item.done", map[string]any{"output_index": i, "item": item})
	}
	kind := "response.completed"
	if finishOr(a) == llm.FinishLength || finishOr(a) == llm.FinishContentFilter {
		kind = "response.incomplete"
	}
	emit(kind, map[string]any{"response": rsResponse(c, a, id, output, true)})
	return evs
}

// rsAdded is an item as its added event shows it: nothing generated yet,
// and a reasoning item's encrypted content not final ("may be incomplete",
// the API reference says; the fake leaves it out).
func rsAdded(item map[string]any) map[string]any {
	added := map[string]any{"type": item["type"], "id": item["id"], "status": "in_progress"}
	switch item["type"] {
	case "reasoning":
		added["summary"] = []any{}
	case "message":
		added["role"], added["content"] = "assistant", []any{}
	case "function_call":
		added["call_id"], added["name"], added["arguments"] = item["call_id"], item["name"], ""
	case "web_search_call":
		added["action"] = map[string]any{"type": "search"}
	}
	return added
}

// reasoningKey signs the fake's encrypted reasoning. OpenAI encrypts the
// reasoning itself; what the fake needs of it is that a changed or
// invented item fails to verify, so it signs the item's ID and model.
var reasoningKey = []byte("llmtest reasoning items")

// sealReasoning is the encrypted_content of reasoning item id.
func sealReasoning(id, model string) string {
	payload := base64.RawURLEncoding.EncodeToString(mustJSON(map[string]string{"id": id, "model": model}))
	return "llmtest." + payload + "." + reasoningMAC(payload)
}

// openReasoning verifies encrypted content and returns the item ID it
// was issued for.
func openReasoning(enc string) (string, bool) {
	rest, ok := strings.CutPrefix(enc, "llmtest.")
	if !ok {
		return "", false
	}
	payload, mac, ok := strings.Cut(rest, ".")
	if !ok || !hmac.Equal([]byte(mac), []byte(reasoningMAC(payload))) {
		return "", false
	}
	data, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return "", false
	}
	var v struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(data, &v) != nil {
		return "", false
	}
	return v.ID, true
}

func reasoningMAC(payload string) string {
	h := hmac.New(sha256.New, reasoningKey)
	h.Write([]byte(payload))
	return hex.EncodeToString(h.Sum(nil))
}

package gemini_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest/adaptertest"
)

// wirePart is a part of a request body as sent.
type wirePart struct {
	Text         string `json:"text"`
	FunctionCall *struct {
		ID   string         `json:"id"`
		Name string         `json:"name"`
		Args map[string]any `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"functionResponse"`
	ThoughtSignature string `json:"thoughtSignature"`
}

type wireBody struct {
	Contents []struct {
		Role  string     `json:"role"`
		Parts []wirePart `json:"parts"`
	} `json:"contents"`
}

// bodyServer answers with reply and keeps every request body.
func bodyServer(t *testing.T, reply string) (*bodies, func(*llm.Request) (*llm.Response, error)) {
	b := &bodies{}
	p := adaptertest.RawServer(t, adapter, func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		b.add(t, data)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, reply)
	})
	return b, func(req *llm.Request) (*llm.Response, error) { return p.Generate(adaptertest.Context(t), req, nil) }
}

type bodies struct {
	mu  sync.Mutex
	got []wireBody
}

func (b *bodies) add(t *testing.T, data []byte) {
	var wb wireBody
	if err := json.Unmarshal(data, &wb); err != nil {
		t.Errorf("request body: %v", err)
	}
	b.mu.Lock()
	b.got = append(b.got, wb)
	b.mu.Unlock()
}

func (b *bodies) last() wireBody {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.got[len(b.got)-1]
}

var sig = base64.StdEncoding.EncodeToString([]byte("opaque-signature-bytes"))

func TestCallsWithoutIDsAndSignatures(t *testing.T) {
	reply := `{"candidates":[{"content":{"role":"model","parts":[` +
		`{"functionCall":{"name":"lookup","args":{"q":"x"}},"thoughtSignature":"` + sig + `"},` +
		`{"functionCall":{"name":"clock"}}` +
		`]},"finishReason":"STOP"}]}`
	b, generate := bodyServer(t, reply)
	req := &llm.Request{Model: "gemini-3-pro", Messages: []llm.Message{llm.UserMessage("go")}}
	resp, err := generate(req)
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Message.ToolCalls
	if len(calls) != 2 || calls[0].ID == "" || calls[0].ID == calls[1].ID {
		t.Fatalf("calls = %+v, want two with distinct made-up IDs", calls)
	}
	// A second answer gets fresh IDs: one Provider serves many conversations.
	resp2, err := generate(req)
	if err != nil {
		t.Fatal(err)
	}
	if id := resp2.Message.ToolCalls[0].ID; id == calls[0].ID || id == calls[1].ID {
		t.Errorf("ID %q reused", id)
	}

	req.Messages = append(req.Messages, resp.Message,
		llm.Message{Role: llm.RoleTool, ToolCallID: calls[0].ID, Content: "found"}, // name found by ID
		llm.Message{Role: llm.RoleTool, Content: "noon"},                           // name found by position
	)
	if _, err := generate(req); err != nil {
		t.Fatal(err)
	}
	body := b.last()
	model := body.Contents[1]
	if model.Role != "model" || len(model.Parts) != 2 {
		t.Fatalf("model turn = %+v", model)
	}
	fc0, fc1 := model.Parts[0], model.Parts[1]
	if fc0.FunctionCall.ID != "" || fc1.FunctionCall.ID != "" {
		t.Errorf("made-up IDs sent to the server: %q, %q", fc0.FunctionCall.ID, fc1.FunctionCall.ID)
	}
	if fc0.ThoughtSignature != sig {
		t.Errorf("signature sent back = %q, want the one received", fc0.ThoughtSignature)
	}
	if fc1.ThoughtSignature != "" {
		t.Errorf("second parallel call got signature %q, want none", fc1.ThoughtSignature)
	}
	results := body.Contents[2].Parts
	if len(results) != 2 || results[0].FunctionResponse.Name != "lookup" || results[1].FunctionResponse.Name != "clock" {
		t.Errorf("function responses = %+v, want lookup then clock", results)
	}
	if results[0].FunctionResponse.ID != "" {
		t.Errorf("made-up ID %q sent with the response", results[0].FunctionResponse.ID)
	}
}

// A replayed call the Provider never saw (another process, another
// provider) gets the documented bypass signature on models that check.
func TestForeignHistorySignature(t *testing.T) {
	reply := `{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}]}`
	history := []llm.Message{
		llm.UserMessage("go"),
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "toolu_9", Name: "a", Arguments: []byte(`{"k":1}`)}, {ID: "toolu_10", Name: "b"}}},
		{Role: llm.RoleTool, ToolCallID: "toolu_9", ToolName: "a", Content: "1"},
		{Role: llm.RoleTool, ToolCallID: "toolu_10", ToolName: "b", Content: "2"},
	}
	tests := []struct {
		model string
		want  string
	}{
		{"gemini-3-flash", "skip/thought/signature/validator"},
		{"models/gemini-2.5-pro", ""},
		{"gemini-1.5-flash", ""},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			b, generate := bodyServer(t, reply)
			if _, err := generate(&llm.Request{Model: tt.model, Messages: history}); err != nil {
				t.Fatal(err)
			}
			parts := b.last().Contents[1].Parts
			got, err := base64.StdEncoding.DecodeString(parts[0].ThoughtSignature)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := base64.StdEncoding.DecodeString(tt.want)
			if string(got) != string(want) {
				t.Errorf("first call's signature = %q, want %q", parts[0].ThoughtSignature, tt.want)
			}
			if got, _ := base64.URLEncoding.DecodeString("skip_thought_signature_validator"); tt.want != "" && string(got) != string(want) {
				t.Error("bypass value does not decode like Google's documented text")
			}
			if parts[1].ThoughtSignature != "" {
				t.Errorf("second call got signature %q", parts[1].ThoughtSignature)
			}
			if parts[0].FunctionCall.ID != "toolu_9" {
				t.Errorf("foreign ID not sent as given: %q", parts[0].FunctionCall.ID)
			}
		})
	}
}

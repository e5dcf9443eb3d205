package adaptertest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/llm"
)

// OutputSchema is the schema of the suite's structured-output check.
var OutputSchema = json.RawMessage(`{"type":"object","properties":{"verdict":{"type":"string","enum":["pass","fail"]},"issues":{"type":"integer","minimum":0}},"required":["verdict","issues"]}`)

// testStructuredOutput: a request with an output schema reaches the server
// as the provider's native structured-output field (Adapter.OutputKey),
// and the server reads back the same schema.
func testStructuredOutput(t *testing.T, a Adapter) {
	if a.OutputKey == "" {
		t.Fatal("adaptertest: Adapter.OutputKey is required")
	}
	for _, stream := range []bool{false, true} {
		t.Run(streamName(stream), func(t *testing.T) {
			p, srv := Start(t, a, `rules: [{reply: {text: '{"verdict":"pass","issues":0}'}}]`)
			req := a.request("review")
			req.Output = &llm.OutputSchema{Name: "review", Schema: OutputSchema}
			var rec Recorder
			resp, err := p.Generate(Context(t), req, rec.Func(stream))
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			if resp.Message.Content != `{"verdict":"pass","issues":0}` {
				t.Errorf("answer %q", resp.Message.Content)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("server saw %d requests, want 1", len(reqs))
			}
			if !HasKey(reqs[0].Body, a.OutputKey) {
				t.Errorf("request body has no %q: %s", a.OutputKey, reqs[0].Body)
			}
			got := reqs[0].Parsed.Output
			if got == nil || !JSONEqual(got.Schema, OutputSchema) {
				t.Fatalf("server read output %+v, want the schema %s", got, OutputSchema)
			}
			if strings.HasPrefix(a.Protocol, "openai") && got.Name != "review" {
				t.Errorf("response format name %q, want review", got.Name)
			}
		})
	}
}

//go:build temporal

package durable_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/llm/llmtest"
)

// A conversation on Temporal carries each turn's provider state through
// the workflow's history (the model activity's input and result are JSON
// there): every request of a tree's tool loops sends back the state of
// its earlier answers, and no thinking reaches a result.
func TestProviderStateSurvivesTemporalHistory(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "data.txt", "DATA")
	eng, prov, lead := newEngineWith(t, noRateLimit(treeScript))
	sp := llmtest.NewStateful(prov)
	eng.Models = models{sp}
	_, got := onTemporal(t, eng, eng, delegate.RunRequest{Agent: lead, Task: "go", Workdir: dir})
	if got.Status != delegate.StatusOK || got.Output != "A read DATA\n | B done" {
		t.Fatalf("workflow answer %q (%s)", got.Output, got.Status)
	}
	if sp.Calls() != 5 {
		t.Errorf("%d model calls, want 5 (lead 2, worker-a 2, worker-b 1)", sp.Calls())
	}
	if len(sp.Problems()) > 0 {
		t.Errorf("state not sent back on Temporal:\n%s", strings.Join(sp.Problems(), "\n"))
	}
	whole, _ := json.Marshal(got)
	if bytes.Contains(whole, []byte(llmtest.StatefulThinking)) || bytes.Contains(whole, []byte(llmtest.StatefulSignature)) {
		t.Errorf("thinking or state in the tree's result:\n%s", whole)
	}
}

//go:build temporal

package durable_test

import (
	"testing"
	"time"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/durable"
)

// testdata/tree-history.json is the history of a real 16-child tree's root
// workflow, recorded from the Temporal dev server by cmd/deputy-temporal's
// integration test (DEPUTY_WRITE_HISTORY=path), with one of its two workers
// killed mid-tree. Replaying it against the current code checks that the
// workflow is deterministic: it makes the same decisions from the same
// recorded results. A change to the workflow that breaks running trees
// fails here; record a new history when the change is intended.
const history = "testdata/tree-history.json"

func TestReplayRecordedTree(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	durable.RegisterWorkflow(r)
	if err := r.ReplayWorkflowHistoryFromJSONFile(quietLogger(), history); err != nil {
		t.Fatalf("the recorded tree does not replay: %v", err)
	}
}

// The replayer does catch a workflow that decides differently: one that
// sleeps before its first model call does not replay the history.
func TestReplayCatchesADifferentWorkflow(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(func(ctx workflow.Context, spec delegate.RunSpec) (*delegate.Envelope, error) {
		if err := workflow.Sleep(ctx, time.Second); err != nil {
			return nil, err
		}
		return durable.AgentWorkflow(ctx, spec)
	}, workflow.RegisterOptions{Name: durable.WorkflowName})
	if err := r.ReplayWorkflowHistoryFromJSONFile(quietLogger(), history); err == nil {
		t.Fatal("a workflow with an extra timer replayed the recorded history")
	}
}

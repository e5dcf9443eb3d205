package durable

import (
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/deputyhq/deputy/delegate"
)

// Registry is where a worker (or a test environment, or a replayer)
// registers deputy's workflow and activities.
type Registry interface {
	RegisterWorkflowWithOptions(w interface{}, options workflow.RegisterOptions)
	RegisterActivityWithOptions(a interface{}, options activity.RegisterOptions)
}

// Register registers AgentWorkflow and, when eng is not nil, the
// activities that run its calls with eng.
func Register(r Registry, eng *delegate.Engine) {
	r.RegisterWorkflowWithOptions(AgentWorkflow, workflow.RegisterOptions{Name: WorkflowName})
	if eng == nil {
		return
	}
	a := &Activities{Engine: eng}
	r.RegisterActivityWithOptions(a.ModelCall, activity.RegisterOptions{Name: ModelActivity})
	r.RegisterActivityWithOptions(a.ToolCall, activity.RegisterOptions{Name: ToolActivity})
}

var _ Registry = worker.Worker(nil)

//go:build temporal

package durable

import (
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/workflow"

	"github.com/deputyhq/deputy/delegate"
)

// WorkflowRegistry is where AgentWorkflow is registered: a worker, a test
// environment or a replayer.
type WorkflowRegistry interface {
	RegisterWorkflowWithOptions(w interface{}, options workflow.RegisterOptions)
}

// Registry is a worker or a test environment: workflows and activities.
type Registry interface {
	WorkflowRegistry
	RegisterActivityWithOptions(a interface{}, options activity.RegisterOptions)
}

// RegisterWorkflow registers AgentWorkflow under WorkflowName.
func RegisterWorkflow(r WorkflowRegistry) {
	r.RegisterWorkflowWithOptions(AgentWorkflow, workflow.RegisterOptions{Name: WorkflowName})
}

// Register registers AgentWorkflow and the activities that make its calls
// with eng.
func Register(r Registry, eng *delegate.Engine) {
	RegisterWorkflow(r)
	a := &Activities{Engine: eng}
	r.RegisterActivityWithOptions(a.ModelCall, activity.RegisterOptions{Name: ModelActivity})
	r.RegisterActivityWithOptions(a.ToolCall, activity.RegisterOptions{Name: ToolActivity})
}

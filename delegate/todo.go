package delegate

import (
	"context"

	"github.com/deputyhq/deputy/tool"
)

// withTodoList gives run s its own task list for todo_write and todo_read
// (tool.TodoList), reporting each new version as an EventTodos: the live
// view shows it under the run, and the ledger keeps it. Only a run
// offered one of the two tools gets a list: a wide fan-out's children pay
// nothing for it.
func (e *Engine) withTodoList(ctx context.Context, s *Scope, tools *tool.Registry) context.Context {
	if tools == nil {
		return ctx
	}
	if _, ok := tools.Get(tool.TodoWrite); !ok {
		if _, ok := tools.Get(tool.TodoRead); !ok {
			return ctx
		}
	}
	list := &tool.TodoList{OnChange: func(items []tool.TodoItem) {
		ev := scopeEvent(EventTodos, s)
		ev.Todos = items
		e.emitQueued(s, &ev)
	}}
	return tool.WithTodoList(ctx, list)
}

package builtin

import (
	"context"
	"fmt"
	"strings"

	"github.com/deputyhq/deputy/tool"
)

// The task-list tools' names (see package tool's).
const (
	TodoWrite = tool.TodoWrite
	TodoRead  = tool.TodoRead
)

type todoWriteArgs struct {
	Todos []tool.TodoItem `json:"todos" jsonschema:"the whole list as it is now: every task, each with its status"`
}

type todoReadArgs struct{}

func todoWriteTool() tool.Tool {
	return tool.New(TodoWrite,
		"Keep a task list for this run: give the whole list each time, with each task's status. Use it for work of three or more steps; mark a task in_progress before starting it and completed as soon as it is done. The person watching the run sees the list.",
		todoWrite)
}

func todoReadTool() tool.Tool {
	return tool.New(TodoRead, "Read this run's task list as todo_write last set it.", todoRead)
}

func todoWrite(ctx context.Context, a todoWriteArgs) (tool.Result, error) {
	l := tool.TodoListFrom(ctx)
	if l == nil {
		return tool.Errorf("todo_write is not available in this run (no task list)"), nil
	}
	if a.Todos == nil {
		return tool.Errorf("todos must be a list (give [] to clear it)"), nil
	}
	inProgress := 0
	for i, t := range a.Todos {
		if strings.TrimSpace(t.Content) == "" {
			return tool.Errorf("todos[%d].content must not be empty", i), nil
		}
		switch t.Status {
		case tool.TodoPending, tool.TodoCompleted, tool.TodoCancelled:
		case tool.TodoInProgress:
			inProgress++
		default:
			return tool.Errorf("todos[%d].status must be pending, in_progress, completed or cancelled (got %q)", i, t.Status), nil
		}
		switch t.Priority {
		case "", "high", "medium", "low":
		default:
			return tool.Errorf("todos[%d].priority must be high, medium or low (got %q)", i, t.Priority), nil
		}
	}
	l.Set(a.Todos)
	return tool.Text(todoSummary(a.Todos, inProgress)), nil
}

func todoRead(ctx context.Context, _ todoReadArgs) (tool.Result, error) {
	l := tool.TodoListFrom(ctx)
	if l == nil {
		return tool.Errorf("todo_read is not available in this run (no task list)"), nil
	}
	items := l.Items()
	if len(items) == 0 {
		return tool.Text("The task list is empty."), nil
	}
	return tool.Text(tool.FormatTodos(items)), nil
}

// todoSummary is todo_write's answer: what the list holds now.
func todoSummary(items []tool.TodoItem, inProgress int) string {
	if len(items) == 0 {
		return "Task list cleared."
	}
	counts := map[string]int{}
	for _, t := range items {
		counts[t.Status]++
	}
	var parts []string
	for _, s := range []string{tool.TodoInProgress, tool.TodoPending, tool.TodoCompleted, tool.TodoCancelled} {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], strings.ReplaceAll(s, "_", " ")))
		}
	}
	msg := fmt.Sprintf("Task list updated: %d tasks (%s).", len(items), strings.Join(parts, ", "))
	if inProgress > 1 {
		msg += " Note: more than one task is in progress; keep one at a time where you can."
	}
	return msg
}

package tool

import (
	"context"
	"strings"
	"sync"
)

// The names of the task-list tools (package builtin has them): Claude
// Code's TodoWrite and opencode's todowrite map to todo_write, opencode's
// todoread to todo_read.
const (
	TodoWrite = "todo_write"
	TodoRead  = "todo_read"
)

// The statuses a task may have: Claude Code's three and opencode's
// cancelled.
const (
	TodoPending    = "pending"
	TodoInProgress = "in_progress"
	TodoCompleted  = "completed"
	TodoCancelled  = "cancelled"
)

// TodoItem is one task of a run's list. Content and Status are required;
// ActiveForm (Claude Code's "Running the tests" beside "Run the tests"),
// Priority and ID (opencode's) are kept as the model wrote them.
type TodoItem struct {
	Content    string `json:"content" jsonschema:"the task, in the imperative: Run the tests"`
	Status     string `json:"status" jsonschema:"pending, in_progress, completed or cancelled; keep exactly one task in_progress while you work"`
	ActiveForm string `json:"activeForm,omitempty" jsonschema:"the task as it is being done: Running the tests (optional)"`
	Priority   string `json:"priority,omitempty" jsonschema:"high, medium or low (optional)"`
	ID         string `json:"id,omitempty" jsonschema:"an id of your choosing (optional)"`
}

// TodoList is one run's task list: todo_write replaces it, todo_read reads
// it. The engine gives each run its own (WithTodoList); OnChange, when
// set, sees each new list (the live view, the ledger). Safe for
// concurrent use.
type TodoList struct {
	mu    sync.Mutex
	items []TodoItem
	// OnChange is called with a copy of the list after each write, outside
	// the list's lock.
	OnChange func([]TodoItem)
}

// Items returns a copy of the list.
func (l *TodoList) Items() []TodoItem {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]TodoItem(nil), l.items...)
}

// Set replaces the list.
func (l *TodoList) Set(items []TodoItem) {
	l.mu.Lock()
	l.items = append([]TodoItem(nil), items...)
	l.mu.Unlock()
	if l.OnChange != nil {
		l.OnChange(append([]TodoItem(nil), items...))
	}
}

type todoListKey struct{}

// WithTodoList returns ctx carrying the run's task list.
func WithTodoList(ctx context.Context, l *TodoList) context.Context {
	return context.WithValue(ctx, todoListKey{}, l)
}

// TodoListFrom returns the task list in ctx, or nil.
func TodoListFrom(ctx context.Context) *TodoList {
	l, _ := ctx.Value(todoListKey{}).(*TodoList)
	return l
}

// FormatTodos renders a list one task a line, with a mark for its status:
// [ ] pending, [>] in progress, [x] completed, [-] cancelled.
func FormatTodos(items []TodoItem) string {
	var b strings.Builder
	for i, t := range items {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(todoMark(t.Status))
		b.WriteByte(' ')
		text := t.Content
		if t.Status == TodoInProgress && t.ActiveForm != "" {
			text = t.ActiveForm
		}
		b.WriteString(text)
		if t.Priority != "" {
			b.WriteString(" (" + t.Priority + ")")
		}
	}
	return b.String()
}

func todoMark(status string) string {
	switch status {
	case TodoInProgress:
		return "[>]"
	case TodoCompleted:
		return "[x]"
	case TodoCancelled:
		return "[-]"
	}
	return "[ ]"
}

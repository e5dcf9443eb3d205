package builtin

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/tool"
)

func TestTodoWriteAndRead(t *testing.T) {
	r, _ := testRegistry(t, Options{}, nil)
	list := &tool.TodoList{}
	var seen [][]tool.TodoItem
	list.OnChange = func(items []tool.TodoItem) { seen = append(seen, items) }
	ctx := tool.WithTodoList(context.Background(), list)

	// Claude Code's shape (content, status, activeForm).
	res := callCtx(ctx, t, r, TodoWrite, `{"todos":[
		{"content":"Read the code","status":"completed","activeForm":"Reading the code"},
		{"content":"Run the tests","status":"in_progress","activeForm":"Running the tests"},
		{"content":"Write the report","status":"pending","activeForm":"Writing the report"}]}`)
	if res.IsError || res.Content != "Task list updated: 3 tasks (1 in progress, 1 pending, 1 completed)." {
		t.Fatalf("todo_write = %+v", res)
	}
	res = callCtx(ctx, t, r, TodoRead, `{}`)
	want := "[x] Read the code\n[>] Running the tests\n[ ] Write the report"
	if res.IsError || res.Content != want {
		t.Fatalf("todo_read = %q, want %q", res.Content, want)
	}
	// opencode's shape (id, priority, cancelled) replaces the list.
	res = callCtx(ctx, t, r, TodoWrite, `{"todos":[{"id":"1","content":"Ship","status":"cancelled","priority":"high"}]}`)
	if res.IsError {
		t.Fatalf("todo_write = %+v", res)
	}
	if got := list.Items(); !cmp.Equal(got, []tool.TodoItem{{ID: "1", Content: "Ship", Status: tool.TodoCancelled, Priority: "high"}}) {
		t.Fatalf("list = %+v", got)
	}
	if len(seen) != 2 || len(seen[0]) != 3 || len(seen[1]) != 1 {
		t.Fatalf("OnChange saw %+v", seen)
	}
	if res := callCtx(ctx, t, r, TodoWrite, `{"todos":[]}`); res.Content != "Task list cleared." {
		t.Fatalf("clear = %+v", res)
	}
	if res := callCtx(ctx, t, r, TodoRead, `{}`); res.Content != "The task list is empty." {
		t.Fatalf("read empty = %+v", res)
	}
}

func TestTodoWriteErrors(t *testing.T) {
	r, _ := testRegistry(t, Options{}, nil)
	list := &tool.TodoList{}
	ctx := tool.WithTodoList(context.Background(), list)
	list.Set([]tool.TodoItem{{Content: "keep", Status: tool.TodoPending}})
	for _, tc := range []struct{ args, want string }{
		{`{"todos":[{"content":"a","status":"done"}]}`, `todos[0].status must be pending, in_progress, completed or cancelled (got "done")`},
		{`{"todos":[{"content":"a","status":"pending"},{"content":" ","status":"pending"}]}`, `todos[1].content must not be empty`},
		{`{"todos":[{"content":"a","status":"pending","priority":"urgent"}]}`, `todos[0].priority must be high, medium or low (got "urgent")`},
		{`{"todos":null}`, `todos must be a list (give [] to clear it)`},
		{`{}`, `invalid arguments for todo_write: missing required field "todos"`},
	} {
		res := callCtx(ctx, t, r, TodoWrite, tc.args)
		if !res.IsError || res.Content != tc.want {
			t.Errorf("%s: got %+v, want error %q", tc.args, res, tc.want)
		}
	}
	// A refused write leaves the list as it was: no side effect.
	if got := list.Items(); len(got) != 1 || got[0].Content != "keep" {
		t.Fatalf("list changed by refused writes: %+v", got)
	}
	// Outside a run that keeps a list, the tools say so.
	if res := call(t, r, TodoWrite, `{"todos":[]}`); !res.IsError || res.Content != "todo_write is not available in this run (no task list)" {
		t.Fatalf("no list: %+v", res)
	}
}

func TestTodoMultipleInProgressIsNoted(t *testing.T) {
	r, _ := testRegistry(t, Options{}, nil)
	ctx := tool.WithTodoList(context.Background(), &tool.TodoList{})
	res := callCtx(ctx, t, r, TodoWrite, `{"todos":[{"content":"a","status":"in_progress"},{"content":"b","status":"in_progress"}]}`)
	if res.IsError || res.Content != "Task list updated: 2 tasks (2 in progress). Note: more than one task is in progress; keep one at a time where you can." {
		t.Fatalf("got %+v", res)
	}
}

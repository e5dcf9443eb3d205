package builtin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/deputyhq/deputy/tool"
)

// FuzzToolArgs: every built-in tool that touches only the working directory
// answers any argument bytes with a result, never a Go error or a panic,
// and nothing it writes lands outside the working directory. (terminal,
// fetch and ask_user are left out: their arguments decode the same way,
// through tool.New, which FuzzDecodeArgs covers, and running arbitrary
// commands or requests is no fuzz target.)
func FuzzToolArgs(f *testing.F) {
	seeds := map[string][]string{
		ReadFile:      {`{"path":"a.txt"}`, `{"path":"a.txt","offset":2,"limit":1}`, `{"path":"../x"}`, `{"path":"a.txt","offset":-1}`},
		WriteFile:     {`{"path":"new.txt","content":"x"}`, `{"path":"/etc/passwd","content":"x"}`, `{"path":"dir","content":""}`},
		EditFile:      {`{"path":"a.txt","old_text":"one","new_text":"two"}`, `{"path":"a.txt","old_text":"","new_text":"x"}`},
		ListDirectory: {`{}`, `{"path":"dir"}`, `{"path":".."}`},
		FindPath:      {`{"glob":"**/*.txt"}`, `{"glob":"["}`, `{"glob":"../**"}`},
		Grep:          {`{"pattern":"one"}`, `{"pattern":"(","path":"dir"}`, `{"pattern":"o","include":"*.txt"}`},
		TodoWrite: {`{"todos":[{"content":"a","status":"in_progress","activeForm":"A-ing"}]}`, `{"todos":[{"content":"","status":"x"}]}`,
			`{"todos":[{"id":"1","content":"b","status":"cancelled","priority":"low"}]}`, `{"todos":[]}`, `{"todos":null}`},
		TodoRead: {`{}`},
	}
	names := []string{ReadFile, WriteFile, EditFile, ListDirectory, FindPath, Grep, TodoWrite, TodoRead}
	for i, n := range names {
		for _, s := range seeds[n] {
			f.Add(uint8(i), []byte(s))
		}
		f.Add(uint8(i), []byte(`null`))
		f.Add(uint8(i), []byte(`{"path":1}`))
	}
	outside := f.TempDir()
	f.Fuzz(func(t *testing.T, which uint8, raw []byte) {
		dir := filepath.Join(t.TempDir(), "work")
		if err := os.MkdirAll(filepath.Join(dir, "dir"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		r := New(Options{Workdir: dir})
		tl, _ := r.Get(names[int(which)%len(names)])
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		list := &tool.TodoList{}
		before := []tool.TodoItem{{Content: "kept", Status: tool.TodoPending}}
		list.Set(before)
		ctx = tool.WithTodoList(ctx, list)
		res, err := tl.Run(ctx, json.RawMessage(raw))
		if err != nil {
			t.Fatalf("%s(%s): Go error %v", tl.Spec().Name, raw, err)
		}
		if res.IsError && !slices.Equal(list.Items(), before) {
			t.Fatalf("%s(%s) was refused but changed the task list to %+v", tl.Spec().Name, raw, list.Items())
		}
		// Nothing appeared next to the working directory.
		entries, _ := os.ReadDir(filepath.Dir(dir))
		if len(entries) != 1 {
			t.Fatalf("%s(%s) wrote outside the working directory: %v", tl.Spec().Name, raw, entries)
		}
		if e, _ := os.ReadDir(outside); len(e) != 0 {
			t.Fatalf("%s(%s) wrote outside: %v", tl.Spec().Name, raw, e)
		}
	})
}

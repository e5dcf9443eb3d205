package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/llm"
)

// stub is a minimal Tool with a fixed name.
type stub string

func (s stub) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: string(s), Description: "stub", Parameters: json.RawMessage(`{"type":"object"}`)}
}

func (s stub) Run(context.Context, json.RawMessage) (Result, error) { return Text(string(s)), nil }

func stubs(names ...string) []Tool {
	out := make([]Tool, len(names))
	for i, n := range names {
		out[i] = stub(n)
	}
	return out
}

func fullRegistry() *Registry {
	return NewRegistry(stubs("read_file", "write_file", "edit_file", "list_directory", "find_path", "grep", "terminal", "fetch")...)
}

func TestRegistryBasics(t *testing.T) {
	r := NewRegistry(stubs("b", "a")...)
	if err := r.Add(stub("c")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"b", "a", "c"}, r.Names()); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	if r.Len() != 3 {
		t.Errorf("Len = %d", r.Len())
	}
	if _, ok := r.Get("a"); !ok {
		t.Error("Get(a) not found")
	}
	if _, ok := r.Get("zz"); ok {
		t.Error("Get(zz) found")
	}
	specs := r.Specs()
	if len(specs) != 3 || specs[0].Name != "b" || specs[2].Name != "c" {
		t.Errorf("Specs = %+v", specs)
	}
	err := r.Add(stub("a"))
	if !errors.Is(err, ErrDuplicateTool) {
		t.Errorf("Add(duplicate) = %v, want ErrDuplicateTool", err)
	}
	if err := r.Add(stub("bad name")); err == nil {
		t.Error("Add(invalid name) succeeded")
	}
	if r.Len() != 3 {
		t.Errorf("failed Adds changed the registry: Len = %d", r.Len())
	}
}

func TestNewRegistryPanicsOnDuplicate(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("NewRegistry with duplicate names did not panic")
		}
	}()
	NewRegistry(stubs("a", "a")...)
}

func TestValidName(t *testing.T) {
	for name, want := range map[string]bool{
		"read_file": true, "code-review_llm": true, "A1": true, "": false, "a b": false,
		"a.b": false, "ä": false, fmt.Sprintf("%065d", 0): false, fmt.Sprintf("%064d", 0): true,
	} {
		if got := ValidName(name); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestExpand(t *testing.T) {
	r := fullRegistry()
	r.DefineGroup("net", "fetch", "missing_tool")
	r.DefineGroup("ghosts", "nope1", "nope2")
	tests := []struct {
		in      []string
		want    []string
		unknown string
	}{
		{nil, nil, ""},
		{[]string{"grep"}, []string{"grep"}, ""},
		{[]string{"file_ops"}, []string{"read_file", "write_file", "edit_file", "list_directory", "find_path", "grep"}, ""},
		{[]string{"grep", "file_ops", "grep"}, []string{"grep", "read_file", "write_file", "edit_file", "list_directory", "find_path"}, ""},
		{[]string{"terminal", "net"}, []string{"terminal", "fetch"}, ""},
		{[]string{"fetch", "nope"}, nil, "nope"},
		{[]string{"ghosts"}, nil, "ghosts"},
	}
	for _, tt := range tests {
		got, err := r.Expand(tt.in)
		if tt.unknown != "" {
			var ue *UnknownToolError
			if !errors.As(err, &ue) || ue.Name != tt.unknown {
				t.Errorf("Expand(%v) error = %v, want UnknownToolError{%q}", tt.in, err, tt.unknown)
			}
			continue
		}
		if err != nil {
			t.Errorf("Expand(%v): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Expand(%v) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestGroupNameShadowedByTool(t *testing.T) {
	r := NewRegistry(stubs("x", "y")...)
	r.DefineGroup("x", "y")
	got, err := r.Expand([]string{"x"})
	if err != nil || !cmp.Equal(got, []string{"x"}) {
		t.Errorf("Expand(x) = %v, %v; want the tool x", got, err)
	}
}

func TestNarrow(t *testing.T) {
	r := fullRegistry()
	n, err := r.Narrow([]string{"terminal", "file_ops"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"terminal", "read_file", "write_file", "edit_file", "list_directory", "find_path", "grep"}
	if diff := cmp.Diff(want, n.Names()); diff != "" {
		t.Errorf("Narrow names (-want +got):\n%s", diff)
	}
	// The original is untouched.
	if r.Len() != 8 {
		t.Errorf("Narrow changed the original: Len = %d", r.Len())
	}

	// A narrowed registry keeps the group, partly present.
	n2, err := r.Narrow([]string{"read_file", "grep"})
	if err != nil {
		t.Fatal(err)
	}
	n3, err := n2.Narrow([]string{"file_ops"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"read_file", "grep"}, n3.Names()); diff != "" {
		t.Errorf("partial group (-want +got):\n%s", diff)
	}
	// Narrowing can only narrow: terminal is gone for good.
	_, err = n2.Narrow([]string{"terminal"})
	var ue *UnknownToolError
	if !errors.As(err, &ue) || ue.Name != "terminal" {
		t.Errorf("Narrow(terminal) on a registry without it = %v", err)
	}
	if err.Error() != `unknown tool "terminal"` {
		t.Errorf("message = %q", err)
	}
	empty, err := r.Narrow(nil)
	if err != nil || empty.Len() != 0 {
		t.Errorf("Narrow(nil) = %v, %v; want an empty registry", empty, err)
	}
}

func TestWithout(t *testing.T) {
	r := fullRegistry()
	w := r.Without("file_ops", "nope", "fetch")
	if diff := cmp.Diff([]string{"terminal"}, w.Names()); diff != "" {
		t.Errorf("Without (-want +got):\n%s", diff)
	}
	if r.Len() != 8 {
		t.Error("Without changed the original")
	}
	if _, ok := w.Get("grep"); ok {
		t.Error("Get(grep) on Without(file_ops) found it")
	}
}

// TestRegistryConcurrentReads runs readers and a writer together; the race
// detector is the assertion.
func TestRegistryConcurrentReads(t *testing.T) {
	r := fullRegistry()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				_ = r.Specs()
				_, _ = r.Expand([]string{"file_ops", "terminal"})
				_, _ = r.Narrow([]string{"grep"})
				_ = r.Without("fetch")
				if i == 0 {
					_ = r.Add(stub(fmt.Sprintf("extra_%d", j)))
				}
			}
		}()
	}
	wg.Wait()
	if r.Len() != 8+50 {
		t.Errorf("Len = %d, want %d", r.Len(), 58)
	}
}

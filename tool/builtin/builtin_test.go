package builtin

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/tool"
)

func TestNewRegistersEveryTool(t *testing.T) {
	r, _ := testRegistry(t, Options{}, nil)
	if diff := cmp.Diff(Names(), r.Names()); diff != "" {
		t.Errorf("registry names (-Names() +registry):\n%s", diff)
	}
	for _, spec := range r.Specs() {
		if spec.Description == "" {
			t.Errorf("%s has no description", spec.Name)
		}
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(spec.Parameters, &schema); err != nil || schema.Type != "object" {
			t.Errorf("%s parameters = %s (%v), want an object schema", spec.Name, spec.Parameters, err)
		}
		for prop, raw := range schema.Properties {
			var p struct {
				Description string `json:"description"`
			}
			if json.Unmarshal(raw, &p); p.Description == "" {
				t.Errorf("%s.%s has no description", spec.Name, prop)
			}
		}
	}
	fileOps, err := r.Expand([]string{tool.FileOps})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{ReadFile, WriteFile, EditFile, ListDirectory, FindPath, Grep}, fileOps); diff != "" {
		t.Errorf("file_ops (-want +got):\n%s", diff)
	}
}

func TestDefaultToolNamesAreReadOnly(t *testing.T) {
	want := []string{ReadFile, ListDirectory, FindPath, Grep}
	if diff := cmp.Diff(want, DefaultToolNames()); diff != "" {
		t.Errorf("DefaultToolNames (-want +got):\n%s", diff)
	}
	// The lists are copies: callers cannot change them for others.
	DefaultToolNames()[0] = "terminal"
	Names()[0] = "x"
	if DefaultToolNames()[0] != ReadFile || Names()[0] != ReadFile {
		t.Error("exported name lists share their backing array")
	}
	for _, n := range DefaultToolNames() {
		if !slices.Contains(Names(), n) {
			t.Errorf("default %q is not a built-in", n)
		}
	}
}

func TestNewPanicsWithoutWorkdir(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New(Options{}) did not panic")
		}
	}()
	New(Options{})
}

func TestRelativeWorkdirIsMadeAbsolute(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	e := newEnv(Options{Workdir: "."})
	if e.root != dir {
		t.Errorf("root = %q, want %q", e.root, dir)
	}
}

func TestMissingWorkdirIsAToolError(t *testing.T) {
	r := New(Options{Workdir: t.TempDir() + "/gone"})
	res := call(t, r, ReadFile, map[string]any{"path": "a.txt"})
	wantErr(t, res, "working directory")
}

// Building the registry infers no tool's schema (tool.New does that when a
// tool is first offered): every built-in says its name without its spec.
func TestBuiltinsNamedWithoutSpec(t *testing.T) {
	for _, tl := range New(Options{Workdir: t.TempDir()}).Tools() {
		if _, ok := tl.(interface{ Name() string }); !ok {
			t.Errorf("%s (%T) has no Name method: registering it infers its schema", tool.Name(tl), tl)
		}
	}
}

package builtin

import (
	"context"
	"fmt"
	"testing"
)

// TestSearchesStopWhenCancelled: a cancelled context ends grep and
// find_path with an error result rather than a full walk's answer.
func TestSearchesStopWhenCancelled(t *testing.T) {
	files := map[string]string{}
	for i := range 50 {
		files[fmt.Sprintf("d%d/f.txt", i)] = "needle\n"
	}
	r, _ := testRegistry(t, Options{}, files)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	wantErr(t, callCtx(ctx, t, r, Grep, map[string]any{"pattern": "needle"}), "grep cancelled")
	wantErr(t, callCtx(ctx, t, r, FindPath, map[string]any{"pattern": "**/*.none"}), "find_path cancelled")
}

func BenchmarkConfine(b *testing.B) {
	root, _ := confineTree(b, b.TempDir())
	for b.Loop() {
		if _, err := Confine(root, "in_link/deeper/file.txt"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGrep(b *testing.B) {
	files := map[string]string{}
	for i := range 200 {
		content := ""
		for j := range 100 {
			content += fmt.Sprintf("line %d of file %d\n", j, i)
		}
		files[fmt.Sprintf("pkg%d/f%d.go", i%10, i)] = content
	}
	r, _ := testRegistry(b, Options{}, files)
	tl, _ := r.Get(Grep)
	args := []byte(`{"pattern":"line 5[0-9] of file 1[0-9]$"}`)
	for b.Loop() {
		if res, _ := tl.Run(context.Background(), args); res.IsError {
			b.Fatal(res.Content)
		}
	}
}

package config

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// A run asks for one agent among many installed: OpenAgents (with its
// index warm) against LoadAgents, which reads every file. The ratio is
// what docs/performance.md's row reports for the whole process.
func BenchmarkFindAgent(b *testing.B) {
	dir := b.TempDir()
	for i := range 1000 {
		src := fmt.Sprintf("---\nname: agent-%04d\ndescription: Agent number %d, for the benchmark.\ntools: Read, Grep, Glob\nmodel: sonnet\n---\nYou are agent %d. Review the code you are given and report problems by file and line.\n", i, i, i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("agent-%04d.md", i)), []byte(src), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	dirs := []Dir{{Path: dir, Source: SourceUser}}
	index := filepath.Join(b.TempDir(), "index")
	OpenAgents(dirs, LoadOptions{}, index).Get("agent-0500") // writes the index
	b.Run("OpenAgents", func(b *testing.B) {
		for b.Loop() {
			if _, ok := OpenAgents(dirs, LoadOptions{}, index).Get("agent-0500"); !ok {
				b.Fatal("not found")
			}
		}
	})
	b.Run("LoadAgents", func(b *testing.B) {
		for b.Loop() {
			set, _ := LoadAgents(dirs, LoadOptions{})
			if _, ok := set.Get("agent-0500"); !ok {
				b.Fatal("not found")
			}
		}
	})
}

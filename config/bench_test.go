package config

import (
	"os"
	"path/filepath"
	"testing"
)

func BenchmarkParseAgentTOML(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "axe", "pr-reviewer.toml"))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if a, _ := ParseAgentTOML(data, "pr-reviewer.toml"); a == nil {
			b.Fatal("not parsed")
		}
	}
}

func BenchmarkParseAgentMarkdown(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "claude", "code-reviewer.md"))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if a, _ := ParseAgentMarkdown(data, "code-reviewer.md"); a == nil {
			b.Fatal("not parsed")
		}
	}
}

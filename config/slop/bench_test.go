package slop

import (
	"os"
	"path/filepath"
	"testing"
)

func BenchmarkParseSpecializations(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "example_subqueries.ini"))
	if err != nil {
		b.Fatal(err)
	}
	opts := Options{SkillDirs: []string{"testdata"}}
	for b.Loop() {
		if _, err := Parse(data, "subqueries.ini", opts); err != nil {
			b.Fatal(err)
		}
	}
}

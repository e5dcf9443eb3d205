package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deputyhq/deputy/config/internal/testfile"
)

// OpenAgents finds an agent by name in the highest-precedence directory
// that defines it, by its file's name too, and reads no other file: a
// broken file elsewhere is not reported. Its index remembers each file's
// names, and a file that changed is read again.
func TestOpenAgents(t *testing.T) {
	root := t.TempDir()
	testfile.WriteFiles(t, root, map[string]string{
		"low/rev.toml":     "name = \"rev\"\nmodel = \"inherit\"\ndescription = \"low\"\n",
		"low/broken.toml":  "name = \n",
		"high/review.toml": "name = \"rev\" # the reviewer\nmodel = \"inherit\"\ndescription = \"high\"\n",
		"high/notes.md":    "# not an agent\n",
		"high/Helper.md":   "---\nname: Python Helper\ndescription: spaced\nsub_agents: [rev]\n---\nHelp.\n",
		"high/lead.md":     "---\n\"name\": lead\nmax_turns: -1\n---\nLead.\n",
	})
	dirs := []Dir{{Path: filepath.Join(root, "low"), Source: SourceUser}, {Path: filepath.Join(root, "high"), Source: SourceProject}}
	index := filepath.Join(root, "cache", "index.json")

	set := OpenAgents(dirs, LoadOptions{}, index)
	a, ok := set.Get("rev")
	if !ok || a.Description != "high" {
		t.Fatalf("rev = %+v", a)
	}
	if d := set.LoadDiagnostics(); len(d) != 0 {
		t.Errorf("diagnostics of files not asked for: %v", d)
	}
	if a, ok := set.Get("review"); !ok || a.Description != "high" {
		t.Errorf("by file name: %+v", a)
	}
	if a, ok := set.Get("Helper"); !ok || a.Name != "Helper" || !slices.Equal(a.Subagents, []string{"rev"}) {
		t.Errorf("a name Markdown cannot take, by its file's: %+v", a)
	}
	if _, err := os.Stat(index); err != nil {
		t.Fatalf("no index written: %v", err)
	}
	if a, ok := set.Get("lead"); !ok || a.MaxTurns != 0 {
		t.Errorf("lead %+v", a)
	}
	if d := set.LoadDiagnostics(); len(d) != 2 || !strings.Contains(d.String(), "max_turns") || strings.Contains(d.String(), "broken") {
		t.Errorf("the diagnostics of the files read: %v", d)
	}
	// A name no file's head gives is found by reading every file, which
	// reports the broken one too.
	testfile.WriteFiles(t, root, map[string]string{"high/quoted.md": "---\n\"name\": quoted-name\n---\nQ.\n"})
	set = OpenAgents(dirs, LoadOptions{}, "")
	if a, ok := set.Get("quoted-name"); !ok || a.Name != "quoted-name" {
		t.Errorf("quoted-name %+v", a)
	}
	if d := set.LoadDiagnostics().Errors(); !strings.Contains(d.String(), "broken.toml") {
		t.Errorf("after the fallback: %v", d)
	}
	if err := os.Remove(filepath.Join(root, "high", "quoted.md")); err != nil {
		t.Fatal(err)
	}

	// A new set reads the index: rev's files are not read again. A file
	// rewritten to another name is.
	data, err := os.ReadFile(index)
	if err != nil || !strings.Contains(string(data), "review.toml") {
		t.Fatalf("index %s, %v", data, err)
	}
	p := filepath.Join(root, "high", "review.toml")
	if err := os.WriteFile(p, []byte("name = \"critic\"\nmodel = \"inherit\"\ndescription = \"renamed\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, time.Now().Add(time.Hour), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	set = OpenAgents(dirs, LoadOptions{}, index)
	if a, ok := set.Get("critic"); !ok || a.Description != "renamed" {
		t.Errorf("critic = %+v", a)
	}
	if a, ok := set.Get("rev"); !ok || a.Description != "low" {
		t.Errorf("rev now from low = %+v", a)
	}
	if _, ok := set.Get("nobody"); ok {
		t.Error("Get(nobody) found something")
	}
	if set.Len() != 4 {
		t.Errorf("Len = %d, want every agent", set.Len())
	}
}

func TestFileNames(t *testing.T) {
	for _, tt := range []struct {
		path, src string
		want      []string
	}{
		{"a/x.toml", "# c\nname = \"pr-reviewer\"\n[params]\nname = \"no\"\n", []string{"pr-reviewer"}},
		{"a/x.toml", "[sub_agents_config]\nname = \"no\"\n", []string{"x"}},
		{"a/x.toml", "name = 'single'", []string{"single"}},
		{"a/x.md", "---\nname: helper # c\n---\n", []string{"helper"}},
		{"a/x.md", "---\ndescription: d\n---\n", []string{"x"}},
		{"a/x.md", "---\nname: Two Words\n---\n", []string{"x"}},
		{"a/x.md", "no front matter\n", nil},
	} {
		if got := FileNames(tt.path, []byte(tt.src)); !slices.Equal(got, tt.want) {
			t.Errorf("FileNames(%s, %q) = %q, want %q", tt.path, tt.src, got, tt.want)
		}
	}
}

// The index file is the cache's, which anything may have written: any
// content reads without panicking, and what is read is written back as
// it was.
func FuzzReadIndex(f *testing.F) {
	f.Add(indexHeader + "12\t1700000000000000000\t/a/b.md\tb\n")
	f.Add(indexHeader + "1\t2\t/x/y.json\tplan,build\n3\t4\t/x/z.toml\t\n")
	f.Add(indexHeader + "bad line\n\t\t\t\n")
	f.Add("deputy agent index 0\n1\t2\t/p\tn\n")
	f.Fuzz(func(t *testing.T, data string) {
		dir := t.TempDir()
		p := filepath.Join(dir, "index")
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		ix := readIndex(p)
		ix.dirty = true
		q := filepath.Join(dir, "again")
		ix.save(q)
		again := readIndex(q)
		if len(again.files) > len(ix.files) {
			t.Fatalf("read back %d files from %d", len(again.files), len(ix.files))
		}
		for path, e := range again.files {
			if w := ix.files[path]; w.size != e.size || w.mtime != e.mtime || !slices.Equal(w.names, e.names) {
				t.Fatalf("%q: read back %+v, wrote %+v", path, e, w)
			}
		}
	})
}

func FuzzFileNames(f *testing.F) {
	f.Add("a.toml", "name = \"x\"\n")
	f.Add("a.md", "---\nname: y\n---\nbody\n")
	f.Add("a.md", "---\nname: 'unterminated\n---\n")
	f.Fuzz(func(t *testing.T, path, src string) {
		for _, n := range FileNames(path, []byte(src)) {
			if n == "" {
				t.Fatalf("FileNames(%q, %q) gave an empty name", path, src)
			}
		}
	})
}

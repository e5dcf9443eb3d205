package isolate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const treeID = "c821bc0b7a921f80298bb71421c269a6c1767670"

// merge-tree's answers, as git 2.39 writes them: clean, and a content
// conflict (taken from a real run).
var mergeTreeSeeds = []string{
	treeID + "\x00",
	treeID + "\x00\x001\x00f\x00Auto-merging\x00Auto-merging f\n\x00",
	treeID + "\x00100644 de980441c3ab03a8c07dda1ad27b8a11f39deb1e 1\tf\x00100644 0c02cccd4ca03aab5fcf3996660d5c0f5020a107 2\tf\x00100644 797be14d9c200686d9cda5abbcd1361e74767c3d 3\tf\x00\x001\x00f\x00Auto-merging\x00Auto-merging f\n\x001\x00f\x00CONFLICT (contents)\x00CONFLICT (content): Merge conflict in f\n\x00",
	treeID + "\x00100644 de980441c3ab03a8c07dda1ad27b8a11f39deb1e 1\td.txt\x00100644 0c02cccd4ca03aab5fcf3996660d5c0f5020a107 2\td.txt\x00\x001\x00d.txt\x00CONFLICT (modify/delete)\x00CONFLICT (modify/delete): d.txt deleted in deputy/X and modified in 127e. Version 127e of d.txt left in tree.\n\x00",
}

func TestParseMergeTree(t *testing.T) {
	mt, err := parseMergeTree([]byte(mergeTreeSeeds[2]))
	if err != nil {
		t.Fatal(err)
	}
	want := mergeTree{tree: treeID, conflicts: []string{"f"}, stages: map[string]uint8{"f": 0b111}, messages: []mergeMessage{
		{paths: []string{"f"}, typ: "Auto-merging", text: "Auto-merging f"},
		{paths: []string{"f"}, typ: "CONFLICT (contents)", text: "CONFLICT (content): Merge conflict in f"},
	}}
	if diff := cmp.Diff(want, mt, cmp.AllowUnexported(mergeTree{}, mergeMessage{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if k := mt.messages[1].kind(); k != "content" {
		t.Errorf("kind %q", k)
	}
	clean, err := parseMergeTree([]byte(mergeTreeSeeds[0]))
	if err != nil || clean.tree != treeID || len(clean.conflicts) != 0 {
		t.Errorf("clean: %+v, %v", clean, err)
	}
	for _, bad := range []string{"", "nottree\x00", treeID + "\x00100644 x\tf\x00", treeID + "\x00100644 a 9\tf\x00", treeID + "\x00\x005\x00f\x00"} {
		if _, err := parseMergeTree([]byte(bad)); err == nil {
			t.Errorf("parseMergeTree(%q) did not fail", bad)
		}
	}
}

func TestParseNumstat(t *testing.T) {
	got, err := parseNumstat([]byte("12\t3\tsrc/api.go\x00-\t-\timg.png\x000\t0\twith\ttab\x00"))
	if err != nil {
		t.Fatal(err)
	}
	want := []FileChange{{Path: "src/api.go", Added: 12, Removed: 3}, {Path: "img.png", Binary: true}, {Path: "with\ttab"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got[0].String() != "+12 −3 src/api.go" {
		t.Errorf("String() = %q", got[0].String())
	}
	for _, bad := range []string{"x\t1\tf\x00", "1\t1\x00", "-1\t0\tf\x00", "1\t1\t\x00"} {
		if _, err := parseNumstat([]byte(bad)); err == nil {
			t.Errorf("parseNumstat(%q) did not fail", bad)
		}
	}
}

func TestConflictHunks(t *testing.T) {
	text := "a\n<<<<<<< parent\nX\n||||||| base\nB\n=======\nY\n>>>>>>> deputy/x\nc\n<<<<<<<<<< parent\nlong marker\n==========\n>>>>>>>>>> deputy/x\n<<<<<<<not a marker\n<<<<<<< parent\nunterminated"
	want := []Hunk{
		{Line: 2, Text: "<<<<<<< parent\nX\n||||||| base\nB\n=======\nY\n>>>>>>> deputy/x"},
		{Line: 10, Text: "<<<<<<<<<< parent\nlong marker\n==========\n>>>>>>>>>> deputy/x"},
		{Line: 15, Text: "<<<<<<< parent\nunterminated"},
	}
	if diff := cmp.Diff(want, conflictHunks(text)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if h := conflictHunks("no markers\n"); h != nil {
		t.Errorf("hunks in a clean file: %v", h)
	}
}

// merge-tree's output is read from a file names the repository chose:
// any bytes give a result or an error, never a panic, and every conflict
// has the stages it was listed with.
func FuzzParseMergeTree(f *testing.F) {
	for _, s := range mergeTreeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		mt, err := parseMergeTree(out)
		if err != nil {
			return
		}
		if !isObjectID(mt.tree) {
			t.Errorf("tree %q", mt.tree)
		}
		for _, p := range mt.conflicts {
			if mt.stages[p] == 0 || p == "" {
				t.Errorf("conflict %q without stages", p)
			}
		}
	})
}

func FuzzParseNumstat(f *testing.F) {
	f.Add([]byte("12\t3\tsrc/api.go\x00-\t-\timg.png\x00"))
	f.Fuzz(func(t *testing.T, out []byte) {
		files, err := parseNumstat(out)
		if err != nil {
			return
		}
		for _, fc := range files {
			if fc.Path == "" || fc.Added < 0 || fc.Removed < 0 {
				t.Errorf("%+v", fc)
			}
		}
	})
}

// A merged file's text is the repository's: every hunk found begins with
// a <<<<<<< marker at the line it names.
func FuzzConflictHunks(f *testing.F) {
	f.Add("a\n<<<<<<< parent\nX\n=======\nY\n>>>>>>> deputy/x\nc\n")
	f.Add("<<<<<<< parent\nunterminated")
	f.Fuzz(func(t *testing.T, text string) {
		lines := strings.SplitAfter(text, "\n")
		for _, h := range conflictHunks(text) {
			if h.Line < 1 || h.Line > len(lines) || !strings.HasPrefix(lines[h.Line-1], strings.SplitN(h.Text, "\n", 2)[0]) || !isMarker(lines[h.Line-1], '<') {
				t.Errorf("hunk %+v", h)
			}
		}
	})
}

package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/deputyhq/deputy/store"
)

func TestParseSince(t *testing.T) {
	now := time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Time
	}{
		{"90m", now.Add(-90 * time.Minute)},
		{"24h", now.Add(-24 * time.Hour)},
		{"1h30m", now.Add(-90 * time.Minute)},
		{"0s", now},
		{"7d", now.AddDate(0, 0, -7)},
		{"0d", now},
		{" 2d ", now.AddDate(0, 0, -2)},
		{"2025-01-31", time.Date(2025, 1, 31, 0, 0, 0, 0, time.Local)},
		{"2025-01-31 09:30", time.Date(2025, 1, 31, 9, 30, 0, 0, time.Local)},
		{"2025-01-31T09:30:15", time.Date(2025, 1, 31, 9, 30, 15, 0, time.Local)},
		{"2025-01-31T09:00:00Z", time.Date(2025, 1, 31, 9, 0, 0, 0, time.UTC)},
		{"2025-01-31T09:00:00+02:00", time.Date(2025, 1, 31, 7, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		got, err := parseSince(tt.in, now)
		if err != nil {
			t.Errorf("parseSince(%q): %v", tt.in, err)
			continue
		}
		if !got.Equal(tt.want) {
			t.Errorf("parseSince(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestParseSinceErrors(t *testing.T) {
	now := time.Now()
	for _, in := range []string{"", "yesterday", "-5m", "-3d", "7days", "d", "2025-13-01", "2025/01/31", "100001d"} {
		if got, err := parseSince(in, now); err == nil {
			t.Errorf("parseSince(%q) = %v, want an error", in, got)
		} else if !strings.Contains(err.Error(), strings.TrimSpace(in)) {
			t.Errorf("parseSince(%q): error %q does not quote the input", in, err)
		}
	}
}

// FuzzParseSince checks that --since never panics, and that a value it
// accepts as a duration or a day count never lies in the future.
func FuzzParseSince(f *testing.F) {
	for _, s := range []string{"24h", "7d", "90m", "2025-01-31", "2025-01-31T09:00:00Z", "2025-01-31 09:30", "-1d", "9999999999d", "1e3h", ""} {
		f.Add(s)
	}
	now := time.Date(2025, 3, 10, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseSince(s, now)
		if err != nil {
			return
		}
		trimmed := strings.TrimSpace(s)
		if _, derr := time.ParseDuration(trimmed); derr == nil || strings.HasSuffix(trimmed, "d") {
			if got.After(now) {
				t.Errorf("parseSince(%q) = %v, after now", s, got)
			}
		}
		if c := clampToLedger(got); c.Before(ledgerMinTime) || c.After(ledgerMaxTime) {
			t.Errorf("clampToLedger(%v) = %v, outside the ledger's range", got, c)
		}
	})
}

func TestClampToLedger(t *testing.T) {
	far := time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC)
	if got := clampToLedger(far); !got.Equal(ledgerMaxTime) {
		t.Errorf("clampToLedger(2999) = %v, want %v", got, ledgerMaxTime)
	}
	if got := clampToLedger(far).UnixNano(); got <= 0 {
		t.Errorf("clamped time wraps around: UnixNano %d", got)
	}
	early := time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC)
	if got := clampToLedger(early); !got.Equal(ledgerMinTime) {
		t.Errorf("clampToLedger(1000) = %v, want %v", got, ledgerMinTime)
	}
	now := time.Now()
	if got := clampToLedger(now); !got.Equal(now) {
		t.Errorf("clampToLedger(now) changed it to %v", got)
	}
}

func TestBuildTree(t *testing.T) {
	at := func(ms int) time.Time { return time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond) }
	runs := []store.Run{
		{ID: "R", Agent: "lead", Kind: store.KindRoot, StartedAt: at(0)},
		{ID: "A", ParentID: "R", Agent: "a", StartedAt: at(1)},
		{ID: "A1", ParentID: "A", Agent: "a1", StartedAt: at(2)},
		{ID: "B", ParentID: "R", Agent: "b", StartedAt: at(3)},
		// A parent the ledger lost: the run still shows, under the root.
		{ID: "X", ParentID: "gone", Agent: "x", StartedAt: at(4)},
	}
	root := buildTree(runs)
	if root == nil || root.ID != "R" {
		t.Fatalf("root = %+v, want R", root)
	}
	var got []string
	var walk func(n *treeNode, prefix string)
	walk = func(n *treeNode, prefix string) {
		got = append(got, prefix+n.ID)
		for _, c := range n.Children {
			walk(c, prefix+n.ID+">")
		}
	}
	walk(root, "")
	want := []string{"R", "R>A", "R>A>A1", "R>B", "R>X"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("tree = %v, want %v", got, want)
	}
	if buildTree(nil) != nil {
		t.Error("buildTree(nil) is not nil")
	}
	if buildTree([]store.Run{{ID: "C", ParentID: "P"}}) != nil {
		t.Error("a tree without a root run has a root")
	}
}

func TestPrintTreeMarksTheRunAsked(t *testing.T) {
	root := buildTree([]store.Run{
		{ID: "R", Agent: "lead", Kind: store.KindRoot, Status: "ok"},
		{ID: "C", ParentID: "R", Agent: "child", Kind: store.KindSubagent, Status: "error"},
	})
	var b strings.Builder
	printTree(&b, root, "C")
	out := b.String()
	if !strings.Contains(out, "  child *") {
		t.Errorf("the child is not marked:\n%s", out)
	}
	b.Reset()
	printTree(&b, root, "R")
	if strings.Contains(b.String(), "*") {
		t.Errorf("the root is marked, though it heads the tree anyway:\n%s", b.String())
	}
}

package store

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseProcStat feeds arbitrary /proc/<pid>/stat contents to the parser: it must
// not panic, and whatever it accepts must be a one-byte state and a decimal start.
func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte("1234 (deputy) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 98765 20 21"))
	f.Add([]byte("7 (a (b) c) Z 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 1 20"))
	f.Add([]byte(")"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, stat []byte) {
		state, start, ok := parseProcStat(stat)
		if !ok {
			if state != 0 || start != "" {
				t.Fatalf("rejected input returned %q, %q", state, start)
			}
			return
		}
		if !isLetter(state) {
			t.Fatalf("state %q is not a letter", state)
		}
		if _, err := strconv.ParseUint(start, 10, 64); err != nil && !errors.Is(err, strconv.ErrRange) {
			t.Fatalf("start %q is not decimal", start)
		}
		// The start field is the 20th field after the last ')'.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if fields[19] != start {
			t.Fatalf("start %q, field 22 is %q", start, fields[19])
		}
	})
}

// FuzzPrefixEnd checks the range that replaces LIKE in id lookups: a string s has
// the prefix p exactly when p <= s < prefixEnd(p).
func FuzzPrefixEnd(f *testing.F) {
	f.Add("01HZ", "01HZX00000000000000000000A")
	f.Add("a\xff", "a\xff\xff")
	f.Add("\xff\xff", "\xff\xff\x00")
	f.Add("", "anything")
	f.Add("ab", "ac")
	f.Fuzz(func(t *testing.T, p, s string) {
		end, ok := prefixEnd(p)
		inRange := s >= p && (!ok || s < end)
		if inRange != strings.HasPrefix(s, p) {
			t.Fatalf("prefix %q, string %q: in range [%q, %q) = %v, HasPrefix = %v", p, s, p, end, inRange, !inRange)
		}
		if ok && end <= p {
			t.Fatalf("end %q is not above prefix %q", end, p)
		}
	})
}

// FuzzEscapeURIPath checks that any path survives the trip into an SQLite URI: the
// escaped form has no character that ends the path, and decoding gives it back.
func FuzzEscapeURIPath(f *testing.F) {
	for _, p := range []string{"/tmp/deputy.db", "/a?b#c%d.db", "%41", "rel/x.db", "/ü/✓.db"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, path string) {
		esc := escapeURIPath(path)
		if strings.ContainsAny(esc, "?#") {
			t.Fatalf("escaped %q still contains ? or #: %q", path, esc)
		}
		if got := percentDecode(esc); got != path {
			t.Fatalf("decode(escape(%q)) = %q", path, got)
		}
	})
}

// percentDecode undoes %HH the way SQLite reads a URI path.
func percentDecode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// FuzzGetRun looks up arbitrary id prefixes and tails in a small ledger and compares the
// answer with a direct search of the known ids.
func FuzzGetRun(f *testing.F) {
	ids := []string{
		"01HZX00000000000000000000A", "01HZX00000000000000000000B", "01HZY00000000000000000000C",
		"custom-id", "custom-id-2", "Ünïcode", "a\xffb", "%_like", "lower", "01HZY0000000000000000TAIL9",
	}
	for _, seed := range []string{"01HZX", "01hzy", "custom", "custom-id", "%", "_", "a\xff", "", " lower ", "LOWER", "Ü", "TAIL9", "tail9", "0A", "*", "ïcode"} {
		f.Add(seed)
	}
	s, err := Open(context.Background(), filepath.Join(f.TempDir(), "fuzz.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	for _, id := range ids {
		if err := s.CreateRun(context.Background(), &Run{ID: id}); err != nil {
			f.Fatal(err)
		}
	}
	withSuffix := func(p string) (out []string) {
		if strings.ContainsAny(p, "*?[]\x00") || !utf8.ValidString(p) {
			return nil
		}
		for _, id := range ids {
			if strings.HasSuffix(id, p) {
				out = append(out, id)
			}
		}
		return out
	}
	withPrefix := func(p string) (out []string) {
		for _, id := range ids {
			if strings.HasPrefix(id, p) {
				out = append(out, id)
			}
		}
		return out
	}
	f.Fuzz(func(t *testing.T, q string) {
		got, err := s.GetRun(context.Background(), q)
		q = strings.TrimSpace(q)
		var want []string
		switch {
		case q == "":
		case slices.Contains(ids, q):
			want = []string{q}
		default:
			want = withPrefix(q)
			if len(want) == 0 && strings.ToUpper(q) != q {
				want = withPrefix(strings.ToUpper(q))
			}
			if len(want) == 0 {
				want = withSuffix(q)
			}
			if len(want) == 0 && strings.ToUpper(q) != q {
				want = withSuffix(strings.ToUpper(q))
			}
		}
		switch len(want) {
		case 0:
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("GetRun(%q) = %v, %v; want not found", q, got, err)
			}
		case 1:
			if err != nil || got.ID != want[0] {
				t.Fatalf("GetRun(%q) = %v, %v; want %q", q, got, err, want[0])
			}
		default:
			if !errors.Is(err, ErrAmbiguous) {
				t.Fatalf("GetRun(%q) = %v, %v; want ambiguous among %q", q, got, err, want)
			}
		}
	})
}

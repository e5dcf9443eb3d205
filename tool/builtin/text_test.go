package builtin

import (
	"bufio"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadLine(t *testing.T) {
	type line struct {
		Text string
		Cut  bool
	}
	tests := []struct {
		in   string
		max  int
		want []line
	}{
		{"a\nb\n", 10, []line{{"a", false}, {"b", false}}},
		{"a\r\nb", 10, []line{{"a", false}, {"b", false}}},
		{"\n\n", 10, []line{{"", false}, {"", false}}},
		{"12345\n", 5, []line{{"12345", false}}},
		{"12345\r\n", 5, []line{{"12345", false}}},
		{"123456\nx\n", 5, []line{{"12345", true}, {"x", false}}},
		{"123456", 5, []line{{"12345", true}}},
		{"1234\r\r\n", 5, []line{{"1234\r", false}}},
		{strings.Repeat("z", 100000) + "\nend", 3, []line{{"zzz", true}, {"end", false}}},
		{"", 5, nil},
	}
	for _, tt := range tests {
		// A small buffer forces the ErrBufferFull path on long lines.
		br := bufio.NewReaderSize(strings.NewReader(tt.in), 16)
		var got []line
		var buf []byte
		for range 100 {
			b, cut, err := readLine(br, tt.max, buf)
			buf = b[:0]
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, line{string(b), cut})
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("readLine(%.20q, %d) (-want +got):\n%s", tt.in, tt.max, diff)
		}
	}
}

func TestOutputBuffer(t *testing.T) {
	b := newOutputBuffer(10)
	b.Write([]byte("abc"))
	if got := b.String(); got != "abc" {
		t.Errorf("small output = %q", got)
	}
	b = newOutputBuffer(10)
	for _, c := range "0123456789ABCDEFGHIJ" {
		b.Write([]byte(string(c)))
	}
	if got, want := b.String(), "01234\n[... 10 bytes of output omitted ...]\nFGHIJ"; got != want {
		t.Errorf("long output = %q, want %q", got, want)
	}
	// Writers at once: the race detector checks, the count must add up.
	b = newOutputBuffer(1 << 20)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				b.Write([]byte("xy"))
			}
		}()
	}
	wg.Wait()
	if n := len(b.String()); n != 800 {
		t.Errorf("concurrent writes kept %d bytes, want 800", n)
	}
}

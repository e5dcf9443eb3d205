package value

import (
	"math"
	"testing"
)

// Numbers as the YAML, TOML and JSON decoders give them, and what is not
// one.
func TestNumber(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want float64
		ok   bool
	}{
		{3, 3, true}, {int64(-2), -2, true}, {uint64(1 << 63), 1 << 63, true}, {2.5, 2.5, true},
		{"3", 0, false}, {nil, 0, false}, {true, 0, false}, {int32(1), 0, false},
	} {
		if n, ok := Number(tc.in); n != tc.want || ok != tc.ok {
			t.Errorf("Number(%#v) = %v, %v; want %v, %v", tc.in, n, ok, tc.want, tc.ok)
		}
	}
	if n, ok := Number(math.NaN()); !ok || !math.IsNaN(n) {
		t.Errorf("Number(NaN) = %v, %v: a float is given back as it is", n, ok)
	}
}

package llm_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/deputyhq/deputy/llm"
)

// FuzzRetryAfter: any header value gives a delay that is not negative, and
// a value that is not a number or an HTTP date gives none.
func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"", "0", "1", "1.5", "-3", "120", "Wed, 21 Oct 2015 07:28:00 GMT", "soon", "1e400", "NaN", "+Inf", "9999999999999"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string, ms bool) {
		if d := llm.ParseRetryAfter(v, ms, now); d < 0 {
			t.Fatalf("ParseRetryAfter(%q, %v) = %v", v, ms, d)
		}
		h := http.Header{}
		h.Set("Retry-After", v)
		h.Set("retry-after-ms", v)
		if d := llm.RetryAfterHeader(h, now); d < 0 {
			t.Fatalf("RetryAfterHeader(%q) = %v", v, d)
		}
	})
}

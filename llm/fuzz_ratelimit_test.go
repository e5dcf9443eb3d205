package llm

import (
	"net/http"
	"testing"
	"time"
)

// FuzzRateLimitHeaders: whatever rate-limit headers a provider (or a proxy
// in front of it) sends, the count read is never negative, and the reset
// never lies further ahead than the longest pause deputy takes from a
// server (maxRetryAfter), so that a bogus header cannot hold every call of
// the process for years; a reset given as a delay is never in the past.
func FuzzRateLimitHeaders(f *testing.F) {
	for _, s := range [][3]string{
		{"x-ratelimit-remaining-requests", "0", "6m0s"},
		{"x-ratelimit-remaining-requests", "59", "1s"},
		{"anthropic-ratelimit-requests-remaining", "0", "2026-01-01T00:00:30Z"},
		{"anthropic-ratelimit-requests-remaining", "0", "9999-12-31T23:59:59Z"},
		{"anthropic-ratelimit-requests-remaining", "3", "1970-01-01T00:00:00Z"},
		{"ratelimit-remaining", "0", "17"},
		{"ratelimit-remaining", "0", "0.25"},
		{"ratelimit-remaining", "0", "1e10"},
		{"ratelimit-remaining", "0", "+Inf"},
		{"ratelimit-remaining", "0", "NaN"},
		{"ratelimit-remaining", "0", "-5"},
		{"ratelimit-remaining", "0", "2562047h"},
		{"ratelimit-remaining", "-1", "1"},
		{"ratelimit-remaining", "many", "soon"},
		{"ratelimit-remaining", " 0 ", " 3 "},
		{"x-ratelimit-remaining-tokens", "0", "1m30s"},
		{"anthropic-ratelimit-tokens-remaining", "0", "9999-12-31T23:59:59Z"},
		{"anthropic-ratelimit-output-tokens-remaining", "0", "soon"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, name, remaining, reset string) {
		h := http.Header{}
		h.Set(name, remaining)
		h.Set("x-ratelimit-reset-requests", reset)
		h.Set("anthropic-ratelimit-requests-reset", reset)
		h.Set("ratelimit-reset", reset)
		h.Set("x-ratelimit-reset-tokens", reset)
		h.Set("anthropic-ratelimit-tokens-reset", reset)
		// A spent token window pauses from a moment after now until no
		// further than the longest pause deputy takes.
		if until, spent := tokenWindowSpent(h, now); spent != !until.IsZero() || spent && (!until.After(now) || until.After(now.Add(maxRetryAfter))) {
			t.Fatalf("token window %q=%q reset %q: spent %v until %v", name, remaining, reset, spent, until)
		}
		n, at, ok := rateLimitHeaders(h, now)
		if !ok {
			if n != 0 || !at.IsZero() {
				t.Fatalf("nothing read, yet %d, %v", n, at)
			}
			return
		}
		if n < 0 {
			t.Fatalf("remaining %d", n)
		}
		if at.After(now.Add(maxRetryAfter)) {
			t.Fatalf("reset %q: %v, more than %v ahead", reset, at, maxRetryAfter)
		}
		if _, err := time.Parse(time.RFC3339, reset); err != nil && !at.IsZero() && at.Before(now) {
			t.Fatalf("reset %q: %v, in the past", reset, at)
		}
	})
}

package llm

import (
	"net/http"
	"time"
	"unicode/utf8"
)

// CutUTF8 shortens s to at most n bytes without splitting a character.
func CutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ClipMessage bounds text taken from a server (an error message) to n
// bytes, marking a cut with "…", so a huge error page cannot flood a log.
func ClipMessage(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return CutUTF8(s, n) + "…"
}

// RetryAfterHeader reads the delay a server asked for in its response
// headers: retry-after-ms first (the finer one), then retry-after.
func RetryAfterHeader(h http.Header, now time.Time) time.Duration {
	if d := ParseRetryAfter(h.Get("retry-after-ms"), true, now); d > 0 {
		return d
	}
	return ParseRetryAfter(h.Get("retry-after"), false, now)
}

package gemini

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzBaseURL: any base URL builds a provider whose normalized base is an
// absolute http(s) URL ending in "/", or is refused with an error that
// never names the key.
func FuzzBaseURL(f *testing.F) {
	for _, s := range []string{"", "https://generativelanguage.googleapis.com", "https://generativelanguage.googleapis.com/v1beta/", "http://127.0.0.1:9/", "ftp://x", "://", "http://", " http://h "} {
		f.Add(s)
	}
	const key = "gm-fuzz-key-0123456789"
	f.Fuzz(func(t *testing.T, base string) {
		p, err := New(Options{APIKey: key, BaseURL: base})
		if err != nil {
			if strings.Contains(err.Error(), key) {
				t.Fatalf("error names the key: %v", err)
			}
			return
		}
		if p == nil {
			t.Fatal("nil provider without error")
		}
		n := normalizeBaseURL(base)
		u, err := url.Parse(n)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || !strings.HasSuffix(n, "/") {
			t.Fatalf("accepted base %q normalizes to %q", base, n)
		}
	})
}

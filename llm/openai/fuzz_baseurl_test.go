package openai_test

import (
	"strings"
	"testing"

	"github.com/deputyhq/deputy/llm/openai"
)

// FuzzBaseURL: any base URL builds a provider or is refused with an error
// that names the provider and never the key.
func FuzzBaseURL(f *testing.F) {
	for _, s := range []string{"", "https://api.openai.com/v1/", "http://127.0.0.1:11434/v1", "ftp://x", "://", "http://", "localhost:8000", " https://h/v1 ", "http://[::1]:80/v1/"} {
		f.Add(s)
	}
	const key = "sk-fuzz-openai-0123456789"
	f.Fuzz(func(t *testing.T, base string) {
		p, err := openai.New(openai.Options{Name: "custom", APIKey: key, BaseURL: base})
		if err != nil {
			if strings.Contains(err.Error(), key) || !strings.HasPrefix(err.Error(), "custom: ") {
				t.Fatalf("New(%q) error %q", base, err)
			}
			return
		}
		if p == nil || p.Name() != "custom" {
			t.Fatalf("New(%q) = %v", base, p)
		}
	})
}

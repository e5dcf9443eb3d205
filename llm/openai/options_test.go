package openai_test

import (
	"strings"
	"testing"

	"github.com/deputyhq/deputy/llm/openai"
)

func TestOllamaBaseURL(t *testing.T) {
	tests := []struct{ host, want string }{
		{"", "http://localhost:11434/v1/"},
		{"  ", "http://localhost:11434/v1/"},
		{"localhost:11434", "http://localhost:11434/v1/"},
		{"0.0.0.0", "http://0.0.0.0:11434/v1/"},
		{"gpu-box", "http://gpu-box:11434/v1/"},
		{"gpu-box:9000", "http://gpu-box:9000/v1/"},
		{"gpu-box:9000/", "http://gpu-box:9000/v1/"},
		{"::1", "http://[::1]:11434/v1/"},
		{"[::1]", "http://[::1]:11434/v1/"},
		{"[::1]:8080", "http://[::1]:8080/v1/"},
		{"http://gpu-box:8080", "http://gpu-box:8080/v1/"},
		{"https://ollama.example.com", "https://ollama.example.com/v1/"},
		{"http://host:11434/v1", "http://host:11434/v1/"},
		{"http://host:11434/v1/", "http://host:11434/v1/"},
		{"http://host/proxy/", "http://host/proxy/v1/"},
	}
	for _, tt := range tests {
		if got := openai.OllamaBaseURL(tt.host); got != tt.want {
			t.Errorf("OllamaBaseURL(%q) = %q, want %q", tt.host, got, tt.want)
		}
	}
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{
		"OPENAI_API_KEY":  " sk-env ",
		"OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
		"OLLAMA_HOST":     "box:1234",
	}
	getenv := func(k string) string { return env[k] }
	o := openai.FromEnv(getenv)
	if o.Name != "openai" || o.APIKey != "sk-env" || o.BaseURL != "http://127.0.0.1:9/v1" {
		t.Errorf("FromEnv = %+v", o)
	}
	ol := openai.OllamaFromEnv(getenv)
	if ol.Name != "ollama" || ol.APIKey != "" || ol.BaseURL != "http://box:1234/v1/" {
		t.Errorf("OllamaFromEnv = %+v", ol)
	}
	empty := openai.FromEnv(func(string) string { return "" })
	p, err := openai.New(empty)
	if err != nil || p.Name() != "openai" {
		t.Errorf("New(FromEnv of nothing) = %v, %v", p, err)
	}
}

func FuzzOllamaBaseURL(f *testing.F) {
	for _, s := range []string{"", "localhost", "0.0.0.0:11434", "[::1]", "http://h:1/v1", "https://x.example/p/", "a:b:c", "http://", "://x", "h/p/q"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		got := openai.OllamaBaseURL(host)
		if !strings.HasSuffix(got, "/v1/") || !strings.Contains(got, "://") {
			t.Fatalf("OllamaBaseURL(%q) = %q: want a URL ending in /v1/", host, got)
		}
		// Whatever the value, building a provider must not panic.
		_, _ = openai.New(openai.Options{BaseURL: got})
	})
}

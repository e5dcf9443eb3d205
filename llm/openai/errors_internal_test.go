package openai

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestErrorMessage(t *testing.T) {
	tests := []struct{ body, want string }{
		{`{"error":{"message":"bad key","type":"invalid_request_error","code":"invalid_api_key"}}`, "bad key"},
		{`{"error":{"type":"server_error"}}`, "server_error"},
		{`{"error":"model not found"}`, "model not found"},
		{`{"message":"plain message"}`, "plain message"},
		{`{"detail":"x"}`, ""},
		{"", ""},
		{"<html>oops</html>", ""},
		{"upstream timed out\n  retry later", "upstream timed out retry later"},
		{`{"error":{"message":"` + strings.Repeat("é", 400) + `"}}`, strings.Repeat("é", 250) + "…"},
	}
	for _, tt := range tests {
		if got := errorMessage([]byte(tt.body)); got != tt.want {
			t.Errorf("errorMessage(%.40q) = %.60q, want %.60q", tt.body, got, tt.want)
		}
	}
}

func FuzzErrorMessage(f *testing.F) {
	f.Add([]byte(`{"error":{"message":"m","type":"t"}}`))
	f.Add([]byte(`{"error":"s"}`))
	f.Add([]byte(`{"message":"m"}`))
	f.Add([]byte("<html></html>"))
	f.Add([]byte("\xff\xfe broken utf8"))
	f.Fuzz(func(t *testing.T, body []byte) {
		msg := errorMessage(body)
		if len(msg) > maxMessage+len("…") {
			t.Fatalf("message of %d bytes exceeds the bound", len(msg))
		}
		if strings.ContainsAny(msg, "\n\r") {
			t.Fatalf("message spans lines: %q", msg)
		}
		if utf8.ValidString(string(body)) && !utf8.ValidString(msg) {
			t.Fatalf("clipping broke UTF-8: %q", msg)
		}
	})
}

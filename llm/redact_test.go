package llm_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/llm"
)

func TestSecretsRedactWholeTokens(t *testing.T) {
	s := llm.NewSecrets("x", "sk-live-123", "", "  ")
	for _, c := range []struct{ in, want string }{
		// A one-letter key must not mangle words that contain the letter.
		{"example text", "example text"},
		{"key x here", "key [redacted] here"},
		{"x", "[redacted]"},
		{`{"key":"x"}`, `{"key":"[redacted]"}`},
		{"Bearer sk-live-123.", "Bearer [redacted]."},
		{"sk-live-1234 is another key", "sk-live-1234 is another key"},
		{"a=sk-live-123;b=sk-live-123", "a=[redacted];b=[redacted]"},
		{"xsk-live-123", "xsk-live-123"},
		{"é sk-live-123é", "é sk-live-123é"},
	} {
		if got := s.Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := (*llm.Secrets)(nil).Redact("x"); got != "x" {
		t.Errorf("nil Secrets redacted: %q", got)
	}
}

func TestSecretsHeaderValue(t *testing.T) {
	s := llm.NewSecrets().WithCredentials("", map[string]string{"Authorization": "Bearer tok-abcdefgh"})
	if got := s.Redact("got Bearer tok-abcdefgh and tok-abcdefgh"); got != "got [redacted] and [redacted]" {
		t.Errorf("got %q", got)
	}
}

func TestSecretsError(t *testing.T) {
	s := llm.NewSecrets("sk-live-123")
	inner := errors.New("dial: sk-live-123 refused")
	e := &llm.Error{Kind: llm.KindRateLimited, Provider: "p", Status: 429, Message: "echo sk-live-123", Err: inner}
	got := s.Error(fmt.Errorf("call: %w", e))
	if strings.Contains(got.Error(), "sk-live-123") {
		t.Fatalf("secret in %q", got.Error())
	}
	var le *llm.Error
	if !errors.As(got, &le) || le.Kind != llm.KindRateLimited || le.Status != 429 {
		t.Fatalf("classification lost: %#v", got)
	}
	if strings.Contains(le.Message, "sk-live-123") || strings.Contains(le.Err.Error(), "sk-live-123") {
		t.Fatalf("secret reachable by unwrapping: %q / %q", le.Message, le.Err)
	}
	if errors.Unwrap(le.Err) != nil {
		t.Fatalf("the cut chain still reaches the original error")
	}
	// Cancellation stays recognisable.
	c := s.Error(&llm.Error{Kind: llm.KindCanceled, Err: fmt.Errorf("sk-live-123: %w", context.Canceled)})
	if !errors.Is(c, context.Canceled) || !errors.Is(c, llm.ErrCanceled) {
		t.Fatalf("cancellation lost: %v", c)
	}
	// An error without secrets is returned as is.
	plain := errors.New("nothing here")
	if s.Error(plain) != plain {
		t.Fatal("clean error was replaced")
	}
}

func TestRedactURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"http://u:pw@host/v1", "http://u:xxxxx@host/v1"},
		{"ftp://u:pw@host", "ftp://u:xxxxx@host"},
		{"http://host/v1", "http://host/v1"},
		// Does not parse (bad escape): the whole userinfo goes.
		{"http://u:p@ss%zz@host/", "http://xxxxx@host/"},
		{"not a url %zz", "not a url %zz"},
	} {
		if got := llm.RedactURL(c.in); got != c.want {
			t.Errorf("RedactURL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

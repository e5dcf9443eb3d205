package llm

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Redacted replaces a secret in text that leaves an adapter.
const Redacted = "[redacted]"

// Secrets is the set of strings that must never leave deputy in an error, an
// event, a log line or the ledger: API keys and the values of configured
// request headers. Every adapter passes its errors through Error before
// returning them, so what a server echoes back (some echo the request's
// headers in an error body) is scrubbed at one point, before anything can
// print or record it.
//
// A secret is replaced only where it stands as a whole token, not inside a
// longer word: a one-letter key "x" leaves "example" alone. The nil *Secrets
// redacts nothing.
type Secrets struct {
	values []string
}

// NewSecrets returns the set of the given non-empty values (surrounding
// spaces ignored).
func NewSecrets(values ...string) *Secrets {
	return (*Secrets)(nil).With(values...)
}

// With returns a set holding s's values and the given ones; s is unchanged.
// A header value such as "Bearer KEY" adds both itself and each of its
// words, so the key is caught when a server echoes it alone.
func (s *Secrets) With(values ...string) *Secrets {
	out := &Secrets{}
	if s != nil {
		out.values = append(out.values, s.values...)
	}
	add := func(v string) {
		v = strings.TrimSpace(v)
		if v == "" {
			return
		}
		for _, have := range out.values {
			if have == v {
				return
			}
		}
		out.values = append(out.values, v)
	}
	for _, v := range values {
		add(v)
		for _, w := range strings.Fields(v) {
			// "Bearer" itself is no secret; the words that matter are long.
			if len(w) >= 8 {
				add(w)
			}
		}
	}
	// Longest first, so that "Bearer KEY" is replaced whole before KEY.
	for i := 1; i < len(out.values); i++ {
		for j := i; j > 0 && len(out.values[j]) > len(out.values[j-1]); j-- {
			out.values[j], out.values[j-1] = out.values[j-1], out.values[j]
		}
	}
	return out
}

// WithCredentials returns a set holding s's values, an adapter's API key
// and the values of its extra headers.
func (s *Secrets) WithCredentials(key string, headers map[string]string) *Secrets {
	vals := []string{key}
	for _, v := range headers {
		vals = append(vals, v)
	}
	return s.With(vals...)
}

// Len is the number of secrets held.
func (s *Secrets) Len() int {
	if s == nil {
		return 0
	}
	return len(s.values)
}

// Redact returns text with every whole-token occurrence of a secret replaced
// by Redacted.
func (s *Secrets) Redact(text string) string {
	if s == nil {
		return text
	}
	for _, v := range s.values {
		text = replaceToken(text, v)
	}
	return text
}

// replaceToken replaces the occurrences of v in text that are not part of a
// longer token.
func replaceToken(text, v string) string {
	if !strings.Contains(text, v) {
		return text
	}
	var b strings.Builder
	rest := text
	for {
		i := strings.Index(rest, v)
		if i < 0 {
			b.WriteString(rest)
			return b.String()
		}
		before, _ := utf8.DecodeLastRuneInString(rest[:i])
		after, _ := utf8.DecodeRuneInString(rest[i+len(v):])
		whole := (i == 0 || !tokenRune(before)) && (i+len(v) == len(rest) || !tokenRune(after))
		if whole {
			b.WriteString(rest[:i])
			b.WriteString(Redacted)
			rest = rest[i+len(v):]
			continue
		}
		// Not a token: keep its first rune and look further.
		_, size := utf8.DecodeRuneInString(rest[i:])
		b.WriteString(rest[:i+size])
		rest = rest[i+size:]
	}
}

// tokenRune reports whether r continues a word: a secret next to one is part
// of a longer word and left alone. Punctuation ("=", quotes, "."), spaces and
// the text's ends delimit a token.
func tokenRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_'
}

// Error returns err with every secret redacted from its text. An *Error
// keeps its kind, status and Retry-After; a chain that held a secret is cut
// (the cut chain still matches context.Canceled and
// context.DeadlineExceeded), since a caller unwrapping it could otherwise
// print the secret.
func (s *Secrets) Error(err error) error {
	if err == nil || s.Len() == 0 {
		return err
	}
	var e *Error
	if !errors.As(err, &e) {
		text := err.Error()
		if red := s.Redact(text); red != text {
			return &redactedError{text: red, ctx: ctxErr(err)}
		}
		return err
	}
	out := *e
	out.Message = s.Redact(e.Message)
	if e.Err != nil {
		text := e.Err.Error()
		if red := s.Redact(text); red != text {
			out.Err = &redactedError{text: red, ctx: ctxErr(e.Err)}
		}
	}
	if err != e {
		// A wrapper around the *Error: its own text may repeat the secret.
		text := err.Error()
		if red := s.Redact(text); red != text {
			return &redactedError{text: red, ctx: ctxErr(err), llmErr: &out}
		}
	}
	return &out
}

// RedactURL returns a URL for a message: the password of its userinfo
// masked (url.URL.Redacted). A string that does not even parse loses its
// whole userinfo, since a mistyped URL may still carry credentials.
func RedactURL(s string) string {
	if u, err := url.Parse(s); err == nil {
		return u.Redacted()
	}
	if i := strings.LastIndex(s, "@"); i >= 0 {
		if j := strings.Index(s, "://"); j >= 0 && j < i {
			return s[:j+3] + "xxxxx" + s[i:]
		}
	}
	return s
}

// redactedError stands for an error whose text held a secret.
type redactedError struct {
	text   string
	ctx    error
	llmErr *Error
}

func (r *redactedError) Error() string { return r.text }

func (r *redactedError) Unwrap() []error {
	var out []error
	if r.ctx != nil {
		out = append(out, r.ctx)
	}
	if r.llmErr != nil {
		out = append(out, r.llmErr)
	}
	return out
}

func ctxErr(err error) error {
	switch {
	case errors.Is(err, context.Canceled):
		return context.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return context.DeadlineExceeded
	}
	return nil
}

// Package live shows a running delegation tree to a person: as a live,
// redrawn tree on a terminal (View) or as plain lines (Plain), both fed by
// the engine's events.
package live

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/deputyhq/deputy/approval"
	"github.com/deputyhq/deputy/llm"
)

// ShortIDLen is how many trailing characters of a run id name it on
// screen. A run id is a ULID: its first ten characters are a timestamp
// shared by every run of a tree, its tail is random, so the tail is what
// tells runs apart (and what `deputy runs show` accepts as an abbreviation).
const ShortIDLen = 6

// ShortID is the random tail of a run id.
func ShortID(id string) string {
	if len(id) <= ShortIDLen {
		return id
	}
	return id[len(id)-ShortIDLen:]
}

// Excerpt is s on one line (OneLine), at most n bytes (cut on a character
// boundary, marked with "…").
func Excerpt(s string, n int) string {
	return llm.ClipMessage(OneLine(s), n)
}

// OneLine is s on one line, whitespace collapsed, its control characters
// written out (approval.Printable): what a model wrote, a task, its
// thinking, its task list, shows on a person's terminal as text, never as
// an escape sequence that would move the cursor over an approval the
// person is reading.
func OneLine(s string) string {
	return strings.Join(strings.Fields(approval.Printable(s)), " ")
}

// tail is the last n bytes of s at most, cut on a character boundary.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// Round shows a duration with few digits: milliseconds below a second,
// then hundredths of seconds.
func Round(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(10 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

// USD shows an amount of US dollars to the hundredth of a cent ("$0.0123"),
// or "-" when it is unknown (nil: a model without a price was called).
func USD(usd *float64) string {
	if usd == nil {
		return "-"
	}
	return fmt.Sprintf("$%.4f", *usd)
}

package llmtest

import "unicode/utf8"

// splitText cuts s into at most n pieces of about equal length, on rune
// boundaries so every piece is valid UTF-8 on its own (a JSON string in a
// stream chunk must be). Text of two runes or more always gives at least
// two pieces, so clients are made to reassemble; empty text gives none.
func splitText(s string, n int) []string {
	runes := utf8.RuneCountInString(s)
	if runes == 0 {
		return nil
	}
	n = max(1, min(n, runes))
	per := (runes + n - 1) / n
	pieces := make([]string, 0, n)
	start, count := 0, 0
	for i := range s {
		if count == per {
			pieces = append(pieces, s[start:i])
			start, count = i, 0
		}
		count++
	}
	return append(pieces, s[start:])
}

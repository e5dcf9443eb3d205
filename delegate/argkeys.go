package delegate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// nearMissError is an argument key that differs from one of the tool's
// fields only by case or separators ("allowedTools", "Label",
// "task-prompt").
type nearMissError struct{ Key, Field string }

func (e *nearMissError) Error() string {
	return fmt.Sprintf("unknown field `%s` (the field is `%s`)", e.Key, e.Field)
}

// checkArgKeys refuses a near miss among the keys of a tool call's
// arguments. Keys are the schema's names, matched exactly, as a provider's
// schema check matches them; an unknown key is otherwise ignored. A near
// miss is not: encoding/json would either take it case-insensitively for
// the field or drop it, and a dropped "allowedTools" would give a
// sub-agent every tool of its caller instead of the few it asked for.
// Arguments that are not a JSON object are left to the decoder's own
// error.
func checkArgKeys(raw json.RawMessage, fields ...string) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return nil
	}
	var miss *nearMissError
	for key := range obj {
		if contains(fields, key) {
			continue
		}
		for _, f := range fields {
			if strings.EqualFold(stripSeparators(key), stripSeparators(f)) && (miss == nil || key < miss.Key) {
				// The smallest key, so that the message does not depend on
				// the map's order.
				miss = &nearMissError{Key: key, Field: f}
			}
		}
	}
	if miss != nil {
		return miss
	}
	return nil
}

// stripSeparators is a key without the separators a near miss may add or
// drop. Case is compared by strings.EqualFold, with Unicode's simple
// folding, which covers what encoding/json folds ("ſ" is "s", the Kelvin
// sign "k").
func stripSeparators(k string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '_', '-', ' ', '.':
			return -1
		}
		return r
	}, k)
}

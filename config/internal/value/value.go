// Package value reads the values of decoded configuration files (YAML,
// TOML and JSON, as their decoders give them) for config and its origin
// packages.
package value

// Number is the number v holds: an integer of any of the decoders'
// types, or a float; ok is false for anything else.
func Number(v any) (n float64, ok bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

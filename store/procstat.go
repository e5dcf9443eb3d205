package store

import "bytes"

// parseProcStat reads the state (field 3) and start time (field 22, clock ticks since
// boot) from the contents of /proc/<pid>/stat. The command name (field 2) is in
// parentheses and may itself contain spaces and parentheses, so the fields are
// counted from the last ')'.
func parseProcStat(stat []byte) (state byte, start string, ok bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, "", false
	}
	fields := bytes.Fields(stat[i+1:])
	// fields[0] is field 3 (state), so field 22 is fields[19].
	// The state is one letter (R, S, D, Z, T, I, ...).
	if len(fields) < 20 || len(fields[0]) != 1 || !isLetter(fields[0][0]) {
		return 0, "", false
	}
	st := fields[19]
	for _, c := range st {
		if c < '0' || c > '9' {
			return 0, "", false
		}
	}
	return fields[0][0], string(st), true
}

func isLetter(c byte) bool { return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }

package isolate

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// mergeTree is the answer of `git merge-tree --write-tree -z`.
type mergeTree struct {
	tree string
	// conflicts are the conflicting paths, in git's order, once each.
	conflicts []string
	// stages has bit s-1 set for each stage s (1 base, 2 ours, 3 theirs)
	// a conflicting path has.
	stages   map[string]uint8
	messages []mergeMessage
}

// mergeMessage is one of merge-tree's informational messages.
type mergeMessage struct {
	paths []string
	typ   string // "Auto-merging", "CONFLICT (contents)", ...
	text  string
}

func (m mergeMessage) isConflict() bool { return strings.HasPrefix(m.typ, "CONFLICT") }

func (m mergeMessage) names(path string) bool {
	for _, p := range m.paths {
		if p == path {
			return true
		}
	}
	return false
}

// kind is the conflict's name inside "CONFLICT (...)": content,
// modify/delete, add/add, binary, ...
func (m mergeMessage) kind() string {
	k := strings.TrimPrefix(m.typ, "CONFLICT")
	k = strings.TrimSpace(k)
	k = strings.TrimSuffix(strings.TrimPrefix(k, "("), ")")
	if k == "contents" {
		return "content"
	}
	if k == "" {
		return "conflict"
	}
	return k
}

// parseMergeTree reads merge-tree's -z output: the merged tree's id, then
// one "mode id stage\tpath" per conflicting stage, an empty field, and the
// messages, each "N, N paths, type, text" (git-merge-tree(1), OUTPUT).
func parseMergeTree(out []byte) (mergeTree, error) {
	fields := bytes.Split(out, []byte{0})
	if len(fields) == 0 || !isObjectID(string(fields[0])) {
		return mergeTree{}, errors.New("no tree id in its output")
	}
	mt := mergeTree{tree: string(fields[0]), stages: map[string]uint8{}}
	i := 1
	for ; i < len(fields) && len(fields[i]) > 0; i++ {
		info, path, ok := strings.Cut(string(fields[i]), "\t")
		parts := strings.Fields(info)
		if !ok || len(parts) != 3 || path == "" {
			return mergeTree{}, fmt.Errorf("a conflicted file entry %q", fields[i])
		}
		stage, err := strconv.Atoi(parts[2])
		if err != nil || stage < 1 || stage > 3 {
			return mergeTree{}, fmt.Errorf("a conflicted file entry %q", fields[i])
		}
		if _, seen := mt.stages[path]; !seen {
			mt.conflicts = append(mt.conflicts, path)
		}
		mt.stages[path] |= 1 << (stage - 1)
	}
	for i++; i < len(fields) && len(fields[i]) > 0; {
		n, err := strconv.Atoi(string(fields[i]))
		if err != nil || n < 0 || n > len(fields)-i-3 {
			return mergeTree{}, fmt.Errorf("a message's path count %q", fields[i])
		}
		msg := mergeMessage{typ: string(fields[i+n+1]), text: strings.TrimRight(string(fields[i+n+2]), "\n")}
		for _, p := range fields[i+1 : i+1+n] {
			msg.paths = append(msg.paths, string(p))
		}
		mt.messages = append(mt.messages, msg)
		i += n + 3
	}
	return mt, nil
}

// isObjectID is a SHA-1 or SHA-256 id in hex.
func isObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// parseNumstat reads `git diff-tree -r -z --numstat --no-renames`: one
// "added\tremoved\tpath" per file, "-\t-\tpath" for a binary one.
func parseNumstat(out []byte) ([]FileChange, error) {
	var files []FileChange
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		parts := strings.SplitN(string(rec), "\t", 3)
		if len(parts) != 3 || parts[2] == "" {
			return nil, fmt.Errorf("isolate: git diff-tree --numstat: a record %q", rec)
		}
		f := FileChange{Path: parts[2]}
		if parts[0] == "-" && parts[1] == "-" {
			f.Binary = true
		} else {
			a, errA := strconv.Atoi(parts[0])
			r, errR := strconv.Atoi(parts[1])
			if errA != nil || errR != nil || a < 0 || r < 0 {
				return nil, fmt.Errorf("isolate: git diff-tree --numstat: a record %q", rec)
			}
			f.Added, f.Removed = a, r
		}
		files = append(files, f)
	}
	return files, nil
}

// conflictHunks finds the regions git marked in a merged file, each from a
// line beginning <<<<<<< to the next beginning >>>>>>> (a longer marker,
// from a conflict-marker-size attribute, begins the same way). A region
// the file ends inside runs to its end.
func conflictHunks(text string) []Hunk {
	var hunks []Hunk
	var cur *strings.Builder
	start := 0
	n := 0
	for line := range strings.Lines(text) {
		n++
		switch {
		case cur == nil && isMarker(line, '<'):
			cur, start = new(strings.Builder), n
			cur.WriteString(line)
		case cur != nil:
			cur.WriteString(line)
			if isMarker(line, '>') {
				hunks = append(hunks, Hunk{Line: start, Text: strings.TrimRight(cur.String(), "\n")})
				cur = nil
			}
		}
	}
	if cur != nil {
		hunks = append(hunks, Hunk{Line: start, Text: strings.TrimRight(cur.String(), "\n")})
	}
	return hunks
}

// isMarker reports whether line begins with seven c's followed by a
// space, a line end, or more c's.
func isMarker(line string, c byte) bool {
	if len(line) < 7 || strings.Count(line[:7], string(c)) != 7 {
		return false
	}
	rest := strings.TrimLeft(line[7:], string(c))
	return rest == "" || rest[0] == ' ' || rest[0] == '\n' || rest[0] == '\r'
}

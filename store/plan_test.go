package store

import (
	"strings"
	"testing"
)

// TestQueryPlans checks that the reads whose cost must follow what they return
// (a session window, a tree, a run's messages and events, an id prefix, the running
// runs at open) are index searches, never table scans or sorts.
func TestQueryPlans(t *testing.T) {
	s := openTemp(t)
	db := rawDB(t, s.Path())
	if _, err := db.Exec(`ANALYZE`); err != nil { // plans as after PRAGMA optimize
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		query string
		args  []any
	}{
		{"window", windowQuery, []any{"s", 10}},
		{"tree", treeQuery, []any{"r"}},
		{"messages", messagesOfRun, []any{"r"}},
		{"next message seq", nextMessageSeq, []any{"r"}},
		{"run events", eventsOfRun, []any{"r"}},
		{"tree events", eventsOfTree, []any{"r"}},
		{"id prefix", `SELECT ` + runColumns + ` FROM runs WHERE id >= ? AND id < ? ORDER BY id LIMIT 2`, []any{"01H", "01I"}},
		{"running owners", runningOwners, nil},
		{"mark interrupted", markInterrupted, []any{StatusInterrupted, "e", 1, "h", "s"}},
		{"finish run", finishRun, []any{"r", "ok", "", "", 0, 0, 0, 0, 0, 0, "", 0, 0, 0, 0, nil, nil, 0, 0, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, err := db.Query(`EXPLAIN QUERY PLAN `+tt.query, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var plan []string
			for rows.Next() {
				var id, parent, notused int
				var detail string
				if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
					t.Fatal(err)
				}
				plan = append(plan, detail)
			}
			text := strings.Join(plan, "; ")
			for _, step := range plan {
				// A scan is fine only over the partial index of running runs, which
				// holds just the runs in flight.
				scan := strings.HasPrefix(step, "SCAN") && !strings.Contains(step, "INDEX runs_running")
				if scan || strings.Contains(step, "TEMP B-TREE") {
					t.Errorf("plan step %q is a scan or a sort: %s", step, text)
				}
			}
			t.Logf("%s: %s", tt.name, text)
		})
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdStream checks a `run --stream-json` output against the schema of
// docs/observability.md:
//
//	stream STREAM JSON KIND...   every line is an event of version 1 or,
//	                             last, the result object, whose keys are
//	                             those of the --json object in JSON; every
//	                             KIND occurs; parent links and order hold
func cmdStream(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: stream STREAMFILE JSONFILE KIND...")
	}
	lines := strings.Split(strings.TrimSpace(ts.ReadFile(args[0])), "\n")
	var events []map[string]any
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			ts.Fatalf("line %d is not a JSON object: %v\n%s", i+1, err, l)
		}
		events = append(events, m)
	}
	result := events[len(events)-1]
	events = events[:len(events)-1]
	if err := checkStream(events, args[2:]); err != nil {
		ts.Fatalf("stream: %v", err)
	}

	var want map[string]any
	if err := json.Unmarshal([]byte(ts.ReadFile(args[1])), &want); err != nil {
		ts.Fatalf("%s: %v", args[1], err)
	}
	if got, exp := keyPaths(result, ""), keyPaths(want, ""); !slices.Equal(got, exp) {
		ts.Fatalf("the last line's keys differ from --json's:\n got %v\nwant %v", got, exp)
	}
	if root := events[len(events)-1]; root["type"] != "run_finished" || result["run_id"] != root["run_id"] || result["output"] != want["output"] {
		ts.Fatalf("the result line is not the finished root's: %v", result)
	}
	ts.Logf("stream: %d events, result ok", len(events))
}

func checkStream(events []map[string]any, kinds []string) error {
	type run struct {
		depth          int
		parent, callID string
		start, finish  int
	}
	runs := map[string]*run{}
	seen := map[string]bool{}
	toolDone := map[string]int{} // run id + call id -> index of tool_call_finished
	for i, ev := range events {
		typ, _ := ev["type"].(string)
		id, _ := ev["run_id"].(string)
		parent, _ := ev["parent_run_id"].(string)
		depth := int(ev["depth"].(float64))
		seen[typ] = true
		if ev["v"] != 1.0 || id == "" || ev["time"] == nil || ev["agent"] == "" {
			return fmt.Errorf("event %d lacks v 1, run_id, time or agent: %v", i, ev)
		}
		switch typ {
		case "run_started", "child_spawned":
			if runs[id] != nil {
				return fmt.Errorf("run %s started twice", id)
			}
			if typ == "child_spawned" {
				p := runs[parent]
				if p == nil || p.finish >= 0 || depth != p.depth+1 {
					return fmt.Errorf("child %s spawned by %q, which is not a running run one level up", id, parent)
				}
			} else if parent != "" || depth != 0 || i != 0 {
				return fmt.Errorf("run_started is not the root's first event: %v", ev)
			}
			callID, _ := ev["tool_call_id"].(string)
			runs[id] = &run{depth: depth, parent: parent, callID: callID, start: i, finish: -1}
			continue
		}
		r := runs[id]
		if r == nil || r.finish >= 0 {
			return fmt.Errorf("event %d (%s) of run %s outside its start and finish", i, typ, id)
		}
		if parent != r.parent || depth != r.depth {
			return fmt.Errorf("event %d of run %s: parent %q depth %d, want %q %d", i, id, parent, depth, r.parent, r.depth)
		}
		switch typ {
		case "run_finished", "child_finished":
			if env, _ := ev["envelope"].(map[string]any); env == nil || env["run_id"] != id {
				return fmt.Errorf("%s of %s without its envelope", typ, id)
			}
			r.finish = i
		case "model_call_finished":
			if ev["usage"] == nil && ev["error"] == nil {
				return fmt.Errorf("model_call_finished without usage: %v", ev)
			}
		case "tool_call_finished":
			toolDone[id+"/"+ev["call_id"].(string)] = i
		}
	}
	for _, k := range kinds {
		if !seen[k] {
			return fmt.Errorf("no %s event (saw %v)", k, slices.Sorted(maps.Keys(seen)))
		}
	}
	depths := map[int]bool{}
	for id, r := range runs {
		depths[r.depth] = true
		if r.finish < 0 {
			return fmt.Errorf("run %s never finished", id)
		}
		if r.parent == "" {
			continue
		}
		// A child starts, then finishes, then its parent sees the result.
		done, ok := toolDone[r.parent+"/"+r.callID]
		if !ok || !(r.start < r.finish && r.finish < done) {
			return fmt.Errorf("child %s: spawned at %d, finished at %d, parent's tool result at %d (found %v)", id, r.start, r.finish, done, ok)
		}
	}
	if len(depths) < 3 {
		return fmt.Errorf("the tree has %d levels, want 3", len(depths))
	}
	return nil
}

// keyPaths lists the object keys of v, nested ones as a.b; arrays look at
// their first element.
func keyPaths(v any, prefix string) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			out = append(out, prefix+k)
			out = append(out, keyPaths(e, prefix+k+".")...)
		}
	case []any:
		if len(x) > 0 {
			out = append(out, keyPaths(x[0], prefix+"[].")...)
		}
	}
	slices.Sort(out)
	return out
}

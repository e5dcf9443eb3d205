package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The lead spends 100 tokens on its first call, which asks a worker (200
// tokens, then finished); each later call of the lead spends 300, and its
// second stalls, so that the kill lands while it is in flight.
const budgetFake = `rules:
  - {name: lead1, match: {system: "^LEAD", last_role: user}, reply: {tool_calls: [{name: call_agent, arguments: {agent: worker, task: "w"}}], usage: {input_tokens: 90, output_tokens: 10}}}
  - {name: worker, match: {system: "^WORKER"}, reply: {text: "w done", usage: {input_tokens: 190, output_tokens: 10}}}
  - {name: loop1, match: {system: "^LEAD", last_role: tool}, times: 1, reply: {tool_calls: [{name: nothing, arguments: {}}], usage: {input_tokens: 290, output_tokens: 10}}}
  - {name: stall, match: {system: "^LEAD", last_role: tool}, times: 1, latency: 60s, reply: {tool_calls: [{name: nothing, arguments: {}}], usage: {input_tokens: 290, output_tokens: 10}}}
  - {name: loop, match: {system: "^LEAD", last_role: tool}, reply: {tool_calls: [{name: nothing, arguments: {}}], usage: {input_tokens: 290, output_tokens: 10}}}
`

// TestResumeKeepsBudget kills a run with --max-tokens 1500 while its
// second 300-token call is in flight, when 600 tokens are committed (the
// lead's 100 and 300, the worker's 200), and resumes it: the budget
// continues from those 600, so three more calls reach 1500 (a budget
// counted afresh would allow five); a resume's --max-tokens narrows the
// recorded budget and never widens it.
func TestResumeKeepsBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	for _, tc := range []struct {
		name     string
		flags    []string
		calls    int // model calls after the resume
		limit    int
		used     int
		firstCap string // max_completion_tokens of the first call after the resume
	}{
		{name: "recorded", calls: 3, limit: 1500, used: 1500, firstCap: "900"},
		{name: "wider flag", flags: []string{"--max-tokens", "9000"}, calls: 3, limit: 1500, used: 1500, firstCap: "900"},
		{name: "narrower flag", flags: []string{"--max-tokens", "1000"}, calls: 2, limit: 1000, used: 1200, firstCap: "400"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			agents := map[string]string{
				"lead.toml":   "name = \"lead\"\nmodel = \"openai/gpt-test\"\nsystem_prompt = \"LEAD\"\nsub_agents = [\"worker\"]\n",
				"worker.toml": "name = \"worker\"\nmodel = \"inherit\"\nsystem_prompt = \"WORKER\"\n",
			}
			for name, body := range agents {
				p := filepath.Join(dir, ".deputy", "agents", name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			srv, deputy := deputyOnFake(t, dir, []byte(budgetFake))
			db := filepath.Join(dir, "ledger.db")

			first := deputy("run", "--json", "--max-tokens", "1500", "lead", "go")
			if err := first.Start(); err != nil {
				t.Fatal(err)
			}
			// lead1, worker, loop1 answered; stall in flight. The fake logs
			// a request before it reads and matches its body: wait until
			// the stall rule has it, or the kill may land before the rule
			// is used and the resumed run meets it instead.
			waitRequests(t, srv, 4)
			for deadline := time.Now().Add(20 * time.Second); srv.Requests()[3].Rule == "" && time.Now().Before(deadline); {
				time.Sleep(2 * time.Millisecond)
			}
			if err := first.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = first.Wait()
			killedAt := len(srv.Requests())
			if killedAt != 4 {
				t.Fatalf("the fake had %d requests at the kill, want 4", killedAt)
			}

			id := rootRun(t, db)
			args := append([]string{"runs", "resume", "--json"}, tc.flags...)
			cmd := deputy(append(args, id)...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err == nil {
				t.Fatalf("resume succeeded; want the budget stop\n%s", stdout.String())
			}
			var res struct {
				Status string `json:"status"`
				Error  string `json:"error"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
				t.Fatalf("%v in %s\n%s", err, stdout.String(), stderr.String())
			}
			wantErr := "ran out of budget: budget.tokens is " + strconv.Itoa(tc.limit) + " and " + strconv.Itoa(tc.used) + " tokens have been used by lead and its sub-agents"
			if res.Status != "budget" || res.Error != wantErr {
				t.Errorf("resumed run: status %q, error %q; want budget, %q", res.Status, res.Error, wantErr)
			}
			after := srv.Requests()[killedAt:]
			if len(after) != tc.calls {
				t.Errorf("%d model calls after the resume, want %d", len(after), tc.calls)
			}
			for _, r := range after {
				if r.Rule != "loop" {
					t.Errorf("after the resume, a request answered by %q: the finished worker or the lead's first call was repeated", r.Rule)
				}
			}
			// Resumed again with its budget spent: it stops at once.
			before := len(srv.Requests())
			again := deputy("runs", "resume", "--retry-failed", "--json", id)
			out, _ := again.Output()
			if n := len(srv.Requests()) - before; n != 0 || !strings.Contains(string(out), `"status": "budget"`) {
				t.Errorf("resumed with a spent budget: %d model calls, want none, and status budget in\n%s", n, out)
			}
			if len(after) > 0 && !strings.Contains(string(after[0].Body), `"max_completion_tokens":`+tc.firstCap+",") {
				t.Errorf("first call after the resume: want max_completion_tokens %s (what the budget has left) in %.300s", tc.firstCap, after[0].Body)
			}
		})
	}
}

package delegate_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/isolate"
	"github.com/deputyhq/deputy/llm"
)

// gitRepo makes a git repository with a.txt and b.txt committed and
// notes.txt untracked, git's configuration confined to the test.
func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git program")
	}
	home := t.TempDir()
	global := filepath.Join(home, "gitconfig")
	if err := os.WriteFile(global, []byte("[user]\n\tname = T\n\temail = t@example.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	dir := t.TempDir()
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	writeTestFile(t, filepath.Join(dir, "a.txt"), "a\n")
	writeTestFile(t, filepath.Join(dir, "b.txt"), "b\n")
	git(t, dir, "init", "--quiet", "-b", "main")
	git(t, dir, "add", "--all")
	git(t, dir, "commit", "--quiet", "-m", "init")
	writeTestFile(t, filepath.Join(dir, "notes.txt"), "uncommitted note\n")
	return dir
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readTestFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// isolationHarness is a harness whose engine makes worktrees under a
// temporary directory and logs its warnings into log.
func isolationHarness(t *testing.T, script string, agents ...*config.Agent) (*harness, *isolate.Manager, *bytes.Buffer) {
	h := newHarness(t, script, agents...)
	m := &isolate.Manager{Dir: filepath.Join(t.TempDir(), "worktrees")}
	h.engine.Isolation = m
	var log bytes.Buffer
	h.engine.Logger = slog.New(slog.NewTextHandler(&log, nil))
	return h, m, &log
}

func writer(name, prompt string) *config.Agent {
	a := agentDef(name, prompt)
	a.Model = "inherit"
	a.Tools = []string{"read_file", "write_file"}
	a.Isolation = config.IsolationWorktree
	return a
}

// Two isolated children called in one response, each editing its own
// file: each saw the lead's uncommitted file, both edits are in the lead's
// working tree at the end, each tool result says what was merged, and no
// worktree or branch is left.
const twoWritersScript = `
rules:
  - {match: {system: "^LEAD", last_role: user}, reply: {tool_calls: [
      {name: call_agent, arguments: {agent: wa, task: "edit a"}},
      {name: call_agent, arguments: {agent: wb, task: "edit b"}}]}}
  - {match: {system: "^LEAD", last_role: tool}, reply: {text: "{{ join .ToolResults \"\\n---\\n\" }}"}}
  - {match: {system: "^WA", last_role: user}, reply: {tool_calls: [{name: read_file, arguments: {path: notes.txt}}]}}
  - {match: {system: "^WA", last_role: tool, last: "uncommitted"}, reply: {tool_calls: [{name: write_file, arguments: {path: a.txt, content: "A by wa\n"}}]}}
  - {match: {system: "^WA", last_role: tool}, reply: {text: "wa done"}}
  - {match: {system: "^WB", last_role: user}, reply: {tool_calls: [{name: read_file, arguments: {path: notes.txt}}]}}
  - {match: {system: "^WB", last_role: tool, last: "uncommitted"}, reply: {tool_calls: [{name: write_file, arguments: {path: b.txt, content: "B by wb\n"}}]}}
  - {match: {system: "^WB", last_role: tool}, reply: {text: "wb done"}}
`

func TestIsolatedChildrenMergeBack(t *testing.T) {
	dir := gitRepo(t)
	h, m, log := isolationHarness(t, twoWritersScript, agentDef("lead", "LEAD", "wa", "wb"), writer("wa", "WA"), writer("wb", "WB"))
	lead, _ := h.engine.Agents.Get("lead")
	env := h.engine.Run(context.Background(), delegate.RunRequest{Agent: lead, Task: "go", Workdir: dir})
	if env.Status != delegate.StatusOK {
		t.Fatalf("run: %s %s", env.Status, env.Error)
	}
	want := "[worktree] merged: 1 file changed\n+1 −1 a.txt\n\nwa done\n---\n[worktree] merged: 1 file changed\n+1 −1 b.txt\n\nwb done"
	if env.Output != want {
		t.Errorf("the lead read:\n%s\nwant:\n%s", env.Output, want)
	}
	if got := readTestFile(t, filepath.Join(dir, "a.txt")); got != "A by wa\n" {
		t.Errorf("a.txt = %q", got)
	}
	if got := readTestFile(t, filepath.Join(dir, "b.txt")); got != "B by wb\n" {
		t.Errorf("b.txt = %q", got)
	}
	// Each child read notes.txt, which is not committed, in its worktree:
	// its second turn is the write, which the script gives only then.
	for _, who := range []string{"WA", "WB"} {
		if reqs := h.prov.requests(who); len(reqs) != 3 {
			t.Errorf("%s made %d model calls, want 3 (read, write, answer)", who, len(reqs))
		}
	}
	if got := git(t, dir, "worktree", "list", "--porcelain"); strings.Count(got, "worktree ") != 1 {
		t.Errorf("worktrees left:\n%s", got)
	}
	if got := git(t, dir, "branch", "--list"); got != "* main\n" {
		t.Errorf("branches left:\n%s", got)
	}
	if ids, _ := m.List(); len(ids) != 0 {
		t.Errorf("worktree directories left: %v", ids)
	}
	for _, c := range env.Children {
		if c.Worktree == nil || c.Worktree.Status != isolate.Merged {
			t.Errorf("child %s: worktree result %+v", c.Label, c.Worktree)
		}
	}
	if log.Len() > 0 {
		t.Errorf("warnings:\n%s", log)
	}
}

// Two children edit the same line; the first called finishes last. It is
// still merged first; the second's result is a conflict naming the file,
// with its branch, which holds its change; the lead's tree has only the
// first's.
func TestIsolatedConflictInCallOrder(t *testing.T) {
	dir := gitRepo(t)
	script := `
rules:
  - {match: {system: "^LEAD", last_role: user}, reply: {tool_calls: [
      {name: call_agent, arguments: {agent: wa, task: "edit a"}},
      {name: call_agent, arguments: {agent: wb, task: "edit a too"}}]}}
  - {match: {system: "^LEAD", last_role: tool}, reply: {text: "{{ join .ToolResults \"\\n---\\n\" }}"}}
  - {match: {system: "^WA", last_role: user}, reply: {tool_calls: [{name: write_file, arguments: {path: a.txt, content: "A by wa\n"}}]}}
  - {match: {system: "^WA", last_role: tool}, latency: 300ms, reply: {text: "wa done"}}
  - {match: {system: "^WB", last_role: user}, reply: {tool_calls: [{name: write_file, arguments: {path: a.txt, content: "A by wb\n"}}]}}
  - {match: {system: "^WB", last_role: tool}, reply: {text: "wb done"}}
`
	h, _, _ := isolationHarness(t, script, agentDef("lead", "LEAD", "wa", "wb"), writer("wa", "WA"), writer("wb", "WB"))
	lead, _ := h.engine.Agents.Get("lead")
	env := h.engine.Run(context.Background(), delegate.RunRequest{Agent: lead, Task: "go", Workdir: dir})
	if env.Status != delegate.StatusOK {
		t.Fatalf("run: %s %s", env.Status, env.Error)
	}
	first, second, _ := strings.Cut(env.Output, "\n---\n")
	if !strings.HasPrefix(first, "[worktree] merged: 1 file changed\n+1 −1 a.txt") {
		t.Errorf("the first child's result:\n%s", first)
	}
	var wb *delegate.Envelope
	for _, c := range env.Children {
		if c.Label == "wb" {
			wb = c
		}
	}
	branch := "deputy/" + wb.RunID
	if !strings.HasPrefix(second, "[worktree] conflict: nothing was merged; the changes are on branch "+branch) ||
		!strings.Contains(second, "conflict (content): a.txt\na.txt, line 1:\n<<<<<<< parent\nA by wa\n=======\nA by wb\n>>>>>>> "+branch) ||
		!strings.HasSuffix(second, "wb done") {
		t.Errorf("the second child's result:\n%s", second)
	}
	if got := readTestFile(t, filepath.Join(dir, "a.txt")); got != "A by wa\n" {
		t.Errorf("a.txt = %q, want the first child's change only", got)
	}
	if got := git(t, dir, "show", branch+":a.txt"); got != "A by wb\n" {
		t.Errorf("the branch holds %q", got)
	}
	if wb.Worktree == nil || wb.Worktree.Status != isolate.Conflict || !fileExists(wb.Worktree.Worktree) {
		t.Errorf("wb's worktree: %+v", wb.Worktree)
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return path != "" && err == nil
}

// A child that fails is not merged: its work is on its kept branch, and
// its error (what the parent reads) says so.
func TestFailedIsolatedChildIsKept(t *testing.T) {
	dir := gitRepo(t)
	script := `
rules:
  - {match: {system: "^LEAD", last_role: user}, reply: {tool_calls: [{name: call_agent, arguments: {agent: wa, task: "edit a"}}]}}
  - {match: {system: "^LEAD", last_role: tool}, reply: {text: "{{ join .ToolResults \"\" }}"}}
  - {match: {system: "^WA", last_role: user}, reply: {tool_calls: [{name: write_file, arguments: {path: a.txt, content: "half\n"}}]}}
  - {match: {system: "^WA", last_role: tool}, fault: bad_request}
`
	h, _, _ := isolationHarness(t, script, agentDef("lead", "LEAD", "wa"), writer("wa", "WA"))
	lead, _ := h.engine.Agents.Get("lead")
	env := h.engine.Run(context.Background(), delegate.RunRequest{Agent: lead, Task: "go", Workdir: dir})
	wa := env.Children[0]
	branch := "deputy/" + wa.RunID
	if wa.Status != delegate.StatusError || wa.Worktree == nil || wa.Worktree.Status != isolate.Kept {
		t.Fatalf("child: %s %+v", wa.Status, wa.Worktree)
	}
	if !strings.Contains(env.Output, "failed — ") || !strings.Contains(env.Output, "; its work was not merged: it is on branch "+branch+", in "+wa.Worktree.Worktree) {
		t.Errorf("the lead read: %s", env.Output)
	}
	if got := readTestFile(t, filepath.Join(dir, "a.txt")); got != "a\n" {
		t.Errorf("a.txt = %q: a failed child was merged", got)
	}
	if got := git(t, dir, "show", branch+":a.txt"); got != "half\n" {
		t.Errorf("the kept branch holds %q", got)
	}
	if msg := git(t, dir, "log", "-1", "--format=%s", branch); msg != "wa: edit a (error)\n" {
		t.Errorf("the branch's commit: %q", msg)
	}
}

// Outside git an isolated child works in the shared directory, and one
// warning (for both children) says why.
func TestIsolationOutsideGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git program")
	}
	dir := t.TempDir()
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	writeTestFile(t, filepath.Join(dir, "a.txt"), "a\n")
	writeTestFile(t, filepath.Join(dir, "b.txt"), "b\n")
	writeTestFile(t, filepath.Join(dir, "notes.txt"), "uncommitted\n")
	h, _, log := isolationHarness(t, twoWritersScript, agentDef("lead", "LEAD", "wa", "wb"), writer("wa", "WA"), writer("wb", "WB"))
	lead, _ := h.engine.Agents.Get("lead")
	env := h.engine.Run(context.Background(), delegate.RunRequest{Agent: lead, Task: "go", Workdir: dir})
	if env.Status != delegate.StatusOK || env.Output != "wa done\n---\nwb done" {
		t.Fatalf("run: %s %q", env.Status, env.Output)
	}
	if readTestFile(t, filepath.Join(dir, "a.txt")) != "A by wa\n" || readTestFile(t, filepath.Join(dir, "b.txt")) != "B by wb\n" {
		t.Error("the children's writes are not in the shared directory")
	}
	if n := strings.Count(log.String(), "level=WARN"); n != 1 || !strings.Contains(log.String(), "isolation not used: "+dir+" is not in a git repository; the agent works in the shared directory") {
		t.Errorf("%d warnings:\n%s", n, log)
	}
}

// With the tree isolated (run --isolation worktree), each child of the
// root gets a worktree and its own children share it: the grandchild's
// write comes back with its parent's merge, and only one worktree is made
// for the subtree.
func TestTreeIsolationSubtreeShares(t *testing.T) {
	dir := gitRepo(t)
	script := `
rules:
  - {match: {system: "^LEAD", last_role: user}, reply: {tool_calls: [{name: call_agent, arguments: {agent: mid, task: "delegate"}}]}}
  - {match: {system: "^LEAD", last_role: tool}, reply: {text: "{{ join .ToolResults \"\" }}"}}
  - {match: {system: "^MID", last_role: user}, reply: {tool_calls: [{name: call_agent, arguments: {agent: leaf, task: "write"}}]}}
  - {match: {system: "^MID", last_role: tool}, reply: {text: "mid got: {{ join .ToolResults \"\" }}"}}
  - {match: {system: "^LEAF", last_role: user}, reply: {tool_calls: [{name: write_file, arguments: {path: sub/leaf.txt, content: "leaf\n"}}]}}
  - {match: {system: "^LEAF", last_role: tool}, reply: {text: "leaf done"}}
`
	mid := agentDef("mid", "MID", "leaf")
	mid.Model = "inherit"
	leaf := agentDef("leaf", "LEAF")
	leaf.Model, leaf.Tools = "inherit", []string{"write_file"}
	h, m, _ := isolationHarness(t, script, agentDef("lead", "LEAD", "mid"), mid, leaf)
	st := openLedger(t)
	h.engine.Ledger = st
	lead, _ := h.engine.Agents.Get("lead")
	ctx := context.Background()
	env := h.engine.Run(ctx, delegate.RunRequest{Agent: lead, Task: "go", Workdir: dir, Isolation: config.IsolationWorktree})
	if env.Status != delegate.StatusOK {
		t.Fatalf("run: %s %s", env.Status, env.Error)
	}
	if root, err := st.GetRun(ctx, env.RunID); err != nil || root.Isolation != "worktree" {
		t.Errorf("the root's recorded isolation: %q, %v", root.Isolation, err)
	}
	rows, err := st.Worktrees(ctx, env.RunID)
	if err != nil || len(rows) != 1 || rows[0].RunID != env.Children[0].RunID || rows[0].State != "merged" || rows[0].RemovedAt.IsZero() || rows[0].Commit == "" {
		t.Errorf("the ledger's worktrees: %+v, %v", rows, err)
	}
	if env.Output != "[worktree] merged: 1 file changed\n+1 −0 sub/leaf.txt\n\nmid got: leaf done" {
		t.Errorf("the lead read:\n%s", env.Output)
	}
	if got := readTestFile(t, filepath.Join(dir, "sub", "leaf.txt")); got != "leaf\n" {
		t.Errorf("sub/leaf.txt = %q", got)
	}
	midEnv := env.Children[0]
	if leafEnv := midEnv.Children[0]; leafEnv.Worktree != nil || leafEnv.Output != "leaf done" {
		t.Errorf("the grandchild had a worktree of its own: %+v, %q", leafEnv.Worktree, leafEnv.Output)
	}
	if ids, _ := m.List(); len(ids) != 0 {
		t.Errorf("worktrees left: %v", ids)
	}
	if got := git(t, dir, "branch", "--list"); got != "* main\n" {
		t.Errorf("branches left:\n%s", got)
	}
}

// An agent whose file says isolation = "none" stays in its parent's
// directory even in a tree run with --isolation worktree.
func TestIsolationNoneOptsOut(t *testing.T) {
	dir := gitRepo(t)
	script := `
rules:
  - {match: {system: "^LEAD", last_role: user}, reply: {tool_calls: [{name: call_agent, arguments: {agent: wa, task: "edit a"}}]}}
  - {match: {system: "^LEAD", last_role: tool}, reply: {text: "{{ join .ToolResults \"\" }}"}}
  - {match: {system: "^WA", last_role: user}, reply: {tool_calls: [{name: write_file, arguments: {path: a.txt, content: "direct\n"}}]}}
  - {match: {system: "^WA", last_role: tool}, reply: {text: "wa done"}}
`
	wa := writer("wa", "WA")
	wa.Isolation = config.IsolationNone
	h, m, _ := isolationHarness(t, script, agentDef("lead", "LEAD", "wa"), wa)
	lead, _ := h.engine.Agents.Get("lead")
	env := h.engine.Run(context.Background(), delegate.RunRequest{Agent: lead, Task: "go", Workdir: dir, Isolation: config.IsolationWorktree})
	if env.Output != "wa done" || env.Children[0].Worktree != nil || readTestFile(t, filepath.Join(dir, "a.txt")) != "direct\n" {
		t.Errorf("output %q, worktree %+v", env.Output, env.Children[0].Worktree)
	}
	if ids, _ := m.List(); len(ids) != 0 {
		t.Errorf("worktrees made: %v", ids)
	}
}

// A subagent's merge report counts against output_max_size like the rest
// of its output, and comes first, so that the cut falls on the answer.
func TestSubagentMergeReportCountsAgainstOutputLimit(t *testing.T) {
	dir := gitRepo(t)
	long := strings.Repeat("x", 3000)
	script := `
rules:
  - {match: {system: "^LEAD", last_role: user}, reply: {tool_calls: [{name: subagent, arguments: {label: w, task_prompt: "write a"}}]}}
  - {match: {system: "^LEAD", last_role: tool}, reply: {text: "{{ join .ToolResults \"\" }}"}}
  - {match: {system: "^You are a sub-agent", last_role: user, last: "^write a"}, reply: {tool_calls: [{name: write_file, arguments: {path: a.txt, content: "by subagent\n"}}]}}
  - {match: {system: "^You are a sub-agent", last_role: user, last: "Summarize"}, reply: {text: "` + long + `"}}
  - {match: {system: "^You are a sub-agent", last_role: tool}, reply: {text: "written"}}
`
	lead := agentDef("lead", "LEAD")
	lead.Tools = []string{"subagent", "write_file"}
	h, _, _ := isolationHarness(t, script, lead)
	h.engine.Subagent.OutputMaxSize = 1024
	env := h.engine.Run(context.Background(), delegate.RunRequest{Agent: lead, Task: "go", Workdir: dir, Isolation: config.IsolationWorktree})
	if env.Status != delegate.StatusOK {
		t.Fatalf("run: %s %s", env.Status, env.Error)
	}
	out, _ := decodeEnvelope(t, env.Output)["output"].(string)
	if !strings.HasPrefix(out, "[worktree] merged: 1 file changed\n+1 −1 a.txt\n\nxxx") || !strings.HasSuffix(out, "[Output truncated]") || len(out) > 1024 {
		t.Errorf("output (%d bytes): %.120q...", len(out), out)
	}
	if got := readTestFile(t, filepath.Join(dir, "a.txt")); got != "by subagent\n" {
		t.Errorf("a.txt = %q", got)
	}
}

// cancelAt cancels the run when a request's system prompt starts with who
// and it has more than one message (the agent's second model call), once.
type cancelAt struct {
	llm.Provider
	who    string
	mu     sync.Mutex
	cancel context.CancelFunc
}

func (p *cancelAt) Generate(ctx context.Context, req *llm.Request, on llm.StreamFunc) (*llm.Response, error) {
	p.mu.Lock()
	stop := p.cancel
	hit := stop != nil && strings.HasPrefix(req.System, p.who) && len(req.Messages) > 1
	if hit {
		p.cancel = nil
	}
	p.mu.Unlock()
	if hit {
		stop()
		return nil, ctx.Err()
	}
	return p.Provider.Generate(ctx, req, on)
}

// A tree stopped while an isolated child works keeps the child's
// worktree as it is, unmerged, and recorded as in use, for runs resume
// (cmd/deputy's isolation_resume.txtar resumes after a kill -9) or runs
// clean.
func TestStoppedChildKeepsItsWorktree(t *testing.T) {
	dir := gitRepo(t)
	script := `
rules:
  - {match: {system: "^LEAD", last_role: user}, reply: {tool_calls: [{name: call_agent, arguments: {agent: wa, task: "edit a"}}]}}
  - {match: {system: "^LEAD", last_role: tool}, reply: {text: "{{ join .ToolResults \"\" }}"}}
  - {match: {system: "^WA", last_role: user}, reply: {tool_calls: [{name: write_file, arguments: {path: a.txt, content: "first half\n"}}]}}
  - {match: {system: "^WA", last_role: tool}, reply: {text: "wa done"}}
`
	ctx := context.Background()
	h, m, _ := isolationHarness(t, script, agentDef("lead", "LEAD", "wa"), writer("wa", "WA"))
	st := openLedger(t)
	h.engine.Ledger = st
	prov := &cancelAt{Provider: h.prov, who: "WA"}
	h.engine.Models = models{prov}
	lead, _ := h.engine.Agents.Get("lead")
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	prov.cancel = cancel
	first := h.engine.Run(runCtx, delegate.RunRequest{Agent: lead, Task: "go", Workdir: dir})
	if first.Status != delegate.StatusCancelled {
		t.Fatalf("first attempt: %s", first.Status)
	}
	ids, _ := m.List()
	if len(ids) != 1 {
		t.Fatalf("worktrees after the stop: %v", ids)
	}
	if got := readTestFile(t, filepath.Join(m.Dir, ids[0], "a.txt")); got != "first half\n" {
		t.Errorf("the stopped child's worktree holds a.txt = %q", got)
	}
	if got := readTestFile(t, filepath.Join(dir, "a.txt")); got != "a\n" {
		t.Errorf("a stopped child was merged: a.txt = %q", got)
	}
	row, err := st.Worktree(ctx, ids[0])
	if err != nil || row == nil || row.State != "active" || row.Path != filepath.Join(m.Dir, ids[0]) || row.Branch != "deputy/"+ids[0] {
		t.Errorf("the ledger's record: %+v, %v", row, err)
	}
	root, err := st.GetRun(ctx, first.RunID)
	if err != nil || root.Isolation != "" {
		t.Errorf("root's isolation %q, %v", root.Isolation, err)
	}
}

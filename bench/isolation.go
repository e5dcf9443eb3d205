package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/deputyhq/deputy/isolate"
)

// Row 7: isolated children (issue 28). A lead calls N children in one
// response in a git repository of F files with an uncommitted change;
// each child writes one new file. Timed whole-process, the same tree with
// --isolation worktree (a worktree per child, made from the lead's
// working state, its work committed and merged back) against without (the
// children write into the shared directory), both on the scripted model
// in process, so that what is measured is deputy and git, not a model.
// Then, in this process, each step isolate takes per child, one child at
// a time: making the worktree, committing and merging its work, removing
// it. NOTES-isolation.md says what the figures mean.

// isoOptions are row 7's sizes.
type isoOptions struct {
	children, files, runs int
}

// isoResult is row 7's measurements.
type isoResult struct {
	o                     isoOptions
	shared, isolated      []time.Duration
	create, merge, remove []time.Duration
	// floorWrite and floorRemove are the same files written and removed
	// with os.WriteFile and os.RemoveAll: what a checkout cannot beat.
	floorWrite, floorRemove []time.Duration
}

// floorRuns is how many times the floor is measured.
const floorRuns = 5

func (b *bench) measureIsolation(o isoOptions) (isoResult, error) {
	res := isoResult{o: o}
	if _, err := exec.LookPath("git"); err != nil {
		return res, fmt.Errorf("row 7 needs the git program: %w", err)
	}
	dir := filepath.Join(b.tmp, "row7")
	repo := filepath.Join(dir, "repo")
	for _, d := range []string{"home", "config", "data", repo} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return res, err
		}
	}
	fmt.Fprintf(os.Stderr, "bench: row 7 (isolation): a repository of %s files\n", thousands(o.files))
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(dir, "home"),
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"),
		"XDG_DATA_HOME=" + filepath.Join(dir, "data"),
		"TMPDIR=" + os.TempDir(),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + os.DevNull,
		"GIT_CEILING_DIRECTORIES=" + dir,
	}
	if err := makeRepo(repo, o.files, env); err != nil {
		return res, err
	}
	script := filepath.Join(dir, "script.yaml")
	if err := os.WriteFile(script, []byte(isoScript(o.children)), 0o644); err != nil {
		return res, err
	}
	if err := writeIsoAgents(filepath.Join(repo, ".deputy", "agents"), "script/"+script); err != nil {
		return res, err
	}
	// A loaded disk makes writing and removing thousands of files slow:
	// an isolated run gets half an hour.
	progs := []program{
		{name: "shared", args: []string{b.deputy, "run", "--progress=none", "lead", "go"}, want: fmt.Sprintf("lead %d", o.children), timeout: 30 * time.Minute},
		{name: "isolated", args: []string{b.deputy, "run", "--progress=none", "--isolation", "worktree", "lead", "go"}, want: fmt.Sprintf("lead %d", o.children), timeout: 30 * time.Minute},
	}
	fmt.Fprintf(os.Stderr, "bench: row 7: %d runs of shared, isolated (%d children), alternating\n", o.runs, o.children)
	samples := map[string][]time.Duration{}
	for i := -1; i < o.runs; i++ {
		for j := range progs {
			p := progs[(max(i, 0)+j)%len(progs)]
			if err := resetRepo(repo, env); err != nil {
				return res, err
			}
			s, err := b.runOnce(p, env, repo)
			if err != nil {
				return res, fmt.Errorf("%s: %w", p.name, err)
			}
			if err := checkChildrenFiles(repo, o.children); err != nil {
				return res, fmt.Errorf("%s: %w", p.name, err)
			}
			fmt.Fprintf(os.Stderr, "bench:   %-8s %s (load average %s)\n", p.name, dur(s.wall), loadAvg())
			if i >= 0 {
				samples[p.name] = append(samples[p.name], s.wall)
			}
		}
	}
	res.shared, res.isolated = samples["shared"], samples["isolated"]
	if err := isoSteps(&res, repo, filepath.Join(dir, "steps"), env); err != nil {
		return res, err
	}
	return res, nil
}

// isoSteps times isolate's steps for each of o.children children, one
// after another, in this process: Create (snapshot of the working state
// and worktree), Commit and Merge (the child's one new file), Remove.
func isoSteps(res *isoResult, repo, dir string, env []string) error {
	if err := resetRepo(repo, env); err != nil {
		return err
	}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "GIT_") {
			os.Setenv(k, v)
		}
	}
	m := &isolate.Manager{Dir: dir}
	ctx := context.Background()
	for i := range res.o.children {
		if i < floorRuns {
			// The floor, between the children: the same files written and
			// removed by this program, no git.
			floor := filepath.Join(dir, fmt.Sprintf("floor%d", i))
			start := time.Now()
			if err := writeFiles(floor, res.o.files); err != nil {
				return err
			}
			res.floorWrite = append(res.floorWrite, time.Since(start))
			start = time.Now()
			if err := os.RemoveAll(floor); err != nil {
				return err
			}
			res.floorRemove = append(res.floorRemove, time.Since(start))
		}
		id := fmt.Sprintf("STEP%02d", i)
		start := time.Now()
		w, err := m.Create(ctx, repo, id)
		if err != nil {
			return err
		}
		res.create = append(res.create, time.Since(start))
		name := fmt.Sprintf("f%02d", i)
		if err := os.WriteFile(filepath.Join(w.Path, "new", name+".txt"), []byte(name+"\n"), 0o644); err != nil {
			if err := os.MkdirAll(filepath.Join(w.Path, "new"), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(w.Path, "new", name+".txt"), []byte(name+"\n"), 0o644); err != nil {
				return err
			}
		}
		start = time.Now()
		if err := m.Commit(ctx, w, "step"); err != nil {
			return err
		}
		r, err := m.Merge(ctx, w)
		if err != nil {
			return err
		}
		if r.Status != isolate.Merged {
			return fmt.Errorf("step %d: merge %s", i, r)
		}
		res.merge = append(res.merge, time.Since(start))
		start = time.Now()
		if err := m.Remove(ctx, w, false); err != nil {
			return err
		}
		res.remove = append(res.remove, time.Since(start))
	}
	return checkChildrenFiles(repo, res.o.children)
}

// writeFiles writes n small files into dir, 100 to a directory: the
// repository's files.
func writeFiles(dir string, n int) error {
	for i := range n {
		d := filepath.Join(dir, fmt.Sprintf("d%03d", i/100))
		if i%100 == 0 {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		body := fmt.Sprintf("package d%03d\n\n// File %d of the bench's repository.\nconst N%d = %d\n", i/100, i, i, i)
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%05d.go", i)), []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// makeRepo makes a git repository of n small files, committed.
func makeRepo(repo string, n int, env []string) error {
	if err := writeFiles(repo, n); err != nil {
		return err
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"},
		{"-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-q", "-m", "init"}} {
		if err := git(repo, env, args...); err != nil {
			return err
		}
	}
	return nil
}

// resetRepo brings the repository back to its commit, then makes its
// working state what every run starts from: one tracked file changed and
// one untracked file, which each child's worktree must carry.
func resetRepo(repo string, env []string) error {
	if err := git(repo, env, "checkout", "-q", "--", "."); err != nil {
		return err
	}
	if err := git(repo, env, "clean", "-fdq", "-e", ".deputy"); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(repo, "d000", "f00000.go"), []byte("package d000\n\n// changed, not committed\n"), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(repo, "notes.txt"), []byte("untracked\n"), 0o644)
}

// checkChildrenFiles checks that every child's file arrived in the
// repository's working tree, and that the uncommitted change is still
// there.
func checkChildrenFiles(repo string, n int) error {
	for i := range n {
		name := fmt.Sprintf("f%02d", i)
		data, err := os.ReadFile(filepath.Join(repo, "new", name+".txt"))
		if err != nil || string(data) != name+"\n" {
			return fmt.Errorf("child %d's file is not in the working tree: %q, %v", i, data, err)
		}
	}
	if data, err := os.ReadFile(filepath.Join(repo, "d000", "f00000.go")); err != nil || !strings.Contains(string(data), "not committed") {
		return fmt.Errorf("the uncommitted change was lost: %q, %v", data, err)
	}
	return nil
}

func git(dir string, env []string, args ...string) error {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// isoScript: the lead calls n workers in one response; each writes
// new/<its task>.txt and answers; the lead answers with their count.
func isoScript(n int) string {
	var s strings.Builder
	s.WriteString("rules:\n  - name: lead\n    match: {system: \"^LEAD\", turn: 1}\n    reply:\n      tool_calls:\n")
	for i := range n {
		fmt.Fprintf(&s, "        - {name: call_agent, arguments: {agent: worker, task: \"f%02d\"}}\n", i)
	}
	s.WriteString("  - {name: lead-answers, match: {system: \"^LEAD\", last_role: tool}, reply: {text: \"lead {{ len .ToolResults }}\"}}\n")
	s.WriteString("  - {name: worker-writes, match: {system: \"^WORKER\", last_role: user}, reply: {tool_calls: [{name: write_file, arguments: {path: \"new/{{ .LastUser }}.txt\", content: \"{{ .LastUser }}\\n\"}}]}}\n")
	s.WriteString("  - {name: worker-answers, match: {system: \"^WORKER\", last_role: tool}, reply: {text: \"ok\"}}\n")
	return s.String()
}

func writeIsoAgents(dir, model string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	lead := fmt.Sprintf("name = \"lead\"\nmodel = %q\nsystem_prompt = \"LEAD\"\nsub_agents = [\"worker\"]\n\n[sub_agents_config]\ntimeout = 300\n", model)
	worker := "name = \"worker\"\nmodel = \"inherit\"\nsystem_prompt = \"WORKER\"\ntools = [\"write_file\"]\n"
	if err := os.WriteFile(filepath.Join(dir, "lead.toml"), []byte(lead), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "worker.toml"), []byte(worker), 0o644)
}

// printIsolation writes row 7's table.
func printIsolation(w io.Writer, r isoResult) {
	sh, iso := medianDur(r.shared), medianDur(r.isolated)
	n := time.Duration(r.o.children)
	fmt.Fprintf(w, "\n| %d children, each writing one file, in a git repository of %s files | without isolation | `--isolation worktree` | isolated / without |\n",
		r.o.children, thousands(r.o.files))
	fmt.Fprintln(w, "| --- | --- | --- | --- |")
	fmt.Fprintf(w, "| whole run, scripted model in process, median of %d | %s | %s | %s |\n", r.o.runs, dur(sh), dur(iso), ratio(iso, sh))
	fmt.Fprintf(w, "| the difference, per child | | %s | |\n", dur((iso-sh)/n))
	fw, fr := medianDur(r.floorWrite), medianDur(r.floorRemove)
	fmt.Fprintf(w, "| per child, one at a time: worktree made (snapshot of the working state, checkout), median | | %s | %s of writing the same files with os.WriteFile (%s) |\n",
		dur(medianDur(r.create)), ratio(medianDur(r.create), fw), dur(fw))
	fmt.Fprintf(w, "| per child, one at a time: work committed and merged back, median | | %s | |\n", dur(medianDur(r.merge)))
	fmt.Fprintf(w, "| per child, one at a time: worktree and branch removed, median | | %s | %s of os.RemoveAll of the same files (%s) |\n",
		dur(medianDur(r.remove)), ratio(medianDur(r.remove), fr), dur(fr))
}

func medianDur(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// rowDef is one row of the table.
type rowDef struct {
	num   int
	short string // for messages
	work  string // the table's first column
	tree  tree
	runs  int
	// inProcess: deputy plays the script in process (model script/PATH),
	// no fake server, no axe; the ideal is the leaves' latency, and memory
	// per child is measured against the same run whose root delegates to
	// no one.
	inProcess bool
	memory    bool   // report peak RSS
	config    string // deputy's config.yaml for the row, if any
	// installed: this many more agent files, Claude Code's, in the
	// user's ~/.claude/agents, which the run does not use; deputy runs
	// with them against the same run without them (baseline). No axe
	// (it reads no Claude Code files), no ideal.
	installed int
}

func rowDefs(o options) []rowDef {
	return []rowDef{
		{num: 1, short: "zero latency", runs: o.runs[1],
			work: fmt.Sprintf("parent → 2 children, zero latency, whole process, median of %d", o.runs[1]),
			tree: tree{{agent: "lead", fanout: 2}, {agent: "worker"}}},
		{num: 2, short: "nested", runs: o.runs[2],
			work: fmt.Sprintf("nested: 3 mids × 3 leaves, leaves answer after 200 ms, median of %d", o.runs[2]),
			tree: tree{{agent: "root", fanout: 3}, {agent: "mid", fanout: 3}, {agent: "leaf", latency: 200 * time.Millisecond}}},
		{num: 3, short: "flat 256", runs: o.runs[3], memory: true,
			work: fmt.Sprintf("flat fan-out: 256 children × 1 s, median of %d (wall, peak RSS)", o.runs[3]),
			tree: tree{{agent: "root", fanout: 256}, {agent: "leaf", latency: time.Second}}},
		{num: 4, short: thousands(o.children) + " in process", runs: o.runs[4], memory: true, inProcess: true,
			work: fmt.Sprintf("%s children × 1 s in one process, scripted model, median of %d (wall, peak RSS, memory per child)", thousands(o.children), o.runs[4]),
			tree: tree{{agent: "root", fanout: o.children}, {agent: "leaf", latency: time.Second}}},
		// The same with the cap the first measurement used: what
		// the default (adaptive, no cap) costs against a wide fixed one.
		{num: 5, short: thousands(o.children) + " in process, concurrency: 20000", runs: o.runs[4], memory: true, inProcess: true,
			config: "concurrency: 20000\n",
			work:   fmt.Sprintf("the same with `concurrency: 20000` in config.yaml, median of %d", o.runs[4]),
			tree:   tree{{agent: "root", fanout: o.children}, {agent: "leaf", latency: time.Second}}},
		// A run loads what it needs (issue 29): row 1's tree with 1,000
		// agent files installed that it does not use.
		{num: 6, short: "1,000 agent files installed", runs: o.runs[6], installed: 1000,
			work: fmt.Sprintf("row 1 with 1,000 Claude Code agent files installed, against the same run without them, median of %d", o.runs[6]),
			tree: tree{{agent: "lead", fanout: 2}, {agent: "worker"}}},
	}
}

// sample is one timed run of a program.
type sample struct {
	wall time.Duration
	rss  int64 // peak resident set, bytes
}

// program is one contestant of a row.
type program struct {
	name  string
	args  []string
	stdin string
	want  string
	env   []string // added to the row's environment
	// timeout bounds one run; 0 is 5 minutes.
	timeout time.Duration
}

// result is a row's medians by program name (deputy, axe, ideal, and
// baseline for row 4).
type result struct {
	def  rowDef
	meds map[string]sample
}

func (b *bench) measure(def rowDef) (result, error) {
	dir := filepath.Join(b.tmp, fmt.Sprintf("row%d", def.num))
	for _, d := range []string{"home", "config", "data", "work"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return result{}, err
		}
	}
	script := filepath.Join(dir, "script.yaml")
	if err := os.WriteFile(script, []byte(def.tree.script()), 0o644); err != nil {
		return result{}, err
	}
	if def.config != "" {
		cfg := filepath.Join(dir, "config", "deputy")
		if err := os.MkdirAll(cfg, 0o755); err != nil {
			return result{}, err
		}
		if err := os.WriteFile(filepath.Join(cfg, "config.yaml"), []byte(def.config), 0o644); err != nil {
			return result{}, err
		}
	}
	model := "openai/gpt-test"
	if def.inProcess {
		model = "script/" + script
	}
	if err := def.tree.writeAgents(filepath.Join(dir, "config", "axe", "agents"), model); err != nil {
		return result{}, err
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(dir, "home"),
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"),
		"XDG_DATA_HOME=" + filepath.Join(dir, "data"),
		"XDG_CACHE_HOME=" + filepath.Join(dir, "home", ".cache"),
		"XDG_STATE_HOME=" + filepath.Join(dir, "home", ".state"),
		"TMPDIR=" + os.TempDir(),
		"OPENAI_API_KEY=fake",
	}

	root, want := def.tree[0].agent, def.tree.want()
	progs := []program{{name: "deputy", args: []string{b.deputy, "run", "--progress=none", root, "go"}, want: want}}
	var f *fake
	if def.installed > 0 {
		// The same run in a home whose ~/.claude/agents holds the files.
		home := filepath.Join(dir, "home-installed")
		if err := writeInstalled(filepath.Join(home, ".claude", "agents"), def.installed); err != nil {
			return result{}, err
		}
		progs[0].env = []string{"HOME=" + home}
		progs = append(progs, program{name: "baseline", args: progs[0].args, want: want})
	}
	if def.inProcess {
		progs = append(progs, program{name: "baseline", args: []string{b.deputy, "run", "--progress=none", root, noChildren}, want: root + " 0|"})
	} else {
		var err error
		if f, err = startFake(b.deputy, script); err != nil {
			return result{}, err
		}
		defer f.stop()
		env = append(env, "OPENAI_BASE_URL=http://"+f.addr+"/v1/", "AXE_OPENAI_BASE_URL=http://"+f.addr)
		if b.axe != "" && def.installed == 0 {
			progs = append(progs, program{name: "axe", args: []string{b.axe, "run", root}, stdin: "go", want: want})
		}
		if def.installed == 0 {
			ideal, err := b.idealProgram(def.tree, f.addr, dir)
			if err != nil {
				return result{}, err
			}
			progs = append(progs, ideal)
		}
	}

	fmt.Fprintf(os.Stderr, "bench: row %d (%s): %d runs of %s, alternating\n", def.num, def.short, def.runs, names(progs))
	samples := map[string][]sample{}
	// One untimed run of each first (binaries into the page cache), then
	// the timed runs, the order rotating so no program always goes first.
	for i := -1; i < def.runs; i++ {
		for j := range progs {
			p := progs[(max(i, 0)+j)%len(progs)]
			// p's own variables after the row's: exec takes a key's last value.
			env := append(env[:len(env):len(env)], p.env...)
			if b.opts.cpuprofile != "" && p.name == "deputy" && i >= 0 { // the timed runs only
				file := filepath.Join(b.opts.cpuprofile, fmt.Sprintf("row%d-%03d.pprof", def.num, i+1))
				env = append(env, "DEPUTY_CPUPROFILE="+file)
			}
			s, err := b.runOnce(p, env, filepath.Join(dir, "work"))
			if err != nil {
				return result{}, fmt.Errorf("%s: %w", p.name, err)
			}
			if i >= 0 {
				samples[p.name] = append(samples[p.name], s)
			}
		}
	}
	if f != nil {
		want := map[string]int{}
		for rule, n := range def.tree.calls() {
			want[rule] = n * (def.runs + 1) * len(progs)
		}
		if err := f.check(want); err != nil {
			return result{}, err
		}
	}
	r := result{def: def, meds: map[string]sample{}}
	for _, p := range progs {
		ss := samples[p.name]
		r.meds[p.name] = median(ss)
		fmt.Fprintf(os.Stderr, "bench:   %-8s %s\n", p.name, spread(ss))
	}
	if self := selfPeakRSS(); self > 0 {
		fmt.Fprintf(os.Stderr, "bench:   the bench's own peak RSS so far %s (a program's peak RSS reads at least the bench's when it started)\n", mb(self))
	}
	return r, nil
}

// idealProgram writes the ideal client's spec for the tree and returns
// this program run as that client against the fake at addr.
func (b *bench) idealProgram(t tree, addr, dir string) (program, error) {
	spec := idealSpec{URL: "http://" + addr, Root: t[0].agent, Task: "go", Agents: map[string]idealAgent{}}
	for i, l := range t {
		a := idealAgent{System: l.system()}
		if i < len(t)-1 {
			a.Sub = t[i+1].agent
		}
		spec.Agents[l.agent] = a
	}
	file := filepath.Join(dir, "ideal.json")
	data, err := json.Marshal(spec)
	if err != nil {
		return program{}, err
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		return program{}, err
	}
	return program{name: "ideal", args: []string{b.self, "-ideal", file}, want: t.want()}, nil
}

// runOnce runs p and times it from start to exit; a run that fails or
// answers anything but p.want is an error, never a sample.
func (b *bench) runOnce(p program, env []string, dir string) (sample, error) {
	timeout := p.timeout
	if timeout == 0 {
		timeout = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.args[0], p.args[1:]...)
	cmd.Env, cmd.Dir = env, dir
	if p.stdin != "" {
		cmd.Stdin = strings.NewReader(p.stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return sample{}, fmt.Errorf("%v: %w\n%s", p.args, err, tail(stderr.String()))
	}
	if got := strings.TrimSpace(stdout.String()); got != p.want {
		return sample{}, fmt.Errorf("%v answered %q, want %q", p.args, clip(got), clip(p.want))
	}
	return sample{wall: wall, rss: peakRSS(cmd.ProcessState)}, nil
}

// median takes the median wall time and, apart, the median peak RSS.
func median(ss []sample) sample {
	w := make([]time.Duration, len(ss))
	m := make([]int64, len(ss))
	for i, s := range ss {
		w[i], m[i] = s.wall, s.rss
	}
	sort.Slice(w, func(i, j int) bool { return w[i] < w[j] })
	sort.Slice(m, func(i, j int) bool { return m[i] < m[j] })
	n := len(ss)
	if n%2 == 1 {
		return sample{wall: w[n/2], rss: m[n/2]}
	}
	return sample{wall: (w[n/2-1] + w[n/2]) / 2, rss: (m[n/2-1] + m[n/2]) / 2}
}

func spread(ss []sample) string {
	med := median(ss)
	lo, hi := ss[0].wall, ss[0].wall
	for _, s := range ss {
		lo, hi = min(lo, s.wall), max(hi, s.wall)
	}
	return fmt.Sprintf("median %s (min %s, max %s), peak RSS %s", dur(med.wall), dur(lo), dur(hi), mb(med.rss))
}

func names(ps []program) string {
	var s []string
	for _, p := range ps {
		s = append(s, p.name)
	}
	return strings.Join(s, ", ")
}

func tail(s string) string {
	if len(s) > 2000 {
		return "…" + s[len(s)-2000:]
	}
	return s
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// writeInstalled writes n Claude Code agent files into dir, as a user
// with many collections installed has them: front matter (name,
// description, tools, model) and a prompt of about 3 KB, the median of the
// committed corpus.
func writeInstalled(dir string, n int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	body := strings.Repeat("Review the change for correctness, security and style; say what to fix and why.\n", 38)
	for i := range n {
		name := fmt.Sprintf("installed-%04d", i)
		md := fmt.Sprintf("---\nname: %s\ndescription: Use this agent for task %d of the collection.\ntools: Read, Grep, Glob, Bash\nmodel: sonnet\n---\n\nYou are agent %d.\n\n%s", name, i, i, body)
		if err := os.WriteFile(filepath.Join(dir, name+".md"), []byte(md), 0o644); err != nil {
			return err
		}
	}
	return nil
}

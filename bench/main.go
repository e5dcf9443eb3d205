// Command bench measures deputy against axe on the same fake provider and
// the same agent files, in one run, and prints a markdown table of ratios
// (deputy/axe, deputy/ideal, axe/ideal). docs/performance.md explains the
// rows and holds the table of a real run.
//
//	go run ./bench --axe-src /path/to/axe     # builds axe and deputy
//	go run ./bench --axe /path/to/axe-binary  # an axe already built
//	go run ./bench                            # deputy's rows only
//
// It is a program, not a test: it runs for about a minute and its figures
// depend on the machine, so `go test ./...` never runs it. Nothing here
// reaches the network; the provider is `deputy fake-llm` on 127.0.0.1.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type options struct {
	deputy, axe, axeSrc string
	keep                bool
	cpuprofile          string // directory for deputy's CPU profiles, one a run
	rows                string
	runs                [8]int // runs per row, by row number
	children            int    // row 4's width
	iso                 isoOptions
	idealSpec           string // internal: act as the ideal client
}

func run() error {
	var o options
	flag.StringVar(&o.deputy, "deputy", "", "deputy binary to measure (default: go build ./cmd/deputy from the current module)")
	flag.StringVar(&o.axe, "axe", "", "axe binary to measure against")
	flag.StringVar(&o.axeSrc, "axe-src", "", "axe source directory (a clone of github.com/jrswab/axe) to build with go build")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory (agents, scripts, ledgers) and print its path")
	flag.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of every deputy run into this directory (rowN-RUN.pprof, through DEPUTY_CPUPROFILE), timed runs only, for go tool pprof; the timings then include the profiler's cost")
	flag.StringVar(&o.rows, "rows", "1,2,3,4,5,6", "rows to run, comma-separated (5 is row 4 with concurrency: 20000; 6 is row 1 with 1,000 agent files installed; 7, isolated children in a git repository, runs only when named)")
	flag.IntVar(&o.runs[1], "n1", 22, "runs of each program for row 1 (zero latency)")
	flag.IntVar(&o.runs[2], "n2", 7, "runs of each program for row 2 (nested 3×3)")
	flag.IntVar(&o.runs[3], "n3", 5, "runs of each program for row 3 (flat 256)")
	flag.IntVar(&o.runs[4], "n4", 5, "runs of deputy for rows 4 and 5 (10,000 children), and as many of their baseline")
	flag.IntVar(&o.runs[6], "n6", 22, "runs of each program for row 6 (1,000 agent files installed)")
	flag.IntVar(&o.children, "children", 10000, "row 4's number of children")
	flag.IntVar(&o.runs[7], "n7", 5, "runs of each program for row 7 (isolated children)")
	flag.IntVar(&o.iso.children, "isolated", 32, "row 7's number of isolated children")
	flag.IntVar(&o.iso.files, "files", 10000, "row 7's number of files in the repository")
	flag.StringVar(&o.idealSpec, "ideal", "", "internal: run the ideal client from this JSON file")
	flag.Parse()
	if o.idealSpec != "" {
		return idealMain(o.idealSpec)
	}
	if o.axe != "" && o.axeSrc != "" {
		return fmt.Errorf("give --axe or --axe-src, not both")
	}
	for i, n := range o.runs {
		if i != 0 && i != 5 && n < 1 { // row 5 runs -n4 times
			return fmt.Errorf("every -nN must be at least 1")
		}
	}
	if o.cpuprofile != "" {
		abs, err := filepath.Abs(o.cpuprofile)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return err
		}
		o.cpuprofile = abs
	}
	if o.children < 1 {
		return fmt.Errorf("-children must be at least 1")
	}
	o.iso.runs = o.runs[7]
	if o.iso.children < 1 || o.iso.files < 1 {
		return fmt.Errorf("-isolated and -files must be at least 1")
	}
	want := map[int]bool{}
	for _, r := range strings.Split(o.rows, ",") {
		switch r = strings.TrimSpace(r); r {
		case "1", "2", "3", "4", "5", "6", "7":
			want[int(r[0]-'0')] = true
		default:
			return fmt.Errorf("-rows: %q is not a row (1 to 7)", r)
		}
	}

	tmp, err := os.MkdirTemp("", "deputy-bench-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Fprintln(os.Stderr, "bench: files in", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}

	b := &bench{opts: o, tmp: tmp, loadStart: loadAvg()}
	if err := b.prepare(); err != nil {
		return err
	}
	var rows []result
	for _, def := range rowDefs(o) {
		if !want[def.num] {
			continue
		}
		r, err := b.measure(def)
		if err != nil {
			return fmt.Errorf("row %d (%s): %w", def.num, def.short, err)
		}
		rows = append(rows, r)
	}
	var iso isoResult
	if want[7] {
		if iso, err = b.measureIsolation(o.iso); err != nil {
			return fmt.Errorf("row 7 (isolation): %w", err)
		}
	}
	b.printTable(os.Stdout, rows)
	if want[7] {
		printIsolation(os.Stdout, iso)
	}
	return nil
}

// bench holds what every row shares: the binaries and the scratch directory.
type bench struct {
	opts              options
	tmp               string
	deputy, axe       string // binaries (fresh copies); axe may be ""
	deputyPath        string // the binaries as built or given, for the table's header
	axePath           string
	self              string // this program, re-run as the ideal client
	deputyRev, axeRev string
	loadStart         string // load average when the bench began
}

// prepare builds or finds the binaries.
func (b *bench) prepare() error {
	bin := filepath.Join(b.tmp, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	var err error
	if b.self, err = os.Executable(); err != nil {
		return err
	}
	b.deputy = b.opts.deputy
	if b.deputy == "" {
		b.deputy = filepath.Join(bin, "deputy")
		fmt.Fprintln(os.Stderr, "bench: building deputy (go build ./cmd/deputy)")
		if err := goBuild(".", "./cmd/deputy", b.deputy); err != nil {
			return err
		}
		b.deputyRev = gitRev(".")
	}
	switch {
	case b.opts.axe != "":
		b.axe = b.opts.axe
	case b.opts.axeSrc != "":
		b.axe = filepath.Join(bin, "axe")
		fmt.Fprintln(os.Stderr, "bench: building axe in", b.opts.axeSrc)
		if err := goBuild(b.opts.axeSrc, ".", b.axe); err != nil {
			return err
		}
		b.axeRev = gitRev(b.opts.axeSrc)
	}
	// Every contestant runs from a copy written now, into the scratch
	// directory. On this kind of machine a binary whose file was written
	// hours ago starts 10-15 % slower than an identical one written a
	// moment ago (the page cache holds an old file's pages differently),
	// so measuring a fresh build against an old --axe or --deputy file
	// would favour one side. Copies are absolute paths too, since every
	// program runs in its row's own directory.
	for _, c := range []struct {
		p, given *string // the binary; its path as built or given, for the header
		name     string
	}{{&b.deputy, &b.deputyPath, "deputy"}, {&b.axe, &b.axePath, "axe"}, {&b.self, new(string), "bench"}} {
		if *c.p == "" {
			continue
		}
		*c.given = *c.p
		dst := filepath.Join(bin, c.name+"-measured")
		if err := copyFile(*c.p, dst); err != nil {
			return err
		}
		*c.p = dst
	}
	return nil
}

// copyFile writes a fresh executable copy of src at dst, 1 MB at a time
// through plain reads and writes. Not read whole: on Linux a child started
// by os/exec (which shares the parent's memory until it execs) reports in
// ru_maxrss at least the parent's own peak, so holding a 100 MB binary in
// memory once made every program's peak RSS read the bench's 120 MB.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	// Only the Reader and Writer: no copy_file_range or sendfile, so the
	// copy's pages are written as os.WriteFile wrote them.
	_, err = io.CopyBuffer(struct{ io.Writer }{out}, struct{ io.Reader }{in}, make([]byte, 1<<20))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

func goBuild(dir, pkg, out string) error {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s in %s: %w", pkg, dir, err)
	}
	return nil
}

// gitRev names the commit a binary was built from, for the table's header;
// "" when dir is not a git checkout.
func gitRev(dir string) string {
	out, err := exec.Command("git", "-C", dir, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	rev := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		rev += "+changes"
	}
	return rev
}

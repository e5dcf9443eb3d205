package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

const none = "—"

// printTable writes the machine, the binaries and the table in markdown.
func (b *bench) printTable(w io.Writer, rows []result) {
	fmt.Fprintf(w, "Machine: %d cores (%s), %s/%s, %s; load average %s.\n",
		runtime.NumCPU(), cpuModel(), runtime.GOOS, runtime.GOARCH, runtime.Version(), b.loadStart+" at the start, "+loadAvg()+" at the end")
	fmt.Fprintf(w, "deputy: %s", orNone(b.deputyRev, b.deputyPath))
	if b.axe != "" {
		fmt.Fprintf(w, "; axe: %s", orNone(b.axeRev, b.axePath))
	}
	fmt.Fprint(w, "\n")
	if len(rows) == 0 {
		return // row 7 alone: its own table
	}
	fmt.Fprint(w, "\n")
	fmt.Fprintln(w, "| work | axe | deputy | ideal | deputy/axe | deputy/ideal | axe/ideal |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- |")
	for _, r := range rows {
		dep, ax, id := r.meds["deputy"], r.meds["axe"], r.meds["ideal"]
		hasAxe := b.axe != "" && !r.def.inProcess && r.def.installed == 0
		cells := []string{r.def.work, none, cell(dep, r.def.memory), none, none, none, none}
		if hasAxe {
			cells[1] = cell(ax, r.def.memory)
			cells[4] = ratios(dep, ax, r.def.memory)
		}
		if r.def.installed > 0 {
			// The ideal is the same run without the files.
			base := r.meds["baseline"]
			cells[3] = fmt.Sprintf("%s (without the files)", dur(base.wall))
			cells[5] = ratio(dep.wall, base.wall)
		} else if r.def.inProcess {
			// The ideal is the same process with no children (its start,
			// ledger, parsing the script, the root's answer) plus the
			// leaves' latency: every child at once, for free.
			base := r.meds["baseline"]
			lat := r.def.tree.latency()
			id = sample{wall: base.wall + lat}
			cells[3] = fmt.Sprintf("%s (0 children: %s, + latency %s)", dur(id.wall), dur(base.wall), dur(lat))
			perChild := float64(dep.rss-base.rss) / float64(r.def.tree.agents())
			cells[2] += fmt.Sprintf("; 0 children: %s → **%.1f KB per child**", mb(base.rss), perChild/1024)
			cells[5] = fmt.Sprintf("%s (%.2f against the latency alone)", ratio(dep.wall, id.wall), float64(dep.wall)/float64(lat))
		} else {
			cells[3] = cell(id, r.def.memory)
			if lat := r.def.tree.latency(); lat > 0 {
				cells[3] += " (latency " + dur(lat) + ")"
			}
			cells[5] = ratios(dep, id, r.def.memory)
			if hasAxe {
				cells[6] = ratios(ax, id, r.def.memory)
			}
		}
		fmt.Fprintln(w, "| "+strings.Join(cells, " | ")+" |")
	}
}

func cell(s sample, memory bool) string {
	if memory {
		return dur(s.wall) + ", " + mb(s.rss)
	}
	return dur(s.wall)
}

// ratios is the ratio of wall times, and of peak RSS where measured.
func ratios(a, b sample, memory bool) string {
	r := ratio(a.wall, b.wall)
	if memory && b.rss > 0 {
		r += fmt.Sprintf(" (memory %.1f)", float64(a.rss)/float64(b.rss))
	}
	return r
}

func ratio(a, b time.Duration) string {
	if b <= 0 {
		return none
	}
	return fmt.Sprintf("**%.2f**", float64(a)/float64(b))
}

func dur(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

func mb(n int64) string {
	return fmt.Sprintf("%.0f MB", float64(n)/(1<<20))
}

// thousands writes n with a comma between each group of three digits.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func orNone(rev, path string) string {
	if rev != "" {
		return "commit " + rev
	}
	return path
}

func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// timing measures where a short command spends its time, for start-up work
// (bench/NOTES.md, "Start-up"). It is on when DEPUTY_TIMING holds the
// wall-clock time the command was started, in Unix nanoseconds, as
//
//	DEPUTY_TIMING=$(date +%s%N) deputy run lead go
//
// sets it; Main then prints one line on stderr when the command ends:
//
//	deputy: timing: start 8.41 ms, config 0.52 ms, ledger open 1.85 ms, run 4.70 ms, ledger close 0.35 ms, exit 0.05 ms, total 15.88 ms
//
// "start" is everything before Main: the exec, the Go runtime's start and
// every package's initialisation. A nil *timing measures nothing.
type timing struct {
	last  time.Time
	t0    time.Time
	parts []string
}

// cmdTiming is the command's timing, set by Main; nil unless DEPUTY_TIMING is.
var cmdTiming *timing

// newTiming returns a timing started at env's time, or nil when env is not
// a Unix time in nanoseconds.
func newTiming(env string) *timing {
	ns, err := strconv.ParseInt(env, 10, 64)
	if err != nil || ns <= 0 {
		return nil
	}
	t0 := time.Unix(0, ns)
	return &timing{t0: t0, last: t0}
}

// mark ends a phase named name.
func (t *timing) mark(name string) {
	if t == nil {
		return
	}
	now := time.Now()
	t.parts = append(t.parts, fmt.Sprintf("%s %.2f ms", name, ms(now.Sub(t.last))))
	t.last = now
}

// print ends the last phase ("exit") and writes the line.
func (t *timing) print(w io.Writer) {
	if t == nil {
		return
	}
	t.mark("exit")
	fmt.Fprintf(w, "deputy: timing: %s, total %.2f ms\n", strings.Join(t.parts, ", "), ms(t.last.Sub(t.t0)))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

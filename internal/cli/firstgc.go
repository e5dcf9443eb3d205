package cli

import (
	"os"
	"runtime"
	"runtime/debug"
)

// firstGCPercent is GOGC until the first garbage collection. The runtime's
// first heap goal is 4 MB × GOGC/100: at the default 100, a tree of a
// dozen model calls (bench row 2, bench/NOTES.md) collected once, near
// its end, on the path to its answer, for a heap it was about to drop.
const firstGCPercent = 200

// deferFirstGC makes the first collection wait until the heap reaches
// 8 MB instead of 4 MB, and puts GOGC back once it has happened: a short
// run does not collect at all, and a long or wide one collects as before
// after its first cycle, so its peak memory (set by its live heap, far
// above 8 MB) is unchanged. A GOGC set in the environment is left alone.
func deferFirstGC() {
	if os.Getenv("GOGC") != "" {
		return
	}
	old := debug.SetGCPercent(firstGCPercent)
	// The sentinel is unreachable at once: the first cycle finds it so,
	// and its cleanup restores GOGC. (64 bytes: the tiny allocator's
	// blocks, below 16, may outlive their objects.)
	sentinel := new([64]byte)
	runtime.AddCleanup(sentinel, func(old int) { debug.SetGCPercent(old) }, old)
}

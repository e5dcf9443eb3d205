//go:build unix

package main

import (
	"os"
	"runtime"
	"syscall"
)

// peakRSS is the peak resident set of a finished process, in bytes.
func peakRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss) // bytes there
	}
	return int64(ru.Maxrss) * 1024 // kilobytes on Linux and the BSDs
}

// selfPeakRSS is the bench's own peak resident set, in bytes: on Linux a
// child's ru_maxrss is at least its parent's peak at the moment it was
// started (os/exec starts it sharing the parent's memory until it execs),
// so no program's peak RSS can read below this.
func selfPeakRSS() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) * 1024
}

package store

import (
	"os"
	"sync"
)

// owner identifies the process that records a run, so that a later Open can tell
// whether that process still exists. The pid alone is not enough: pids are reused,
// and a pid means nothing on another host. start is a marker of the process's start
// (on Linux the boot id and the start time in clock ticks), empty where the
// platform has none.
type owner struct {
	pid   int
	host  string
	start string
}

var (
	selfOnce sync.Once
	self     owner
	// selfArgs is self's columns as a statement's arguments, converted to
	// interfaces once: every run a process records binds them, and
	// converting a string or a large int to an interface allocates.
	selfArgs [3]any
)

// currentOwner is this process.
func currentOwner() owner {
	selfOnce.Do(func() {
		host, _ := os.Hostname()
		pid := os.Getpid()
		start, _ := processStart(pid)
		self = owner{pid: pid, host: host, start: start}
		selfArgs = [3]any{int64(pid), host, start}
	})
	return self
}

// currentOwnerArgs is currentOwner's pid, host and start as statement
// arguments (read only: they are shared).
func currentOwnerArgs() (pid, host, start any) {
	currentOwner()
	return selfArgs[0], selfArgs[1], selfArgs[2]
}

// ownerGone reports whether o is known to have exited. It errs on the side of "still
// running": a run is marked interrupted only on evidence, because interrupting a live
// run in another process would be worse than leaving a dead one marked running.
func ownerGone(o owner) bool {
	me := currentOwner()
	if o.host != me.host {
		return false // another machine's processes cannot be checked from here
	}
	if o.pid <= 0 {
		return true // no owner was recorded: nobody can be running it
	}
	if o == me {
		return false
	}
	if !processExists(o.pid) {
		return true
	}
	// The pid exists: is it still the same process, and not a zombie?
	start, zombie := processStart(o.pid)
	if zombie {
		return true
	}
	return o.start != "" && start != "" && start != o.start
}

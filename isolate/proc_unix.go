//go:build unix

package isolate

import (
	"errors"
	"os"
	"syscall"
)

// processRunning reports whether a process with this pid exists (kill with
// signal 0 checks without sending anything; EPERM is another user's).
func processRunning(pid int) bool {
	if pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return true
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

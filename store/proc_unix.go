//go:build unix

package store

import (
	"errors"
	"syscall"
)

// processExists reports whether a process with this pid exists, using kill(pid, 0),
// which checks without sending anything. EPERM means it exists but belongs to
// another user.
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

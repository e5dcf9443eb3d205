//go:build unix

package cli

import (
	"os"
	"syscall"
)

// execTemporal replaces this process with deputy-temporal, so that its
// signals (Ctrl-C, SIGTERM) and its exit status are its own. It returns
// only when that fails.
func execTemporal(path string, args []string) (int, error) {
	return 0, syscall.Exec(path, append([]string{path}, args...), os.Environ())
}

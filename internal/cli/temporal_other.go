//go:build !unix

package cli

import (
	"errors"
	"os"
	"os/exec"
)

// execTemporal runs deputy-temporal on this process's standard streams and
// returns its exit code: without exec(2), deputy waits for it.
func execTemporal(path string, args []string) (int, error) {
	cmd := exec.Command(path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), nil
	}
	return 0, err
}

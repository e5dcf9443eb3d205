//go:build !linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

func hideMemory() {}

// ABI returns 0: Landlock is Linux only.
func ABI() int { return 0 }

// outer runs the command directly: without a subreaper, only the process
// group can be killed.
func outer(_ string, argv []string) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		fmt.Fprintln(os.Stderr, "deputy sandbox:", err)
		return 126
	}
	return 0
}

func inner(_ Policy, argv []string) int {
	return outer("", argv)
}

var _ = syscall.Getpid

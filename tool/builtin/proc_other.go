//go:build !unix

package builtin

import "os/exec"

// ownProcessGroup is a no-op where process groups are not available.
func ownProcessGroup(*exec.Cmd) {}

// killProcessGroup kills the shell; its children may survive here.
func killProcessGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

// terminate kills the shell: there is no helper to ask.
func terminate(cmd *exec.Cmd) { killProcessGroup(cmd) }

//go:build unix

package builtin

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup starts cmd as the leader of a new process group, so that
// it and everything it spawns can be killed together.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killProcessGroup sends SIGKILL to cmd's whole process group. The group
// id is the shell's pid, which is not reused while any member of the group
// lives; once the group is empty the kill finds nobody (ESRCH), unless the
// pid has since wrapped around to a new group leader, a window too small
// to design for.
func killProcessGroup(cmd *exec.Cmd) {
	if cmd.Process == nil || cmd.Process.Pid <= 0 {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// terminate asks cmd's process to end (SIGTERM); the sandbox helper then
// kills everything the command started.
func terminate(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Signal(syscall.SIGTERM)
	}
}

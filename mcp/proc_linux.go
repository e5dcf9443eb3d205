package mcp

import "syscall"

// dieWithParent has Linux kill the server when deputy's process ends,
// however it ends (kill -9 included), so no server outlives its run.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

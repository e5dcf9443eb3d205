//go:build unix && !linux

package mcp

import "syscall"

// dieWithParent: only Linux can tie a child's life to its parent's; there
// a server started by npx also ends when its stdin closes with deputy.
func dieWithParent(*syscall.SysProcAttr) {}

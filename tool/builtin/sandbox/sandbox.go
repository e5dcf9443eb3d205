// Package sandbox confines the commands of the terminal tool.
//
// A command runs under a helper: the program re-executes itself with the
// hidden first argument HelperArg. The outer helper makes itself a child
// subreaper, so every process the command starts — in the background,
// under setsid, daemonized — stays its descendant, and kills them all when
// the command ends or the helper is told to stop (SIGTERM). It starts an
// inner helper, which on Linux restricts itself with Landlock (read access
// to system directories and the working directory, write access to the
// working directory and a private temp directory, no network unless the
// policy allows it) and then execs the shell, so the restriction covers the
// command and all it starts.
//
// A program that wants this calls Main first thing in its main function;
// Enabled then reports that its executable can serve as the helper.
package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
)

// HelperArg is the hidden first argument that runs a program as the
// sandbox helper.
const HelperArg = "__deputy_sandbox"

// Policy is what a confined command may do.
type Policy struct {
	// Workdir is readable and writable.
	Workdir string `json:"workdir"`
	// TempDir is the command's private temporary directory, readable and
	// writable ($TMPDIR points to it).
	TempDir string `json:"tmpdir"`
	// ReadPaths and WritePaths add directories (or files) the user granted.
	ReadPaths  []string `json:"read,omitempty"`
	WritePaths []string `json:"write,omitempty"`
	// Network allows TCP and UDP; false denies them (where the kernel can).
	Network bool `json:"network,omitempty"`
}

var (
	mu      sync.Mutex
	enabled bool
)

// Main runs the helper when args (os.Args) say so, and then exits; else it
// records that this program can serve as the helper and returns.
//
// On Linux it also makes the program non-dumpable (no core dump, and its
// /proc/<pid>/environ and mem closed to other processes of its user): the
// commands it will run are the same user's, and without that they could
// read its environment, provider keys included, from /proc whenever
// Landlock does not confine them (terminal.sandbox: false, an old kernel).
// Root's commands can still read it.
func Main(args []string) {
	if len(args) >= 2 && args[1] == HelperArg {
		os.Exit(helperMain(args[2:]))
	}
	hideMemory()
	mu.Lock()
	enabled = true
	mu.Unlock()
}

// Enabled reports whether Main was called, that is whether this program's
// executable can run commands under the helper.
func Enabled() bool {
	mu.Lock()
	defer mu.Unlock()
	return enabled
}

// Command returns the command that runs `sh -c script` under the helper
// with policy p. The caller sets Dir, Env, and output; it must run the
// command in its own process group and, to stop it, send SIGTERM to the
// returned process first (the helper then kills everything the command
// started), SIGKILL to the group only after a grace period.
func Command(p Policy, script string) (*exec.Cmd, error) {
	if !Enabled() {
		return nil, errors.New("sandbox: the program did not call sandbox.Main")
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	pj, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	return exec.Command(exe, HelperArg, "outer", string(pj), "sh", "-c", script), nil
}

func helperMain(args []string) int {
	if len(args) < 3 {
		fmt.Fprintln(os.Stderr, "deputy sandbox: bad helper arguments")
		return 126
	}
	var p Policy
	if err := json.Unmarshal([]byte(args[1]), &p); err != nil {
		fmt.Fprintln(os.Stderr, "deputy sandbox: bad policy:", err)
		return 126
	}
	switch args[0] {
	case "outer":
		return outer(args[1], args[2:])
	case "inner":
		return inner(p, args[2:])
	}
	fmt.Fprintln(os.Stderr, "deputy sandbox: unknown helper mode", args[0])
	return 126
}

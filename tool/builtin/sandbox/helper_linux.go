package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// ABI returns the Landlock ABI version the kernel offers, 0 when it offers
// none (then commands run unconfined, but still reaped).
func ABI() int {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}

// hideMemory makes this process non-dumpable (see Main). An exec'd
// program (the helper, a command) is dumpable again.
func hideMemory() {
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}

// outer is the subreaper: it runs the inner helper, waits for it, then
// kills whatever the command left behind.
func outer(policy string, argv []string) int {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "deputy sandbox: cannot become a subreaper:", err)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "deputy sandbox:", err)
		return 126
	}
	cmd := exec.Command(exe, append([]string{HelperArg, "inner", policy}, argv...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "deputy sandbox:", err)
		return 126
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-stop:
		killDescendants()
		werr = <-done
	}
	killDescendants()
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			// End the way the command ended, so the caller sees the
			// signal, not an exit code.
			signal.Reset(ws.Signal())
			_ = syscall.Kill(os.Getpid(), ws.Signal())
			time.Sleep(time.Second)
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if werr != nil {
		return 126
	}
	return 0
}

// killDescendants sends SIGKILL to every descendant of this process, then
// reaps them; orphans of killed processes are reparented here (we are a
// subreaper), so it repeats until none is left. Bounded: a fork bomb that
// outruns it gets 200 rounds.
func killDescendants() {
	self := os.Getpid()
	for round := 0; round < 200; round++ {
		pids := descendants(self)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		// Reap what died, so it leaves the process table.
		deadline := time.Now().Add(time.Second)
		for time.Now().Before(deadline) {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if err != nil || pid == 0 {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// descendants lists the processes below pid, from /proc.
func descendants(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		_, rest, ok := strings.Cut(string(stat), ") ")
		f := strings.Fields(rest)
		if !ok || len(f) < 2 {
			continue
		}
		if f[0] == "Z" {
			// A zombie is already dead; reaping takes care of it.
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		children[pp] = append(children[pp], p)
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		c := children[queue[0]]
		queue = queue[1:]
		out = append(out, c...)
		queue = append(queue, c...)
	}
	return out
}

// systemReadDirs are readable by every command: programs, libraries,
// configuration, devices and process information.
var systemReadDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/proc", "/dev", "/sys", "/nix", "/snap", "/run"}

// inner restricts itself with Landlock (and, without network, a seccomp
// filter) and execs the command.
func inner(p Policy, argv []string) int {
	// The seccomp filter is the calling thread's: this goroutine stays on
	// it until the exec, which keeps it.
	runtime.LockOSThread()
	if ABI() > 0 {
		rules := []landlock.Rule{
			landlock.RODirs(systemReadDirs...).IgnoreIfMissing(),
			landlock.RWFiles("/dev/null", "/dev/zero", "/dev/full", "/dev/tty").IgnoreIfMissing(),
			landlock.RWDirs(p.Workdir).WithRefer(),
		}
		if p.TempDir != "" {
			rules = append(rules, landlock.RWDirs(p.TempDir).WithRefer())
		}
		for _, r := range p.ReadPaths {
			rules = append(rules, landlock.PathAccess(readAccess(r), r).IgnoreIfMissing())
		}
		for _, w := range p.WritePaths {
			rules = append(rules, landlock.RWDirs(w).WithRefer().IgnoreIfMissing())
		}
		cfg := landlock.V11.BestEffort()
		var err error
		if p.Network {
			err = cfg.RestrictPaths(rules...)
			if err == nil {
				err = cfg.RestrictScoped()
			}
		} else {
			err = cfg.Restrict(rules...)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "deputy sandbox: cannot apply Landlock:", err)
			return 126
		}
		if !p.Network {
			if err := denyNetwork(); err != nil && !errors.Is(err, errNoSeccompArch) {
				fmt.Fprintln(os.Stderr, "deputy sandbox: cannot deny the network:", err)
				return 126
			}
		}
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "deputy sandbox:", err)
		return 127
	}
	env := os.Environ()
	if ABI() > 0 {
		env = gitGlobalConfig(env)
	}
	err = syscall.Exec(path, argv, env)
	fmt.Fprintln(os.Stderr, "deputy sandbox: exec:", err)
	return 126
}

// readAccess is the read right of a directory, or of a file.
func readAccess(path string) landlock.AccessFSSet {
	if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
		return landlock.AccessFSSet(llsys.AccessFSReadFile)
	}
	return landlock.AccessFSSet(llsys.AccessFSReadFile | llsys.AccessFSReadDir | llsys.AccessFSExecute)
}

// gitGlobalConfig keeps git working under the restriction just applied.
// git reads the user's global configuration ($HOME/.gitconfig and
// $XDG_CONFIG_HOME/git/config, or ~/.config/git/config) and stops with
// "fatal: unknown error occurred while reading the configuration files"
// when one exists but may not be read, which is the case for every file of
// the home directory the user did not grant. So when one is denied, git is
// pointed at a global configuration it may read (GIT_CONFIG_GLOBAL): the
// one the user granted, ~/.gitconfig first as git lets it win, else none
// (/dev/null). A GIT_CONFIG_GLOBAL the user passed on is left alone. This
// runs after Landlock is applied, so "may be read" is the kernel's answer,
// not a guess from the policy.
func gitGlobalConfig(env []string) []string {
	get := func(name string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], name+"="); ok {
				return v
			}
		}
		return ""
	}
	if get("GIT_CONFIG_GLOBAL") != "" {
		return env
	}
	home := get("HOME")
	xdg := get("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	var candidates []string // in the order git prefers them
	if home != "" {
		candidates = append(candidates, filepath.Join(home, ".gitconfig"))
	}
	if xdg != "" {
		candidates = append(candidates, filepath.Join(xdg, "git", "config"))
	}
	use, denied := "", false
	for _, c := range candidates {
		f, err := os.Open(c)
		switch {
		case err == nil:
			f.Close()
			if use == "" {
				use = c
			}
		case errors.Is(err, os.ErrPermission):
			denied = true
		}
	}
	if !denied {
		return env
	}
	if use == "" {
		use = os.DevNull
	}
	return append(env, "GIT_CONFIG_GLOBAL="+use)
}

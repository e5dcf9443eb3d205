//go:build linux

package builtin

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deputyhq/deputy/tool"
	"github.com/deputyhq/deputy/tool/builtin/sandbox"
)

func needLandlock(t *testing.T) {
	t.Helper()
	if sandbox.ABI() == 0 {
		t.Skip("Landlock is not available on this kernel")
	}
}

// A command may read and write its working directory, but not read a key
// file elsewhere in the home directory, nor write outside.
func TestTerminalSandboxFiles(t *testing.T) {
	needLandlock(t)
	home := t.TempDir()
	ssh := filepath.Join(home, ".ssh")
	if err := os.MkdirAll(ssh, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ssh, "id_ed25519"), []byte("PRIVATE-KEY-MATERIAL"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, _ := testRegistry(t, Options{}, map[string]string{"in.txt": "inside\n"})

	res := call(t, r, Terminal, map[string]any{"command": "cat " + filepath.Join(ssh, "id_ed25519")})
	wantErr(t, res, "Permission denied", "[exit status 1]")
	if strings.Contains(res.Content, "PRIVATE-KEY-MATERIAL") {
		t.Fatalf("the sandbox let a command read a key outside the workdir: %s", res.Content)
	}
	wantErr(t, call(t, r, Terminal, map[string]any{"command": "ls " + ssh}), "Permission denied")
	outside := filepath.Join(home, "planted")
	wantErr(t, call(t, r, Terminal, map[string]any{"command": "echo x > " + outside}), "Permission denied")
	if _, err := os.Stat(outside); err == nil {
		t.Fatal("the sandbox let a command write outside the workdir")
	}
	// Inside: reading, writing, the private temp dir.
	wantOK(t, call(t, r, Terminal, map[string]any{"command": "cat in.txt && echo new > out.txt && cat out.txt"}), "inside\nnew\n")
	wantOK(t, call(t, r, Terminal, map[string]any{"command": `f="$TMPDIR/x" && echo tmp > "$f" && cat "$f"`}), "tmp\n")

	// A granted read path is readable.
	r2, _ := testRegistry(t, Options{TerminalReadPaths: []string{ssh}}, nil)
	wantOK(t, call(t, r2, Terminal, map[string]any{"command": "cat " + filepath.Join(ssh, "id_ed25519")}), "PRIVATE-KEY-MATERIAL")
}

// Nothing a command started survives it: not a background job, not a
// process in its own session (setsid), not a double-forked daemon.
func TestTerminalKillsEverythingItStarted(t *testing.T) {
	marker := strconv.Itoa(3000 + os.Getpid()%1000) // sleep's argument, to find it
	r, _ := testRegistry(t, Options{}, nil)
	cmd := "sleep " + marker + ".1 & setsid sleep " + marker + ".2 & (setsid sh -c 'sleep " + marker + ".3 &' &); sleep 0.2; echo started"
	wantOK(t, call(t, r, Terminal, map[string]any{"command": cmd}), "started")
	// The helper kills synchronously before it exits; allow the kernel a
	// moment to tear the processes down.
	var left []string
	for i := 0; i < 50; i++ {
		left = processesWith("sleep\x00" + marker)
		if len(left) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("processes outlived the command: %v", left)
}

// processesWith lists the live processes whose command line contains s.
func processesWith(s string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if _, rest, ok := strings.Cut(string(stat), ") "); ok && strings.HasPrefix(rest, "Z") {
			continue
		}
		cl, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if bytes.Contains(cl, []byte(s)) {
			out = append(out, e.Name()+":"+strings.ReplaceAll(string(cl), "\x00", " "))
		}
	}
	return out
}

// A command cannot reach the network unless terminal.network allows it:
// it cannot connect to a listener this test opens on 127.0.0.1, over TCP
// or MPTCP (which Landlock's TCP rules do not cover), nor open a listener
// of its own. The client is this test binary (netProbe), readable by the
// command through a granted read path. With network allowed, the very
// same commands connect: the probe is not what fails.
func TestTerminalSandboxDeniesNetwork(t *testing.T) {
	switch abi := sandbox.ABI(); {
	case abi == 0:
		t.Skip("Landlock is not available on this kernel: the sandbox confines nothing here")
	case abi < 4 && runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64":
		t.Skipf("Landlock ABI %d has no network rules (needs ABI 4), and there is no seccomp filter for %s", abi, runtime.GOARCH)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan string, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 16)
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			n, _ := c.Read(buf)
			c.Close()
			accepted <- string(buf[:n])
		}
	}()
	addr := ln.Addr().String()
	probe := func(r *tool.Registry, op, addr string) tool.Result {
		t.Helper()
		return call(t, r, Terminal, map[string]any{"command": exe + " " + netProbeArg + " " + op + " " + addr})
	}
	read := []string{filepath.Dir(exe)}

	denied, _ := testRegistry(t, Options{TerminalReadPaths: read}, nil)
	wantOK(t, probe(denied, "dial", addr), "probe: dial tcp "+addr+": ", "permission denied")
	wantOK(t, probe(denied, "mptcp", addr), "probe: socket: permission denied")
	wantOK(t, probe(denied, "listen", "127.0.0.1:0"), "probe: listen tcp 127.0.0.1:0: ", "permission denied")
	// Not only IPv4 and IPv6 are refused: AF_VSOCK reaches a virtual
	// machine's host. Local sockets still work.
	wantOK(t, probe(denied, "vsock", "-"), "probe: socket: permission denied")
	wantOK(t, probe(denied, "local", "-"), "probe: ok")

	allowed, _ := testRegistry(t, Options{TerminalReadPaths: read, TerminalNetwork: true}, nil)
	wantOK(t, probe(allowed, "dial", addr), "probe: ok")
	wantOK(t, probe(allowed, "listen", "127.0.0.1:0"), "probe: ok")
	switch res := probe(allowed, "vsock", "-"); {
	case strings.Contains(res.Content, "address family not supported"):
		t.Log("this kernel has no AF_VSOCK")
	default:
		wantOK(t, res, "probe: ok")
	}
	want := 1
	switch res := probe(allowed, "mptcp", addr); {
	case strings.Contains(res.Content, "protocol not supported"):
		t.Log("this kernel has no MPTCP: the MPTCP probe shows nothing more than the TCP one")
	default:
		wantOK(t, res, "probe: ok")
		want++
	}

	// The connections the listener saw are the allowed commands': the
	// denied ones never arrived (they would have been queued before their
	// commands ended, and the listener takes connections in order).
	for i := 0; i < want; i++ {
		select {
		case got := <-accepted:
			if got != "probe\n" {
				t.Errorf("the listener received %q, want an allowed probe's line", got)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d of the allowed probes' %d connections arrived", i, want)
		}
	}
	select {
	case got := <-accepted:
		t.Fatalf("one connection too many arrived (%q): a denied command reached the listener", got)
	default:
	}
}

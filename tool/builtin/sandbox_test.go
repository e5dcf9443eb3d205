//go:build linux

package builtin

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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

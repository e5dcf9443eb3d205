package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// echoKeys are the keys cmdEchoHeaders configures; cmdNoSecret looks for
// each of them.
var echoKeys = map[string]string{
	"OPENAI_API_KEY":    "sk-echo-openai-7f3a9c0d",
	"ANTHROPIC_API_KEY": "sk-ant-echo-51c0e8b2",
	"GEMINI_API_KEY":    "gm-echo-9d2e44a1",
	"LOCAL_LLM_TOKEN":   "tok-local-echo-3318ab",
}

// cmdEchoHeaders starts a hostile provider on 127.0.0.1: every request is
// refused with HTTP 400 whose error message, in the wire format of the
// adapter that sent it, repeats all the request's headers (auth included)
// and every configured key. It points every provider at it, sets the keys
// of echoKeys, and writes .deputy/config.yaml defining a custom provider
// "local" there whose key is in $LOCAL_LLM_TOKEN.
//
//	echoheaders
func cmdEchoHeaders(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: echoheaders")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	srv := &http.Server{Handler: http.HandlerFunc(echoHandler)}
	go srv.Serve(ln)
	ts.Defer(func() { srv.Close() })
	url := "http://" + ln.Addr().String()
	for k, v := range echoKeys {
		ts.Setenv(k, v)
	}
	ts.Setenv("ECHO_URL", url)
	ts.Setenv("OPENAI_BASE_URL", url+"/v1/")
	ts.Setenv("ANTHROPIC_BASE_URL", url)
	ts.Setenv("GOOGLE_GEMINI_BASE_URL", url)
	ts.Check(os.MkdirAll(ts.MkAbs(".deputy"), 0o755))
	cfg := "providers:\n  local:\n    base_url: " + url + "/v1/\n    api_key_env: LOCAL_LLM_TOKEN\n"
	ts.Check(os.WriteFile(ts.MkAbs(".deputy/config.yaml"), []byte(cfg), 0o644))
}

func echoHandler(w http.ResponseWriter, r *http.Request) {
	var names []string
	for k := range r.Header {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("you sent:")
	for _, k := range names {
		fmt.Fprintf(&b, " %s=%s;", k, strings.Join(r.Header[k], ","))
	}
	// A server that knows more than it should: every key, in several spellings.
	for _, v := range echoKeys {
		fmt.Fprintf(&b, " key=%s \"%s\" Bearer %s;", v, v, v)
	}
	msg := b.String()
	var body any
	switch {
	case strings.HasSuffix(r.URL.Path, "/messages"):
		body = map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": msg}}
	case strings.Contains(r.URL.Path, ":generateContent") || strings.Contains(r.URL.Path, ":streamGenerateContent"):
		body = map[string]any{"error": map[string]any{"code": 400, "message": msg, "status": "INVALID_ARGUMENT"}}
	default:
		body = map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error"}}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(body)
}

// cmdNoSecret fails if any key of echoKeys occurs in the bytes of the given
// files, or of any file below the given directories (the ledger's SQLite
// file, its WAL, log files).
//
//	nosecret PATH...
func cmdNoSecret(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: nosecret PATH...")
	}
	scanned := 0
	check := func(path string) {
		data, err := os.ReadFile(path)
		ts.Check(err)
		scanned++
		for name, v := range echoKeys {
			if i := bytes.Index(data, []byte(v)); i >= 0 {
				lo, hi := max(0, i-80), min(len(data), i+len(v)+20)
				ts.Fatalf("%s: the value of %s leaked: %q", path, name, data[lo:hi])
			}
		}
	}
	for _, a := range args {
		root := ts.MkAbs(a)
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type().IsRegular() {
				check(path)
			}
			return nil
		})
		ts.Check(err)
	}
	if scanned == 0 {
		ts.Fatalf("nosecret: no file scanned")
	}
}

// cmdSignal sends a signal that testscript's kill cannot (it knows INT and
// KILL) to this test's child processes whose command line contains WORD:
// the background deputy started by an exec ... & line.
//
//	signal TERM WORD
func cmdSignal(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 || args[0] != "TERM" {
		ts.Fatalf("usage: signal TERM WORD")
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		ts.Fatalf("signal needs /proc: %v", err)
	}
	sent := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so cut after ')'.
		_, rest, ok := strings.Cut(string(stat), ") ")
		f := strings.Fields(rest)
		if !ok || len(f) < 2 || f[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if !bytes.Contains(cmdline, []byte(args[1])) {
			continue
		}
		ts.Check(syscall.Kill(pid, syscall.SIGTERM))
		sent++
	}
	if sent == 0 {
		ts.Fatalf("signal: no child process mentions %q", args[1])
	}
}

// cmdNoProc fails if a live process's command line (arguments joined by
// spaces) contains TEXT; with -in=DIR, only a process working in DIR or
// below counts, so that the same script running at the same time in
// another checkout (its own $WORK) is not seen.
//
//	noproc [-in=DIR] TEXT
func cmdNoProc(ts *testscript.TestScript, neg bool, args []string) {
	dir, text := procArgs(ts, neg, "noproc", args)
	if procs := findProcs(ts, dir, text); len(procs) > 0 {
		ts.Fatalf("process %s is still running", procs[0])
	}
}

// cmdWaitProc waits (10s at most) until a live process working in DIR or
// below has the command line COMMAND (not merely containing it, so the
// sandbox helper that will start it does not count): a command the agent
// started is running.
//
//	waitproc -in=DIR COMMAND
func cmdWaitProc(ts *testscript.TestScript, neg bool, args []string) {
	dir, command := procArgs(ts, neg, "waitproc", args)
	if dir == "" {
		ts.Fatalf("usage: waitproc -in=DIR COMMAND")
	}
	for range 1000 {
		procs := findProcs(ts, dir, command)
		procs = slices.DeleteFunc(procs, func(p string) bool {
			_, line, _ := strings.Cut(p, ": ")
			return line != command
		})
		if len(procs) > 0 {
			ts.Logf("running: %s", procs[0])
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	ts.Fatalf("waitproc: no process in %s runs %q", dir, command)
}

func procArgs(ts *testscript.TestScript, neg bool, name string, args []string) (dir, text string) {
	if len(args) == 2 && strings.HasPrefix(args[0], "-in=") {
		dir, args = ts.MkAbs(strings.TrimPrefix(args[0], "-in=")), args[1:]
	}
	if neg || len(args) != 1 {
		ts.Fatalf("usage: %s [-in=DIR] TEXT", name)
	}
	return dir, args[0]
}

// findProcs lists the live processes ("pid: command line") whose command
// line contains text and, when dir is not empty, whose working directory
// is dir or below it.
func findProcs(ts *testscript.TestScript, dir, text string) []string {
	entries, err := os.ReadDir("/proc")
	ts.Check(err)
	var found []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if _, rest, ok := strings.Cut(string(stat), ") "); ok && strings.HasPrefix(rest, "Z") {
			continue // dead, awaiting its parent
		}
		cl, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		line := strings.TrimSpace(strings.ReplaceAll(string(cl), "\x00", " "))
		if !strings.Contains(line, text) {
			continue
		}
		if dir != "" {
			// Another user's process cannot be read, and is not ours.
			cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
			if err != nil || (cwd != dir && !strings.HasPrefix(cwd, dir+"/")) {
				continue
			}
		}
		found = append(found, e.Name()+": "+line)
	}
	return found
}

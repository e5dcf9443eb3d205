package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdConverse runs deputy as a program driving `run --stream-json` does:
// stdin is a pipe kept open, and each request event on stdout
// (approval_request, question) is answered with a line on stdin.
//
//	converse [-after REGEX] [-kill REGEX] ANSWER deputy ARGS...
//
// ANSWER is the JSON line to write, with $ID replaced by the request's id,
// or "-" to answer nothing (the pipe stays open until deputy exits); with
// -after, requests are answered only once a line of stdout has matched
// REGEX. -kill kills deputy (SIGKILL, as a machine going down would) two
// seconds after a line matches REGEX. The command's stdout and stderr are
// deputy's; it fails when deputy exits other than 0 (with !, when it exits
// 0; a kill is neither), or runs longer than 60s.
func cmdConverse(ts *testscript.TestScript, neg bool, args []string) {
	var after, kill *regexp.Regexp
	for len(args) > 2 && (args[0] == "-after" || args[0] == "-kill") {
		re := regexp.MustCompile(args[1])
		if args[0] == "-after" {
			after = re
		} else {
			kill = re
		}
		args = args[2:]
	}
	if len(args) < 2 || args[1] != "deputy" {
		ts.Fatalf("usage: converse [-after REGEX] ANSWER deputy ARGS...")
	}
	answer := args[0]
	cmd := exec.Command(lookPath(ts, "deputy"), args[2:]...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = scriptEnv(ts)
	stdin, err := cmd.StdinPipe()
	ts.Check(err)
	stdout, err := cmd.StdoutPipe()
	ts.Check(err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	ts.Check(cmd.Start())
	done := make(chan struct{})
	killed := false
	timer := time.AfterFunc(60*time.Second, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 0, 64<<10), 8<<20)
		var pending []string // request ids not answered yet
		for sc.Scan() {
			line := sc.Text()
			io.WriteString(ts.Stdout(), line+"\n")
			var ev struct{ Type, ID string }
			if json.Unmarshal([]byte(line), &ev) == nil && (ev.Type == "approval_request" || ev.Type == "question") {
				pending = append(pending, ev.ID)
			}
			if after != nil && after.MatchString(line) {
				after = nil
			}
			if kill != nil && kill.MatchString(line) {
				kill = nil
				killed = true
				time.AfterFunc(2*time.Second, func() { _ = cmd.Process.Kill() })
			}
			if answer == "-" || after != nil {
				continue
			}
			for _, id := range pending {
				io.WriteString(stdin, strings.ReplaceAll(answer, "$ID", id)+"\n")
			}
			pending = nil
		}
	}()
	<-done
	err = cmd.Wait()
	stdin.Close()
	io.WriteString(ts.Stderr(), stderr.String())
	var ee *exec.ExitError
	switch {
	case killed:
	case err != nil && !errors.As(err, &ee):
		ts.Fatalf("running deputy: %v", err)
	case err != nil && !neg:
		ts.Fatalf("deputy exited with %d", ee.ExitCode())
	case err == nil && neg:
		ts.Fatalf("deputy exited with 0")
	}
}

// lookPath finds a program on the script's PATH.
func lookPath(ts *testscript.TestScript, name string) string {
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	ts.Fatalf("%s is not on the script's PATH", name)
	return ""
}

// scriptEnv is the script's environment for a program it starts itself.
func scriptEnv(ts *testscript.TestScript) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "DEPUTY_DB", "DEPUTY_LOG", "CLAUDE_CONFIG_DIR", "ANTHROPIC_MODEL",
		"OPENAI_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY", "OLLAMA_HOST", "TMPDIR"} {
		env = append(env, k+"="+ts.Getenv(k))
	}
	return env
}

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdTerm runs deputy in a terminal: a tmux session on a private socket,
// 120×40, with stdout going to a file, so a script can read the screen as
// a person sees it while the run works.
//
//	term start ARGS...   run `deputy ARGS...`; stdout to term.stdout
//	                     (-tty: stdout on the terminal too; -env=K=V: set
//	                     K, e.g. TERM=dumb, after TERM=xterm-256color)
//	term wait REGEX      wait (30s at most) until the screen matches; the
//	                     screen is then in the file "screen"
//	term keys KEY...     type keys (tmux send-keys names: Down, x, C-c)
//	term end             wait (60s at most) for deputy to exit; its exit
//	                     code is in term.exit, the last screen in "screen";
//	                     the terminal is closed, so another start may follow
func cmdTerm(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: term start|wait|keys|end ...")
	}
	// Each start gets its own tmux server (socket), so a start after an end
	// never meets the last server shutting down; term.sock names the
	// current one.
	sock, _ := os.ReadFile(ts.MkAbs("term.sock"))
	if args[0] == "start" {
		starts, _ := os.ReadFile(ts.MkAbs("term.starts"))
		n := len(starts)
		ts.Check(os.WriteFile(ts.MkAbs("term.starts"), append(starts, '.'), 0o644))
		sock = []byte(ts.MkAbs(fmt.Sprintf("tmux-%d.sock", n)))
		ts.Check(os.WriteFile(ts.MkAbs("term.sock"), sock, 0o644))
	}
	termCmd(ts, string(sock), args)
}

func termCmd(ts *testscript.TestScript, sock string, args []string) {
	tmux := func(a ...string) string {
		out, err := exec.Command("tmux", append([]string{"-S", sock}, a...)...).CombinedOutput()
		if err != nil {
			ts.Fatalf("tmux %s: %v\n%s", strings.Join(a, " "), err, out)
		}
		return string(out)
	}
	switch args[0] {
	case "start":
		var env []string
		for _, k := range []string{"PATH", "HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "DEPUTY_DB", "DEPUTY_LOG",
			"OPENAI_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY", "OLLAMA_HOST"} {
			env = append(env, "-e", k+"="+ts.Getenv(k))
		}
		args = args[1:]
		redirect := " >term.stdout"
		termEnv := []string{"-e", "TERM=xterm-256color", "-e", "NO_COLOR="}
		prefix := "" // tmux sets TERM itself: overrides go on the command line
		for len(args) > 0 && strings.HasPrefix(args[0], "-") {
			switch {
			case args[0] == "-tty":
				redirect = ""
			case strings.HasPrefix(args[0], "-env="):
				prefix += "'" + strings.ReplaceAll(strings.TrimPrefix(args[0], "-env="), "'", "") + "' "
			default:
				ts.Fatalf("term start: unknown option %s", args[0])
			}
			args = args[1:]
		}
		for _, f := range []string{"term.exit", "term.stdout", "screen"} {
			os.Remove(ts.MkAbs(f))
		}
		quoted := make([]string, len(args))
		for i, a := range args {
			quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		shell := "env " + prefix + "deputy " + strings.Join(quoted, " ") + redirect + "; echo $? >term.exit.tmp; mv term.exit.tmp term.exit; sleep 600"
		a := append([]string{"new-session", "-d", "-x", "120", "-y", "40", "-c", ts.MkAbs(".")}, env...)
		a = append(append(a, termEnv...), "sh", "-c", shell)
		tmux(a...)
		ts.Defer(func() { _ = exec.Command("tmux", "-S", sock, "kill-server").Run() })
	case "wait":
		if len(args) != 2 {
			ts.Fatalf("usage: term wait REGEX")
		}
		re := regexp.MustCompile(args[1])
		var screen string
		seen := map[string]bool{}
		var footers []string
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			screen = tmux("capture-pane", "-p")
			if foot := lastLine(screen); !seen[foot] {
				seen[foot] = true
				footers = append(footers, foot)
			}
			if re.MatchString(screen) {
				ts.Check(os.WriteFile(ts.MkAbs("screen"), []byte(screen), 0o644))
				ts.Logf("screen:\n%s", strings.TrimRight(screen, "\n"))
				return
			}
		}
		ts.Fatalf("term wait %s: timed out; the last lines seen:\n%s\nthe screen:\n%s", args[1], strings.Join(footers, "\n"), screen)
	case "keys":
		tmux(append([]string{"send-keys"}, args[1:]...)...)
	case "end":
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if _, err := os.Stat(filepath.Join(ts.MkAbs("."), "term.exit")); err == nil {
				// The last screen stays readable ("screen"); the terminal goes.
				ts.Check(os.WriteFile(ts.MkAbs("screen"), []byte(tmux("capture-pane", "-p")), 0o644))
				_ = exec.Command("tmux", "-S", sock, "kill-server").Run()
				return
			}
		}
		ts.Fatalf("term end: deputy did not exit; the screen:\n%s", tmux("capture-pane", "-p"))
	default:
		ts.Fatalf("term: unknown subcommand %q", args[0])
	}
}

// hasTmux is the [tmux] condition of the scripts.
func hasTmux() bool {
	_, err := exec.LookPath("tmux")
	return err == nil
}

func lastLine(screen string) string {
	lines := strings.Split(strings.TrimRight(screen, "\n "), "\n")
	return lines[len(lines)-1]
}

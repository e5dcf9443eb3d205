package main

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	_ "modernc.org/sqlite" // the sql command's driver

	"github.com/deputyhq/deputy/internal/cli"
	"github.com/deputyhq/deputy/internal/mcptest"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/llmtest"
	"github.com/deputyhq/deputy/tool/builtin/sandbox"
)

// The CLI is tested by txtar scripts in testdata/script that run the real
// binary (testscript re-executes this test binary as `deputy`) against the
// fake LLM server of llm/llmtest, over loopback. Each script reads like
// the user story it checks.

func TestMain(m *testing.M) {
	// The terminal's sandbox helper re-executes this binary.
	sandbox.Main(os.Args)
	testscript.Main(m, map[string]func(){
		"deputy": func() { os.Exit(cli.Main(os.Args[1:])) },
		// mcpstub NAME TOOL...: a Go stdio MCP server (mcptest.Stub), so
		// that MCP scripts run without npm or the internet.
		"mcpstub": func() { os.Exit(mcptest.Stub(os.Args[1:])) },
	})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup:               setupScript,
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "tmux":
				return hasTmux(), nil
			case "landlock":
				return sandbox.ABI() > 0, nil
			case "root":
				return os.Geteuid() == 0, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(*testscript.TestScript, bool, []string){
			"fake": cmdFake, "exits": cmdExits,
			"echoheaders": cmdEchoHeaders, "nosecret": cmdNoSecret, "signal": cmdSignal, "noproc": cmdNoProc, "waitproc": cmdWaitProc,
			"stream":    cmdStream,
			"converse":  cmdConverse,
			"term":      cmdTerm,
			"npmmcp":    cmdNpmMCP,
			"otlp":      cmdOTLP,
			"sql":       cmdSQL,
			"searchapi": cmdSearchAPI,
		},
	})
}

type fakeKey struct{}

// fakeState is the fake server of one script.
type fakeState struct{ srv *llmtest.Server }

// setupScript gives each script a private home, so the user's own
// configuration, ledger and keys never leak in, and a repo-relative path
// to the examples.
func setupScript(env *testscript.Env) error {
	home := filepath.Join(env.WorkDir, "home")
	for _, kv := range [][2]string{
		{"HOME", home},
		{"XDG_CONFIG_HOME", filepath.Join(home, ".config")},
		{"XDG_DATA_HOME", filepath.Join(home, ".local", "share")},
		{"XDG_CACHE_HOME", filepath.Join(home, ".cache")},
		{"XDG_STATE_HOME", filepath.Join(home, ".local", "state")},
	} {
		env.Setenv(kv[0], kv[1])
	}
	for _, name := range userVars {
		env.Setenv(name, "")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		return err
	}
	env.Setenv("REPO", root)
	env.Values[fakeKey{}] = &fakeState{}
	env.Values[otlpKey{}] = &otlpReceiver{}
	env.Values[searchKey{}] = &searchAPI{}
	return nil
}

// cmdFake drives the fake LLM server:
//
//	fake start SCRIPT        start it; sets FAKE_URL and points every provider's env vars at it
//	fake log                 print one line per request received
//	fake req SELECTOR        print a request (neutral form) as JSON: an index, or a rule name
//	                         with an optional #k for its k-th request (from 1)
//	fake count RULE N        exactly N requests were answered by RULE ("*" = all requests)
//	fake overlap RULE RULE   a request of each rule was in flight at the same time
//	fake header SEL NAME     print a header of a request
//	fake body SEL            print a request's body as received (the provider's wire format)
//	fake system SEL          print a request's system prompt
//	fake tools SEL           print the names of the tools a request offered, one per line, or (none)
//	fake messages SEL        print a request's messages, one "role: content" per line
//	fake results SEL         print the tool results a request carried, one per line, raw
//	fake wait RULE N         wait (at most 10s) until RULE has answered or received N requests
//	fake stateback [-replays] MODEL
//	                         every answer of MODEL's provider state (signatures, reasoning items) is in each
//	                         later request that continues its tool calls (-replays: also a session's replay
//	                         of it), byte for byte; prints how many were checked
func cmdFake(ts *testscript.TestScript, neg bool, args []string) {
	st := ts.Value(fakeKey{}).(*fakeState)
	if len(args) == 0 {
		ts.Fatalf("usage: fake start|log|req|count|overlap|header ...")
	}
	switch args[0] {
	case "start":
		if len(args) != 2 {
			ts.Fatalf("usage: fake start SCRIPT")
		}
		s, err := llmtest.ParseScript([]byte(ts.ReadFile(args[1])))
		ts.Check(err)
		srv, err := llmtest.NewServer(s, llmtest.ServerOptions{})
		ts.Check(err)
		ts.Defer(func() { srv.Close() })
		st.srv = srv
		url := srv.URL()
		for k, v := range map[string]string{
			"FAKE_URL":               url,
			"OPENAI_BASE_URL":        url + "/v1/",
			"OPENAI_API_KEY":         "sk-test-openai-0000",
			"ANTHROPIC_BASE_URL":     url,
			"ANTHROPIC_API_KEY":      "sk-ant-test-0000",
			"GOOGLE_GEMINI_BASE_URL": url,
			"GEMINI_API_KEY":         "gm-test-0000",
			"OLLAMA_HOST":            url,
		} {
			ts.Setenv(k, v)
		}
		return
	}
	if st.srv == nil {
		ts.Fatalf("fake: not started")
	}
	reqs := st.srv.Requests()
	switch args[0] {
	case "log":
		for i, r := range reqs {
			fmt.Fprintln(ts.Stdout(), logLine(i, r))
		}
	case "req":
		r := selectRequest(ts, reqs, args)
		b, err := json.MarshalIndent(r.Parsed, "", "  ")
		ts.Check(err)
		fmt.Fprintln(ts.Stdout(), string(b))
	case "body":
		fmt.Fprintln(ts.Stdout(), string(selectRequest(ts, reqs, args).Body))
	case "header":
		if len(args) != 3 {
			ts.Fatalf("usage: fake header SELECTOR NAME")
		}
		r := selectRequest(ts, reqs, args[:2])
		fmt.Fprintln(ts.Stdout(), r.Header.Get(args[2]))
	case "system":
		fmt.Fprintln(ts.Stdout(), parsed(ts, selectRequest(ts, reqs, args)).System)
	case "tools":
		tools := parsed(ts, selectRequest(ts, reqs, args)).Tools
		if len(tools) == 0 {
			fmt.Fprintln(ts.Stdout(), "(none)")
		}
		for _, t := range tools {
			fmt.Fprintln(ts.Stdout(), t.Name)
		}
	case "messages":
		for _, m := range parsed(ts, selectRequest(ts, reqs, args)).Messages {
			line := string(m.Role) + ": " + m.Content
			for _, c := range m.ToolCalls {
				line += fmt.Sprintf(" [call %s %s]", c.Name, c.Arguments)
			}
			fmt.Fprintln(ts.Stdout(), line)
		}
	case "results":
		for _, m := range parsed(ts, selectRequest(ts, reqs, args)).Messages {
			if m.Role == llm.RoleTool {
				fmt.Fprintln(ts.Stdout(), m.Content)
			}
		}
	case "wait":
		if len(args) != 3 {
			ts.Fatalf("usage: fake wait RULE N")
		}
		want, err := strconv.Atoi(args[2])
		ts.Check(err)
		for i := 0; i < 1000; i++ {
			n := 0
			for _, r := range st.srv.Requests() {
				if r.Rule == args[1] {
					n++
				}
			}
			if n >= want {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		ts.Fatalf("fake wait %s %d: timed out\n%s", args[1], want, logAll(st.srv.Requests()))
	case "count":
		if len(args) != 3 {
			ts.Fatalf("usage: fake count RULE N")
		}
		want, err := strconv.Atoi(args[2])
		ts.Check(err)
		got := 0
		for _, r := range reqs {
			if args[1] == "*" || r.Rule == args[1] {
				got++
			}
		}
		if (got == want) == neg {
			ts.Fatalf("fake count %s: got %d requests, want %s%d", args[1], got, map[bool]string{true: "not ", false: ""}[neg], want)
		}
	case "stateback":
		cmdStateBack(ts, reqs, args[1:])
	case "overlap":
		if len(args) != 3 {
			ts.Fatalf("usage: fake overlap RULE RULE")
		}
		ok := false
		for i, a := range reqs {
			for j, b := range reqs {
				if i != j && a.Rule == args[1] && b.Rule == args[2] && a.Received.Before(b.Done) && b.Received.Before(a.Done) {
					ok = true
				}
			}
		}
		if ok == neg {
			ts.Fatalf("fake overlap %s %s: %v (want %v)\n%s", args[1], args[2], ok, !neg, logAll(reqs))
		}
	default:
		ts.Fatalf("fake: unknown subcommand %q", args[0])
	}
}

func parsed(ts *testscript.TestScript, r llmtest.Request) *llm.Request {
	if r.Parsed == nil {
		ts.Fatalf("fake: request to %s could not be parsed", r.Path)
	}
	return r.Parsed
}

// cmdExits runs deputy and checks its exit code:
//
//	exits CODE deputy-args...
//
// stdout and stderr are kept for the next commands, as with exec.
// cmdSQL runs one SQL statement on an SQLite file (a ledger), as another
// program sharing it could: `sql FILE STATEMENT`.
func cmdSQL(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: sql FILE STATEMENT")
	}
	db, err := sql.Open("sqlite", ts.MkAbs(args[0]))
	ts.Check(err)
	defer db.Close()
	_, err = db.Exec(args[1])
	ts.Check(err)
}

func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: exits CODE args...")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec("deputy", args[1:]...)
	got := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("running deputy: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("deputy exited with %d, want %d", got, want)
	}
}

func selectRequest(ts *testscript.TestScript, reqs []llmtest.Request, args []string) llmtest.Request {
	if len(args) != 2 {
		ts.Fatalf("usage: fake req SELECTOR")
	}
	sel := args[1]
	if i, err := strconv.Atoi(sel); err == nil {
		if i < 0 || i >= len(reqs) {
			ts.Fatalf("fake: no request %d (have %d)", i, len(reqs))
		}
		return reqs[i]
	}
	rule, nth := sel, 1
	if r, k, ok := strings.Cut(sel, "#"); ok {
		rule = r
		n, err := strconv.Atoi(k)
		ts.Check(err)
		nth = n
	}
	for _, r := range reqs {
		if r.Rule == rule {
			if nth--; nth == 0 {
				return r
			}
		}
	}
	ts.Fatalf("fake: no request %q\n%s", sel, logAll(reqs))
	return llmtest.Request{}
}

func logLine(i int, r llmtest.Request) string {
	line := fmt.Sprintf("#%d %s rule=%q status=%d stream=%v", i, r.Protocol, r.Rule, r.Status, r.Stream)
	if p := r.Parsed; p != nil && len(p.Messages) > 0 {
		last := p.Messages[len(p.Messages)-1]
		line += fmt.Sprintf(" model=%s last=%s:%q", p.Model, last.Role, clip(last.Content, 60))
	}
	if !r.Done.IsZero() {
		line += fmt.Sprintf(" took=%s", r.Done.Sub(r.Received).Round(time.Millisecond))
	}
	return line
}

func logAll(reqs []llmtest.Request) string {
	var b strings.Builder
	for i, r := range reqs {
		b.WriteString(logLine(i, r))
		b.WriteByte('\n')
	}
	return b.String()
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

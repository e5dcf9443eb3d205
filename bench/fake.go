package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"
)

// fake is a `deputy fake-llm` process serving one row's script.
type fake struct {
	cmd  *exec.Cmd
	addr string // host:port
}

func startFake(deputy, script string) (*fake, error) {
	cmd := exec.Command(deputy, "fake-llm", "--addr", "127.0.0.1:0", "-q", "--script", script)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		var said []string
		for sc.Scan() {
			line := sc.Text()
			if a, ok := strings.CutPrefix(line, "fake-llm listening on http://"); ok {
				addr <- a
				break
			}
			said = append(said, line)
		}
		if len(said) > 0 {
			fmt.Fprintln(os.Stderr, "fake-llm:", strings.Join(said, "\n"))
		}
		close(addr)
		_, _ = io.Copy(io.Discard, stderr) // keep the pipe drained until it exits
	}()
	select {
	case a, ok := <-addr:
		if ok {
			return &fake{cmd: cmd, addr: a}, nil
		}
		_ = cmd.Wait()
		return nil, fmt.Errorf("fake-llm exited before listening")
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("fake-llm did not say where it listens within 30s")
	}
}

func (f *fake) stop() {
	_ = f.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = f.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = f.cmd.Process.Kill()
		<-done
	}
}

// check reads the fake's request log and fails unless it holds exactly
// want requests per rule, every one answered 200: proof that the runs
// timed made the model calls the tree needs, no more (no retries) and
// no fewer.
func (f *fake) check(want map[string]int) error {
	resp, err := http.Get("http://" + f.addr + "/_requests")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var log []struct {
		Rule   string `json:"rule"`
		Status int    `json:"status"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&log); err != nil {
		return fmt.Errorf("reading the fake's log: %w", err)
	}
	got := map[string]int{}
	for _, r := range log {
		if r.Status != http.StatusOK {
			return fmt.Errorf("the fake answered a request (rule %q) with status %d", r.Rule, r.Status)
		}
		got[r.Rule]++
	}
	if fmt.Sprint(sorted(got)) != fmt.Sprint(sorted(want)) {
		return fmt.Errorf("the fake's log holds %v requests by rule, want %v", sorted(got), sorted(want))
	}
	return nil
}

func sorted(m map[string]int) []string {
	var s []string
	for k, v := range m {
		s = append(s, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(s)
	return s
}

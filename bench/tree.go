package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A tree is the shape of a row's delegation: levels[0] is the root agent,
// each level's agent calls fanout agents of the next level in one response
// (call_agent), and the last level answers at once after its latency.
type tree []level

type level struct {
	agent   string
	fanout  int           // 0 for the last level
	latency time.Duration // the last level's answer latency
}

// system is an agent's system prompt; the fake's rules match its start,
// so nothing a program appends to it can confuse them.
func (l level) system() string {
	return "ROLE-" + strings.ToUpper(l.agent) + ": you are the " + l.agent + "."
}

// noChildren is the task on which row 4's root answers without delegating:
// the baseline of its memory per child.
const noChildren = "no children"

// script is the fake provider's script for the tree: every agent but the
// last delegates on its first call and, once its tool results are in,
// answers with their count and contents; the last level answers "ok". The
// final answer therefore spells out the whole tree, and a run whose output
// is not exactly want() lost or garbled a child.
func (t tree) script() string {
	var s strings.Builder
	s.WriteString("rules:\n")
	root := t[0]
	fmt.Fprintf(&s, "  - name: %s-alone\n    match: {system: %q, turn: 1, last: %q}\n    reply: {text: %q}\n",
		root.agent, "^"+regexpQuote(root.system()), noChildren, root.agent+" 0|")
	for i, l := range t {
		sys := "^" + regexpQuote(l.system())
		if i == len(t)-1 {
			fmt.Fprintf(&s, "  - name: %s\n    match: {system: %q}\n    reply: {text: \"ok\"}\n", l.agent, sys)
			if l.latency > 0 {
				fmt.Fprintf(&s, "    latency: %s\n", l.latency)
			}
			continue
		}
		fmt.Fprintf(&s, "  - name: %s-delegates\n    match: {system: %q, turn: 1}\n    reply:\n      tool_calls:\n", l.agent, sys)
		for c := range l.fanout {
			fmt.Fprintf(&s, "        - {name: call_agent, arguments: {agent: %s, task: \"part %d\"}}\n", t[i+1].agent, c+1)
		}
		fmt.Fprintf(&s, "  - name: %s-answers\n    match: {system: %q, last_role: tool}\n", l.agent, sys)
		fmt.Fprintf(&s, "    reply: {text: %q}\n", l.agent+" {{ len .ToolResults }}|{{ range .ToolResults }}[{{ . }}]{{ end }}")
	}
	return s.String()
}

// regexpQuote escapes the few metacharacters a system prompt here holds.
func regexpQuote(s string) string {
	return strings.NewReplacer(".", `\.`).Replace(s)
}

// want is the root's final answer when every agent of the tree did its part.
func (t tree) want() string {
	out := "ok"
	for i := len(t) - 2; i >= 0; i-- {
		out = fmt.Sprintf("%s %d|%s", t[i].agent, t[i].fanout, strings.Repeat("["+out+"]", t[i].fanout))
	}
	return out
}

// calls is how many model calls one run of the tree makes, by rule name.
func (t tree) calls() map[string]int {
	m := map[string]int{}
	n := 1 // agents at this level
	for i, l := range t {
		if i == len(t)-1 {
			m[l.agent] = n
			break
		}
		m[l.agent+"-delegates"] = n
		m[l.agent+"-answers"] = n
		n *= l.fanout
	}
	return m
}

// latency is the tree's critical path in model latency: only the last
// level waits.
func (t tree) latency() time.Duration { return t[len(t)-1].latency }

// agents is the number of agents a run of the tree starts below the root.
func (t tree) agents() int {
	total, n := 0, 1
	for _, l := range t[:len(t)-1] {
		n *= l.fanout
		total += n
	}
	return total
}

// writeAgents writes the tree's agents as axe TOML files into dir (axe's
// agents directory, which deputy reads too). model is the model string of
// every agent.
func (t tree) writeAgents(dir, model string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i, l := range t {
		var s strings.Builder
		fmt.Fprintf(&s, "name = %q\nmodel = %q\nsystem_prompt = %q\n", l.agent, model, l.system())
		if i < len(t)-1 {
			// parallel is axe's default and deputy's; written out so the
			// file says what is measured. No concurrency cap anywhere.
			fmt.Fprintf(&s, "sub_agents = [%q]\n\n[sub_agents_config]\nmax_depth = %d\nparallel = true\ntimeout = 300\n",
				t[i+1].agent, len(t))
		}
		if err := os.WriteFile(filepath.Join(dir, l.agent+".toml"), []byte(s.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

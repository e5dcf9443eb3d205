// Package permission decides, for one tool call, whether it runs, waits for
// a person's approval, or is refused: rules with three outcomes (allow,
// ask, deny) matched per tool and argument pattern, the modes of Claude
// Code, and the narrowing of a child's rules by every ancestor's.
//
// A rule names a tool and, for the tools whose arguments say what they
// touch, a pattern over that: terminal(git diff:*) over the command,
// write_file(src/**) over the path, fetch(domain:*.go.dev) over the URL's
// host, call_agent(researcher) over the agent. One level of rules (Rules)
// decides a call the way Claude Code does: a matching deny wins, then a
// matching ask, then a matching allow, then the level's mode. A Chain is
// the levels from the run's settings down to the agent making the call;
// its decision is the strictest of theirs, so a level added below can only
// narrow what the levels above it let through.
//
// The package knows deputy's tool names and their arguments' keys, and
// nothing else of deputy: it is a leaf, tested and fuzzed on its own.
package permission

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Decision is what happens to a call. The values are ordered: a stricter
// decision is greater.
type Decision uint8

const (
	// Allow runs the call.
	Allow Decision = iota
	// Ask runs it once a person approves it.
	Ask
	// Deny refuses it; the model reads why.
	Deny
)

func (d Decision) String() string {
	switch d {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	}
	return fmt.Sprintf("Decision(%d)", uint8(d))
}

// Mode is what a level decides for a call no rule of it matches. The
// names are Claude Code's (its permissionMode and defaultMode); the empty
// Mode is deputy's own default: such a call runs.
type Mode string

const (
	// ModeNone runs what no rule matches: deputy's default.
	ModeNone Mode = ""
	// ModeDefault asks before edits (write_file, edit_file) and terminal
	// commands.
	ModeDefault Mode = "default"
	// ModeAcceptEdits asks before terminal commands only.
	ModeAcceptEdits Mode = "acceptEdits"
	// ModePlan is read-only: edits and terminal commands are refused.
	ModePlan Mode = "plan"
	// ModeBypass never asks: what no rule matches runs, and what a rule
	// would ask about is refused (nobody is asked).
	ModeBypass Mode = "bypassPermissions"
	// ModeDontAsk never asks: edits and terminal commands no allow rule
	// matches are refused, as is what an ask rule matches.
	ModeDontAsk Mode = "dontAsk"
)

// Modes lists the modes by their names, for messages.
var Modes = []Mode{ModeDefault, ModeAcceptEdits, ModePlan, ModeBypass, ModeDontAsk}

// ParseMode reads a mode's name, exactly as Claude Code spells it.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if s == string(m) {
			return m, nil
		}
	}
	names := make([]string, len(Modes))
	for i, m := range Modes {
		names[i] = string(m)
	}
	return ModeNone, fmt.Errorf("unknown permission mode %q (use %s)", s, strings.Join(names, ", "))
}

// never reports whether the mode never asks a person.
func (m Mode) never() bool { return m == ModeBypass || m == ModeDontAsk }

// fallback is the mode's decision for a call of tool no rule matches.
func (m Mode) fallback(tool string) Decision {
	edit, term := isEdit(tool), tool == "terminal"
	switch m {
	case ModeDefault:
		if edit || term {
			return Ask
		}
	case ModeAcceptEdits:
		if term {
			return Ask
		}
	case ModePlan, ModeDontAsk:
		if edit || term {
			return Deny
		}
	}
	return Allow
}

func isEdit(tool string) bool { return tool == "write_file" || tool == "edit_file" }

// Call is one tool call to decide.
type Call struct {
	Tool string
	// Args are the call's JSON arguments as the model sent them.
	Args json.RawMessage
	// Workdir is the directory the call's relative paths (and a rule's
	// relative patterns) start from.
	Workdir string
}

// Rules is one level: the rules and mode one source sets (an agent's
// file, the run's settings).
type Rules struct {
	Allow []Rule `json:"allow,omitempty"`
	Ask   []Rule `json:"ask,omitempty"`
	Deny  []Rule `json:"deny,omitempty"`
	Mode  Mode   `json:"mode,omitempty"`
}

// Empty reports whether the level decides nothing: every call runs.
func (rs *Rules) Empty() bool {
	return rs == nil || len(rs.Allow) == 0 && len(rs.Ask) == 0 && len(rs.Deny) == 0 && rs.Mode == ModeNone
}

// Verdict is a decision and what made it.
type Verdict struct {
	Decision Decision
	// Rule is the rule that decided, nil when the mode did.
	Rule *Rule
	// Mode is the mode of the level that decided.
	Mode Mode
}

// Why says what decided, for a message: the rule with its source, or the
// mode.
func (v Verdict) Why() string {
	switch {
	case v.Rule != nil && v.Rule.Source != "":
		return "the rule " + v.Rule.String() + " (" + v.Rule.Source + ")"
	case v.Rule != nil:
		return "the rule " + v.Rule.String()
	case v.Mode != ModeNone:
		return "the permission mode " + string(v.Mode)
	}
	return "no rule"
}

// Decide decides c by this level alone: a matching deny rule wins, then a
// matching ask rule, then allow rules that cover the call (every part of a
// compound terminal command), then the mode. A mode that never asks
// (bypassPermissions, dontAsk) turns an ask into a deny.
func (rs *Rules) Decide(c Call) Verdict {
	if rs == nil {
		return Verdict{}
	}
	sub := subjectOf(c)
	v := rs.decide(c, sub)
	if v.Decision == Ask && rs.Mode.never() {
		v.Decision = Deny
	}
	return v
}

func (rs *Rules) decide(c Call, sub subject) Verdict {
	for i := range rs.Deny {
		if rs.Deny[i].touches(c.Tool, sub) {
			return Verdict{Decision: Deny, Rule: &rs.Deny[i], Mode: rs.Mode}
		}
	}
	for i := range rs.Ask {
		if rs.Ask[i].touches(c.Tool, sub) {
			return Verdict{Decision: Ask, Rule: &rs.Ask[i], Mode: rs.Mode}
		}
	}
	if r := covering(rs.Allow, c.Tool, sub); r != nil {
		return Verdict{Decision: Allow, Rule: r, Mode: rs.Mode}
	}
	return Verdict{Decision: rs.Mode.fallback(c.Tool), Mode: rs.Mode}
}

// Chain is the levels that bound one run, outermost first: the run's
// settings, then each agent from the root down to the run's own.
type Chain []*Rules

// With returns the chain with rs added below it (nothing is added for an
// empty level). The chain itself is not changed.
func (ch Chain) With(rs *Rules) Chain {
	if rs.Empty() {
		return ch
	}
	out := make(Chain, len(ch), len(ch)+1)
	copy(out, ch)
	return append(out, rs)
}

// Decide is the strictest decision of the chain's levels: a deny anywhere
// wins, else an ask anywhere, else the call runs. Of equal decisions the
// outermost level's is reported.
func (ch Chain) Decide(c Call) Verdict {
	var out Verdict
	for _, rs := range ch {
		if v := rs.Decide(c); v.Decision > out.Decision {
			out = v
			if out.Decision == Deny {
				break
			}
		}
	}
	return out
}

// Lines are the level as a person reads it: one "allow RULE", "ask RULE"
// or "deny RULE" a rule, then "mode MODE" when it has one.
func (rs *Rules) Lines() []string {
	var out []string
	if rs == nil {
		return out
	}
	for _, l := range []struct {
		verb  string
		rules []Rule
	}{{"allow", rs.Allow}, {"ask", rs.Ask}, {"deny", rs.Deny}} {
		for _, r := range l.rules {
			out = append(out, l.verb+" "+r.String())
		}
	}
	if rs.Mode != ModeNone {
		out = append(out, "mode "+string(rs.Mode))
	}
	return out
}

package delegate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/isolate"
	"github.com/deputyhq/deputy/ledger"
	"github.com/deputyhq/deputy/tool"
)

// Isolated children (issue 28, docs/user-guide.md#isolated-children). A
// child whose agent says isolation = "worktree", or any child of a tree
// run with --isolation worktree whose parent works in no worktree, works in
// a git worktree of its own, made from its parent's working state. Its
// children share it unless their own agent asks for one. When it ends ok
// its work is committed and merged into its parent's working tree, in the
// order the parent called its children; the parent's tool result carries
// what was merged, or the conflict. Work that is not merged is kept on its
// branch. The engine asks Isolation for all of this; it runs no git.

// Isolation makes worktrees for isolated children and merges their work
// back: *isolate.Manager, which workspace sets up under deputy's data
// directory. An Engine without one runs every child in the shared
// directory, and warns once when an agent asks for a worktree.
type Isolation interface {
	// Create makes a worktree for run id from the working state of the
	// working tree dir is in; an *isolate.Unavailable says why there is
	// none (the run then works in dir).
	Create(ctx context.Context, dir, id string) (*isolate.Worktree, error)
	// Reopen makes a recorded worktree usable again (runs resume).
	Reopen(ctx context.Context, w *isolate.Worktree) error
	// Commit records the worktree's files on its branch.
	Commit(ctx context.Context, w *isolate.Worktree, message string) error
	// Merge merges the committed work into the working tree it came from.
	Merge(ctx context.Context, w *isolate.Worktree) (*isolate.Result, error)
	// Keep is the result of committed work that is not merged.
	Keep(ctx context.Context, w *isolate.Worktree, reason string) (*isolate.Result, error)
	// Remove removes the worktree, and its branch unless keepBranch.
	Remove(ctx context.Context, w *isolate.Worktree, keepBranch bool) error
}

var _ Isolation = (*isolate.Manager)(nil)

// WorktreeLedger is a Ledger that keeps the worktrees of isolated runs, so
// that runs resume can reuse one and the CLI can show, diff and clean them
// (*store.Store). The engine records through it when its Ledger is one.
type WorktreeLedger interface {
	// RecordWorktree adds or replaces the record of a run's worktree.
	RecordWorktree(ctx context.Context, w *ledger.Worktree) error
	// Worktree returns the record of a run's worktree; nil when it had none.
	Worktree(ctx context.Context, runID string) (*ledger.Worktree, error)
}

// wantsWorktree reports whether child r of parent gets a worktree of its
// own: its agent asks for one, or its tree runs isolated and its parent
// works in none (a subtree shares the worktree of its top); an agent's
// isolation = "none" keeps it in its parent's directory.
func wantsWorktree(parent *Scope, r *run) bool {
	if r.agent != nil {
		switch r.agent.Isolation {
		case config.IsolationWorktree:
			return true
		case config.IsolationNone:
			return false
		}
	}
	return parent.tree.isolation == config.IsolationWorktree && parent.worktree == nil
}

// runChild executes c: in a worktree of its own when it gets one, whose
// work then comes back to its parent's working tree (bringBack).
func (e *Engine) runChild(ctx context.Context, c *Child) *Envelope {
	x := e.executor(ctx)
	if !wantsWorktree(c.parent, c.r) {
		c.parent.endMergeTurn(c.r.ToolCallID)
		return x.Execute(ctx, c)
	}
	turn := c.parent.mergeTurn(c.r.ToolCallID)
	w, refused := e.placeChild(ctx, c)
	if refused != nil || w == nil {
		turn.Done()
		if refused != nil {
			return refused
		}
		return x.Execute(ctx, c)
	}
	env := x.Execute(ctx, c)
	e.bringBack(ctx, c.parent, c.ID, c.r.Label, c.r.Task, w, env, turn)
	return env
}

// placeChild gives c its worktree: the one it had when it is resumed,
// else a new one. It returns nil when c works in the shared directory
// (with a warning saying why), and an envelope when c cannot run.
func (e *Engine) placeChild(ctx context.Context, c *Child) (*isolate.Worktree, *Envelope) {
	parent, r := c.parent, c.r
	if e.Isolation == nil {
		e.warnShared(parent.tree, r, "this engine makes no worktrees (Engine.Isolation is not set)")
		return nil, nil
	}
	if r.resumed != nil {
		if w := e.reopen(ctx, c); w != nil {
			e.rebind(r, w)
			return w, nil
		}
	}
	w, err := e.Isolation.Create(ctx, r.Workdir, c.ID)
	var u *isolate.Unavailable
	switch {
	case errors.As(err, &u):
		e.warnShared(parent.tree, r, u.Reason)
		return nil, nil
	case err != nil:
		err = fmt.Errorf("isolation: no worktree could be made: %w", err)
		env := &Envelope{RunID: c.ID, Kind: r.Kind, Label: r.Label, Task: r.Task, Depth: parent.Depth + 1, ParentID: parent.RunID,
			Status: StatusError, Error: err.Error(), Err: err, StartedAt: time.Now()}
		return nil, env
	}
	e.rebind(r, w)
	e.recordWorktree(ctx, parent, c.ID, w, ledger.WorktreeActive, nil, false)
	return w, nil
}

// warnShared says, once a tree for each reason, that a child asked for a
// worktree and works in the shared directory instead.
func (e *Engine) warnShared(t *Tree, r *run, reason string) {
	if _, done := t.isolationWarned.LoadOrStore(reason, true); done || e.Logger == nil {
		return
	}
	e.Logger.Warn("isolation not used: "+reason+"; the agent works in the shared directory", "agent", r.Label)
}

// reopen finds the worktree a resumed child worked in, when it is still
// to be had; nil otherwise (a new one is made).
func (e *Engine) reopen(ctx context.Context, c *Child) *isolate.Worktree {
	wl, ok := e.Ledger.(WorktreeLedger)
	if !ok {
		return nil
	}
	row, err := wl.Worktree(ctx, c.ID)
	if err != nil || row == nil || row.State != ledger.WorktreeActive || !row.RemovedAt.IsZero() {
		return nil
	}
	w := worktreeOf(row)
	if err := e.Isolation.Reopen(ctx, w); err != nil {
		e.warn("resume: the child's worktree cannot be reused; it gets a new one", c.ID, c.r.Label, err)
		return nil
	}
	return w
}

func worktreeOf(row *ledger.Worktree) *isolate.Worktree {
	return &isolate.Worktree{ID: row.RunID, Repo: row.Repo, Common: row.Common, Path: row.Path, Workdir: row.Workdir,
		Branch: row.Branch, Base: row.Base, Commit: row.Commit}
}

// rebind moves run r into w: its working directory, and those of its own
// tools that are the engine's built-in tools (Engine.Tools) become the
// same tools of the new directory (file tools, terminal). A built-in tool
// is known by its type and name, not by identity: Tools may build a new
// registry for each call. Others stay as they are: an MCP server's, a
// library's function tools, and network tools (HostNarrower: fetch,
// maybe narrowed to hosts, which replacing would widen), none of which
// works in a directory.
func (e *Engine) rebind(r *run, w *isolate.Worktree) {
	if r.base != nil {
		old, now := e.Tools(r.Workdir), e.Tools(w.Workdir)
		reg := tool.NewRegistry()
		for _, t := range r.base.Tools() {
			name := t.Spec().Name
			_, network := t.(tool.HostNarrower)
			if o, ok := old.Get(name); ok && !network && reflect.TypeOf(o) == reflect.TypeOf(t) {
				if n, ok := now.Get(name); ok {
					t = n
				}
			}
			_ = reg.Add(t) // the names were unique in r.base
		}
		r.base = reg
	}
	r.Workdir, r.worktree = w.Workdir, w
}

// bringBack ends the isolated child id of parent, whose envelope is env:
// its work is committed on its branch; when it ended ok, it is merged into
// the parent's working tree once the children its parent called before it
// are (turn), and its worktree removed; otherwise it is kept. What came of
// it is in env (Worktree, and the text its parent reads) and the ledger.
// A child stopped from outside (cancelled) keeps its worktree as it is,
// for runs resume.
func (e *Engine) bringBack(ctx context.Context, parent *Scope, id, label, task string, w *isolate.Worktree, env *Envelope, turn *isolate.Turn) {
	defer turn.Done()
	if env.Status == StatusCancelled {
		return
	}
	bg := context.WithoutCancel(ctx)
	res, err := e.settleWork(ctx, w, env, label, task, turn)
	// The next sibling's merge need not wait for this one's worktree to be
	// removed (thousands of files, in a large repository).
	turn.Done()
	if err != nil {
		e.warn("isolation: the child's work stays in its worktree", id, label, err)
		res = &isolate.Result{Status: isolate.Kept, Branch: w.Branch, Worktree: w.Path, Reason: err.Error()}
	}
	removed := false
	if res.Status == isolate.Merged || res.Status == isolate.Unchanged {
		if err := e.Isolation.Remove(bg, w, false); err != nil {
			e.warn("isolation: removing a merged worktree", id, label, err)
		} else {
			removed = true
		}
	}
	reportMerge(env, res)
	e.recordWorktree(bg, parent, id, w, string(res.Status), res, removed)
}

// settleWork commits the child's work and merges or keeps it.
func (e *Engine) settleWork(ctx context.Context, w *isolate.Worktree, env *Envelope, label, task string, turn *isolate.Turn) (*isolate.Result, error) {
	bg := context.WithoutCancel(ctx)
	if err := e.Isolation.Commit(bg, w, commitMessage(label, task, env.Status)); err != nil {
		return nil, err
	}
	if env.Status != StatusOK {
		return e.Isolation.Keep(bg, w, "the run ended with status "+string(env.Status))
	}
	if err := turn.Wait(ctx); err != nil {
		return e.Isolation.Keep(bg, w, "its parent stopped before the merge")
	}
	return e.Isolation.Merge(bg, w)
}

// commitMessage is "agent: task", its first line cut to a subject's
// length and the whole task below it.
func commitMessage(label, task string, st Status) string {
	subject, _, _ := strings.Cut(strings.TrimSpace(task), "\n")
	if len(subject) > 72 {
		subject = truncateUTF8(subject, 69) + "..."
	}
	msg := label + ": " + subject
	if st != StatusOK {
		msg += " (" + string(st) + ")"
	}
	return msg + "\n\n" + strings.TrimSpace(task) + "\n"
}

// truncateUTF8 cuts s to at most n bytes on a rune boundary.
func truncateUTF8(s string, n int) string {
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:min(n, len(s))]
}

// reportMerge puts res in env: the text its parent reads first in the
// output (so that an output limit cuts the child's answer, not what
// became of its files) and, for a run that did not end ok, a line in its
// error.
func reportMerge(env *Envelope, res *isolate.Result) {
	env.Worktree = res
	block := "[worktree] " + res.String()
	if env.Output == "" {
		env.Output = block
	} else {
		env.Output = block + "\n\n" + env.Output
	}
	if env.Status != StatusOK && env.Error != "" {
		env.Error += fmt.Sprintf("; its work was not merged: it is on branch %s, in %s", res.Branch, res.Worktree)
	}
}

// recordWorktree records w's state in the ledger, when it keeps worktrees.
func (e *Engine) recordWorktree(ctx context.Context, parent *Scope, id string, w *isolate.Worktree, state string, res *isolate.Result, removed bool) {
	wl, ok := e.Ledger.(WorktreeLedger)
	if !ok {
		return
	}
	row := &ledger.Worktree{RunID: id, RootID: parent.RootID, Repo: w.Repo, Common: w.Common, Path: w.Path, Workdir: w.Workdir,
		Branch: w.Branch, Base: w.Base, Commit: w.Commit, State: state}
	if res != nil {
		row.Result, _ = json.Marshal(res)
	}
	if removed {
		row.RemovedAt = time.Now()
	}
	if err := wl.RecordWorktree(context.WithoutCancel(ctx), row); err != nil {
		e.ledgerFailed("ledger: recording a worktree", parent, err)
	}
}

// resumeMerge brings back the work of a child that finished before the
// tree was interrupted but whose work was not yet merged (the process
// ended between the two).
func (e *Engine) resumeMerge(ctx context.Context, parent *Scope, row ledger.Run, env *Envelope) {
	wl, ok := e.Ledger.(WorktreeLedger)
	if !ok || e.Isolation == nil {
		return
	}
	wt, err := wl.Worktree(ctx, row.ID)
	if err != nil || wt == nil || wt.State != ledger.WorktreeActive || !wt.RemovedAt.IsZero() {
		return
	}
	w := worktreeOf(wt)
	turn := parent.mergeTurn(toolCallID(ctx))
	if err := e.Isolation.Reopen(ctx, w); err != nil {
		turn.Done()
		e.warn("resume: the finished child's worktree is gone; its work is not merged", row.ID, row.Agent, err)
		return
	}
	e.bringBack(ctx, parent, row.ID, row.Agent, row.Task, w, env, turn)
}

// mergeTurn is the place of the child the call callID spawns among its
// parent's merges: the one taken in call order when the model asked for
// the call (orderMerges), else a new one.
func (s *Scope) mergeTurn(callID string) *isolate.Turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.mergeTurns[callID]; ok && callID != "" {
		delete(s.mergeTurns, callID)
		return &t
	}
	t := s.merges.Take()
	return &t
}

// endMergeTurn gives up the place of a call that merges nothing.
func (s *Scope) endMergeTurn(callID string) {
	s.mu.Lock()
	t, ok := s.mergeTurns[callID]
	delete(s.mergeTurns, callID)
	s.mu.Unlock()
	if ok {
		t.Done()
	}
}

package delegate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/ledger"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
)

// Two kinds of memory, both optional:
//
//   - An agent's memory (axe's [memory]): each finished run of the agent
//     appends what it was asked and what it answered; later runs of the
//     agent get the newest last_n entries in their system prompt.
//   - A tree's scratchpad: when the root agent enables it, every agent of
//     that root run gets memory_write, memory_read and memory_list, so
//     siblings can leave each other notes without going through the
//     parent's context. It belongs to one root run and ends with it.

// MemoryLedger is a ledger that also keeps agents' memory and trees'
// scratchpads. *store.Store implements it. With a ledger that does not,
// or none, agents' memory lasts as long as the Engine.
type MemoryLedger interface {
	// AppendMemory adds an entry to an agent's memory.
	AppendMemory(ctx context.Context, m *ledger.MemoryEntry) error
	// Memory returns the agent's newest n entries (all when n <= 0),
	// oldest first, and how many it has in all.
	Memory(ctx context.Context, agent string, n int) ([]ledger.MemoryEntry, int, error)
	// PutNote records a scratchpad write.
	PutNote(ctx context.Context, n *ledger.Note) error
	// Notes returns a tree's scratchpad (for a resumed tree).
	Notes(ctx context.Context, rootID string) ([]ledger.Note, error)
}

// Names of the scratchpad tools.
const (
	ToolMemoryWrite = "memory_write"
	ToolMemoryRead  = "memory_read"
	ToolMemoryList  = "memory_list"
)

// Bounds of one scratchpad: it lives in memory for the whole tree.
const (
	maxNoteKey   = 128
	maxNoteValue = 64 << 10
	maxNotes     = 1000
)

// memoryResultMax is how much of a past answer is fed back, as axe does.
const memoryResultMax = 1000

func (e *Engine) memoryLedger() MemoryLedger {
	ml, _ := e.Ledger.(MemoryLedger)
	return ml
}

// memorySection is the part of an agent's system prompt that holds its
// memory, in axe's format; "" when it has none.
func (e *Engine) memorySection(ctx context.Context, a *config.Agent) string {
	if !a.Memory.Enabled {
		return ""
	}
	var entries []ledger.MemoryEntry
	var total int
	if ml := e.memoryLedger(); ml != nil {
		var err error
		entries, total, err = ml.Memory(ctx, a.Name, a.Memory.LastN)
		if err != nil && e.Logger != nil {
			e.Logger.Warn("memory: loading", "agent", a.Name, "err", err)
		}
	} else {
		entries, total = e.memories.last(a.Name, a.Memory.LastN)
	}
	if max := a.Memory.MaxEntries; max > 0 && total >= max && e.Logger != nil {
		e.Logger.Warn(fmt.Sprintf("memory: agent %q has %d entries (max_entries %d); only the newest %d are fed back", a.Name, total, max, len(entries)))
	}
	if len(entries) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Memory\n\nYour earlier runs, oldest first:\n\n")
	for _, m := range entries {
		result := m.Result
		if len(result) > memoryResultMax {
			result = llm.CutUTF8(result, memoryResultMax) + "..."
		}
		fmt.Fprintf(&b, "## %s\n**Task:** %s\n**Result:** %s\n\n", m.At.UTC().Format(time.RFC3339), orNone(strings.ReplaceAll(m.Task, "\n", " ")), orNone(result))
	}
	return strings.TrimSuffix(b.String(), "\n\n")
}

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(none)"
	}
	return s
}

// remember appends a finished run to its agent's memory.
func (e *Engine) remember(ctx context.Context, s *Scope, r *run, env *Envelope) {
	if r.agent == nil || !r.agent.Memory.Enabled || !env.OK() {
		return
	}
	m := &ledger.MemoryEntry{Agent: r.agent.Name, RunID: s.RunID, RootID: s.RootID, Task: r.Task, Result: env.Output, At: time.Now()}
	if ml := e.memoryLedger(); ml != nil {
		if err := ml.AppendMemory(context.WithoutCancel(ctx), m); err != nil {
			e.warn("memory: recording", s.RunID, s.Label, err)
		}
		return
	}
	e.memories.append(*m)
}

// memEntries keeps agents' memory for an engine without a memory ledger.
type memEntries struct {
	mu sync.Mutex
	m  map[string][]ledger.MemoryEntry
}

func (s *memEntries) last(agent string, n int) ([]ledger.MemoryEntry, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := s.m[agent]
	total := len(all)
	if n > 0 && len(all) > n {
		all = all[len(all)-n:]
	}
	return slices.Clone(all), total
}

func (s *memEntries) append(m ledger.MemoryEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string][]ledger.MemoryEntry{}
	}
	s.m[m.Agent] = append(s.m[m.Agent], m)
}

// scratchpad is one tree's notes.
type scratchpad struct {
	mu    sync.Mutex
	notes map[string]ledger.Note
}

func newScratchpad() *scratchpad { return &scratchpad{notes: map[string]ledger.Note{}} }

// loadScratchpad is a resumed tree's scratchpad as the ledger kept it.
func (e *Engine) loadScratchpad(ctx context.Context, rootID string) *scratchpad {
	pad := newScratchpad()
	if ml := e.memoryLedger(); ml != nil {
		notes, err := ml.Notes(ctx, rootID)
		if err != nil && e.Logger != nil {
			e.Logger.Warn("scratchpad: loading", "root", rootID, "err", err)
		}
		for _, n := range notes {
			pad.notes[n.Key] = n
		}
	}
	return pad
}

type noteWriteArgs struct {
	Key   string `json:"key" jsonschema:"a short name for the note"`
	Value string `json:"value" jsonschema:"the note: any text"`
}

type noteReadArgs struct {
	Key string `json:"key" jsonschema:"the name of the note to read"`
}

type noteListArgs struct{}

// scratchpadTool is one of the three tools every run of a tree with a
// scratchpad is offered.
type scratchpadTool struct {
	e        *Engine
	toolName string
	make     func(e *Engine, s *Scope) tool.Tool
}

// scratchpadTools are the scratchpad's tools, as the engine offers them.
func (e *Engine) scratchpadTools() []ownTool {
	return []ownTool{scratchpadTool{e, ToolMemoryWrite, noteWriteTool}, scratchpadTool{e, ToolMemoryRead, noteReadTool},
		scratchpadTool{e, ToolMemoryList, noteListTool}}
}

func (t scratchpadTool) name() string { return t.toolName }

func (scratchpadTool) offered(s *Scope, _ *run) bool { return s.tree != nil && s.tree.notes != nil }

func (t scratchpadTool) tool(s *Scope, _ *run) tool.Tool { return t.make(t.e, s) }

// noteWriteTool writes a note; it is recorded in the ledger under the
// writer's run.
func noteWriteTool(e *Engine, s *Scope) tool.Tool {
	pad := s.tree.notes
	return tool.New(ToolMemoryWrite, "Save a note in the scratchpad shared by every agent of this run (your parent, siblings and children), replacing any note under the same key. Use it to leave results or facts other agents will need.",
		func(ctx context.Context, in noteWriteArgs) (tool.Result, error) {
			key := strings.TrimSpace(in.Key)
			switch {
			case key == "":
				return tool.Errorf("key must not be empty"), nil
			case len(key) > maxNoteKey || !utf8.ValidString(key):
				return tool.Errorf("key must be valid text of at most %d bytes", maxNoteKey), nil
			case len(in.Value) > maxNoteValue:
				return tool.Errorf("value is %d bytes; a note holds at most %d", len(in.Value), maxNoteValue), nil
			}
			n := ledger.Note{RootID: s.RootID, Key: key, Value: in.Value, RunID: s.RunID, Agent: s.Label, At: time.Now()}
			pad.mu.Lock()
			if _, exists := pad.notes[key]; !exists && len(pad.notes) >= maxNotes {
				pad.mu.Unlock()
				return tool.Errorf("the scratchpad is full (%d notes); overwrite an existing key instead", maxNotes), nil
			}
			pad.notes[key] = n
			pad.mu.Unlock()
			if ml := e.memoryLedger(); ml != nil {
				if err := ml.PutNote(context.WithoutCancel(ctx), &n); err != nil {
					e.warn("scratchpad: recording", s.RunID, s.Label, err)
				}
			}
			return tool.Text(fmt.Sprintf("Saved note %q (%d bytes).", key, len(in.Value))), nil
		})
}

func noteReadTool(_ *Engine, s *Scope) tool.Tool {
	pad := s.tree.notes
	return tool.New(ToolMemoryRead, "Read a note from the scratchpad shared by every agent of this run.",
		func(ctx context.Context, in noteReadArgs) (tool.Result, error) {
			key := strings.TrimSpace(in.Key)
			pad.mu.Lock()
			n, ok := pad.notes[key]
			pad.mu.Unlock()
			if !ok {
				return tool.Errorf("no note under key %q; memory_list shows the keys", key), nil
			}
			return tool.Text(n.Value), nil
		})
}

func noteListTool(_ *Engine, s *Scope) tool.Tool {
	pad := s.tree.notes
	return tool.New(ToolMemoryList, "List the keys of the scratchpad shared by every agent of this run, with who wrote each note.",
		func(ctx context.Context, _ noteListArgs) (tool.Result, error) {
			pad.mu.Lock()
			keys := make([]string, 0, len(pad.notes))
			for k := range pad.notes {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			var b strings.Builder
			for _, k := range keys {
				n := pad.notes[k]
				fmt.Fprintf(&b, "%s (%d bytes, by %s)\n", k, len(n.Value), n.Agent)
			}
			pad.mu.Unlock()
			if b.Len() == 0 {
				return tool.Text("The scratchpad is empty."), nil
			}
			return tool.Text(strings.TrimSuffix(b.String(), "\n")), nil
		})
}

package store

import "github.com/deputyhq/deputy/ledger"

// The records the store keeps are defined in package ledger, which links no
// database; these aliases keep the store's own names for them.
type (
	Run      = ledger.Run
	Message  = ledger.Message
	Event    = ledger.Event
	Exchange = ledger.Exchange
	// MemoryEntry and Note are the records of memory.go.
	MemoryEntry = ledger.MemoryEntry
	Note        = ledger.Note
	Attempt     = ledger.Attempt
	// Kind and Status are a run's kind and status.
	Kind   = ledger.Kind
	Status = ledger.Status
)

// Kinds of run and the statuses deputy records; see package ledger.
const (
	KindRoot      = ledger.KindRoot
	KindCallAgent = ledger.KindCallAgent
	KindSubagent  = ledger.KindSubagent
	KindSubquery  = ledger.KindSubquery
	KindTool      = ledger.KindTool

	StatusRunning   = ledger.StatusRunning
	StatusOK        = ledger.StatusOK
	StatusError     = ledger.StatusError
	StatusTimeout   = ledger.StatusTimeout
	StatusCancelled = ledger.StatusCancelled
	StatusBudget    = ledger.StatusBudget
	StatusMaxTurns  = ledger.StatusMaxTurns
)

// NewID returns a new ULID; see ledger.NewID.
func NewID() string { return ledger.NewID() }

// TemporalRef locates a run on Temporal; see package ledger.
type TemporalRef = ledger.TemporalRef

// ExecutorTemporal is the Executor of a run on Temporal.
const ExecutorTemporal = ledger.ExecutorTemporal

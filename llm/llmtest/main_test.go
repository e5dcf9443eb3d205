package llmtest

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind: a
// stalled handler, a waiting provider, a server not closed.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

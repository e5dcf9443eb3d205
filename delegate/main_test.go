package delegate_test

import (
	"testing"

	"go.uber.org/goleak"
)

// No run may leave a goroutine behind: not a child, a tool call or a timer.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

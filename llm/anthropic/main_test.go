package anthropic_test

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Every test closes its fake server (which waits for its handlers) and
	// every response body, so no goroutine may be left: not even the
	// HTTP client's idle connections, which the tests close explicitly.
	goleak.VerifyTestMain(m)
}

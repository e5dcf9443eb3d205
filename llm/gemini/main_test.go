package gemini_test

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Every test closes its fake server, which closes the connections the
	// client kept, so no goroutine may be left. The one exception is not
	// ours: genai imports cloud.google.com/go/auth, which imports
	// OpenCensus, whose package init starts a stats worker that lives for
	// the whole process.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"))
}

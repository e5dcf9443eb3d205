package cli

import (
	"runtime"
	"runtime/metrics"
	"testing"
)

func gogc() int64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// TestDeferFirstGC: GOGC is raised until the first collection, then back
// to what it was.
func TestDeferFirstGC(t *testing.T) {
	t.Setenv("GOGC", "")
	before := gogc()
	deferFirstGC()
	if got := gogc(); got != firstGCPercent {
		t.Fatalf("GOGC before the first collection = %d, want %d", got, firstGCPercent)
	}
	// The cleanup that restores it runs on its own goroutine after the
	// collection that finds the sentinel unreachable.
	for i := 0; i < 200 && gogc() != before; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	if got := gogc(); got != before {
		t.Errorf("GOGC after a collection = %d, want %d back", got, before)
	}
}

// TestDeferFirstGCLeavesGOGC: a GOGC set in the environment is the user's.
func TestDeferFirstGCLeavesGOGC(t *testing.T) {
	t.Setenv("GOGC", "150")
	before := gogc()
	deferFirstGC()
	if got := gogc(); got != before {
		t.Errorf("GOGC = %d with GOGC set in the environment, want %d untouched", got, before)
	}
}

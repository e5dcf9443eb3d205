package cli

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
)

// startCPUProfile writes a CPU profile of the command to path, in the
// runtime/pprof format `go tool pprof` reads and `go build -pgo` takes
// (bench/NOTES.md, "Start-up" and "Profile-guided optimisation"). It
// is on when DEPUTY_CPUPROFILE names the file; the returned stop ends the
// profile and closes the file. A
// profile that cannot be started is reported on stderr and the command
// runs unprofiled: measuring must not change what is measured into a
// failure.
func startCPUProfile(path string, stderr io.Writer) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(stderr, "deputy: DEPUTY_CPUPROFILE:", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		fmt.Fprintln(stderr, "deputy: DEPUTY_CPUPROFILE:", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintln(stderr, "deputy: DEPUTY_CPUPROFILE:", err)
		}
	}
}

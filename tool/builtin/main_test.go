package builtin

import (
	"os"
	"testing"

	"github.com/deputyhq/deputy/tool/builtin/sandbox"
)

func TestMain(m *testing.M) {
	// The terminal re-executes this test binary as its sandbox helper.
	sandbox.Main(os.Args)
	os.Exit(m.Run())
}

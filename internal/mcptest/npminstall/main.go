// Command npminstall installs the npm MCP servers deputy's tests use into
// their cache directory (CI runs it before the tests) and prints it.
package main

import (
	"fmt"
	"os"

	"github.com/deputyhq/deputy/internal/mcptest"
)

func main() {
	dir, err := mcptest.Install()
	if err != nil {
		fmt.Fprintln(os.Stderr, "npminstall:", err)
		os.Exit(1)
	}
	fmt.Println(dir)
}

// Command deputy runs LLM agents that delegate. See README.md.
package main

import (
	"os"

	"github.com/deputyhq/deputy/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:])) }

package cli

import (
	"github.com/spf13/cobra"
)

// Trees on Temporal run from a binary of their own, deputy-temporal, so
// that the Temporal SDK stays out of this one (docs/durable.md). These
// say so where a user would look for them.

const temporalHint = `trees on Temporal run with the deputy-temporal binary (go build -tags temporal ./cmd/deputy-temporal): 'deputy-temporal worker --temporal HOST:PORT' and 'deputy-temporal run --temporal HOST:PORT AGENT TASK'; see docs/durable.md`

func newWorkerCmd() *cobra.Command {
	return &cobra.Command{
		Use:                "worker",
		Short:              "Run Temporal workers (in the deputy-temporal binary)",
		Long:               "Trees on Temporal run with the deputy-temporal binary, which this command points to.",
		DisableFlagParsing: true,
		RunE:               func(*cobra.Command, []string) error { return configErrf("%s", temporalHint) },
	}
}

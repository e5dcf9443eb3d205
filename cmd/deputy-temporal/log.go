//go:build temporal

package main

import (
	"log/slog"
	"os"

	"go.temporal.io/sdk/log"
)

// quietLogger shows the SDK's warnings and errors only.
func quietLogger() log.Logger {
	return log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
}

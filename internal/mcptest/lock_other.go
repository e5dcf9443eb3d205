//go:build !unix

package mcptest

// lock does nothing where flock is missing; tests then install serially.
func lock(string) (func(), error) { return func() {}, nil }

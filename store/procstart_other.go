//go:build !linux

package store

// processStart has no start marker to offer outside Linux; liveness then rests on
// the pid alone.
func processStart(pid int) (marker string, zombie bool) { return "", false }

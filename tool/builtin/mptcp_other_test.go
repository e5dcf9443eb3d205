//go:build !linux

package builtin

import "errors"

func dialMPTCP(string) error { return errors.New("MPTCP probes run on Linux only") }

//go:build !linux

package builtin

import "errors"

func dialMPTCP(string) error { return errors.New("MPTCP probes run on Linux only") }

func openVsock() error { return errors.New("AF_VSOCK probes run on Linux only") }

func openLocal() error { return errors.New("socket family probes run on Linux only") }

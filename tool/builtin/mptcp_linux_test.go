package builtin

import (
	"fmt"
	"net/netip"
	"syscall"
)

// dialMPTCP connects to addr (IPv4) over an MPTCP socket and writes the
// probe's line, with raw system calls.
func dialMPTCP(addr string) error {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return err
	}
	const ipprotoMPTCP = 262
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, ipprotoMPTCP)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer syscall.Close(fd)
	if err := syscall.Connect(fd, &syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	_, err = syscall.Write(fd, []byte("probe\n"))
	return err
}

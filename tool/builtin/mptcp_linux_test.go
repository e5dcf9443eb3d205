package builtin

import (
	"fmt"
	"net/netip"
	"syscall"

	"golang.org/x/sys/unix"
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

// openVsock creates an AF_VSOCK stream socket and closes it.
func openVsock() error {
	fd, err := syscall.Socket(unix.AF_VSOCK, syscall.SOCK_STREAM, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	return syscall.Close(fd)
}

// openLocal creates a Unix stream socket and a netlink route socket (what
// libc opens to learn the machine's addresses) and closes them.
func openLocal() error {
	for _, fam := range [][3]int{{unix.AF_UNIX, syscall.SOCK_STREAM, 0}, {unix.AF_NETLINK, syscall.SOCK_RAW, unix.NETLINK_ROUTE}} {
		fd, err := syscall.Socket(fam[0], fam[1], fam[2])
		if err != nil {
			return fmt.Errorf("socket %d: %w", fam[0], err)
		}
		syscall.Close(fd)
	}
	return nil
}

package builtin

import (
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/deputyhq/deputy/tool/builtin/sandbox"
)

func TestMain(m *testing.M) {
	// The terminal re-executes this test binary as its sandbox helper.
	sandbox.Main(os.Args)
	// And as a network client a sandboxed command runs (netProbeArg).
	if len(os.Args) == 4 && os.Args[1] == netProbeArg {
		os.Exit(netProbe(os.Args[2], os.Args[3]))
	}
	os.Exit(m.Run())
}

// netProbeArg makes the test binary try the network and report, so that
// a test needs no nc or bash inside the sandbox:
//
//	<test binary> -deputy-net-probe dial 127.0.0.1:PORT   connect over TCP
//	<test binary> -deputy-net-probe mptcp 127.0.0.1:PORT  connect over MPTCP
//	<test binary> -deputy-net-probe listen 127.0.0.1:0    open a TCP listener
//	<test binary> -deputy-net-probe vsock -               open an AF_VSOCK socket
//	<test binary> -deputy-net-probe local -               open a Unix and a netlink socket
//
// It prints "ok" or the error, and exits 0 either way.
const netProbeArg = "-deputy-net-probe"

func netProbe(op, addr string) int {
	var err error
	switch op {
	case "dial":
		var c net.Conn
		if c, err = net.DialTimeout("tcp", addr, 5*time.Second); err == nil {
			_, err = c.Write([]byte("probe\n"))
			c.Close()
		}
	case "mptcp":
		// What curl --mptcp does, with nothing Go might fall back on.
		err = dialMPTCP(addr)
	case "vsock":
		// A virtual machine's way to its host, which Landlock does not see.
		err = openVsock()
	case "local":
		err = openLocal()
	case "listen":
		var ln net.Listener
		if ln, err = net.Listen("tcp", addr); err == nil {
			ln.Close()
		}
	default:
		err = fmt.Errorf("unknown probe %q", op)
	}
	if err != nil {
		fmt.Println("probe:", err)
		return 0
	}
	fmt.Println("probe: ok")
	return 0
}

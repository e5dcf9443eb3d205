package sandbox

import (
	"encoding/binary"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// runFilter runs the classic BPF program the way the kernel runs a seccomp
// filter over one system call (struct seccomp_data, little-endian here):
// only the instructions networkFilter emits are known.
func runFilter(t *testing.T, prog []unix.SockFilter, arch, nr uint32, arg0 uint64) uint32 {
	t.Helper()
	data := make([]byte, 64)
	binary.LittleEndian.PutUint32(data[offNR:], nr)
	binary.LittleEndian.PutUint32(data[offArch:], arch)
	binary.LittleEndian.PutUint64(data[offArg0:], arg0)
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			acc = binary.LittleEndian.Uint32(data[in.K:])
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K:
			ok := acc == in.K
			if in.Code&0xf0 == unix.BPF_JGE {
				ok = acc >= in.K
			}
			if ok {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case unix.BPF_RET | unix.BPF_K:
			return in.K
		default:
			t.Fatalf("instruction %d: unknown code %#x", pc, in.Code)
		}
	}
	t.Fatal("the program ran off its end")
	return 0
}

// The filter's verdict on every path, the 32-bit ABI's and x32's included,
// which a test can only reach by running 32-bit programs.
func TestNetworkFilter(t *testing.T) {
	a, ok := seccompArches[runtime.GOARCH]
	if !ok {
		t.Skipf("no filter for %s", runtime.GOARCH)
	}
	prog := networkFilter(a)
	const afVsock, afTIPC = 40, 30
	type call struct {
		name     string
		arch, nr uint32
		arg0     uint64
		want     uint32
	}
	cases := []call{
		{"socket AF_INET", a.native, a.socket, unix.AF_INET, retEACCES},
		{"socket AF_INET6", a.native, a.socket, unix.AF_INET6, retEACCES},
		{"socket AF_VSOCK", a.native, a.socket, afVsock, retEACCES},
		{"socket AF_TIPC", a.native, a.socket, afTIPC, retEACCES},
		{"socket AF_PACKET", a.native, a.socket, unix.AF_PACKET, retEACCES},
		{"socket AF_UNIX", a.native, a.socket, unix.AF_UNIX, retAllow},
		{"socket AF_NETLINK", a.native, a.socket, unix.AF_NETLINK, retAllow},
		{"socket AF_ALG", a.native, a.socket, unix.AF_ALG, retAllow},
		// The kernel reads the family as an int: the high half is not
		// the family's.
		{"socket AF_UNIX, high half set", a.native, a.socket, 1<<32 | unix.AF_UNIX, retAllow},
		{"io_uring_setup", a.native, a.ioUringSetup, 0, retENOSYS},
		{"another call", a.native, a.socket + 1, unix.AF_INET, retAllow},
		{"32-bit socket AF_INET", a.compat, a.compatSocket, unix.AF_INET, retEACCES},
		{"32-bit socket AF_UNIX", a.compat, a.compatSocket, unix.AF_UNIX, retAllow},
		{"32-bit io_uring_setup", a.compat, ioUringSetup, 0, retENOSYS},
		{"32-bit another call", a.compat, 3, 0, retAllow},
		{"an unknown ABI", 0x12345678, a.socket, unix.AF_UNIX, retENOSYS},
	}
	if a.compatSocketcall != 0 {
		cases = append(cases, call{"32-bit socketcall", a.compat, a.compatSocketcall, 1, retEACCES})
	}
	if a.x32 {
		cases = append(cases, call{"x32 socket", a.native, 0x40000000 | a.socket, unix.AF_UNIX, retEACCES})
	}
	for _, c := range cases {
		if got := runFilter(t, prog, c.arch, c.nr, c.arg0); got != c.want {
			t.Errorf("%s: %#x, want %#x", c.name, got, c.want)
		}
	}
}

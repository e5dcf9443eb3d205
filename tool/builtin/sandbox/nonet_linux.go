package sandbox

import (
	"errors"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Landlock's network rules cover TCP and nothing else: an MPTCP socket
// (IPPROTO_MPTCP, which Go itself uses for listeners), SCTP, and UDP
// before ABI 10 connect and bind freely under a ruleset that denies TCP.
// So a command without network also gets a seccomp filter that refuses to
// create any socket but a local one (localFamilies; EACCES, as Landlock
// answers) and io_uring rings (ENOSYS, so programs fall back to plain
// system calls the filter sees). Unix sockets and netlink still work.

// seccompArch is what the filter needs to know of an architecture: its
// audit number, socket(2)'s number, and those of a compat (32-bit) ABI the
// same kernel runs, where socketcall(2) must be refused whole (the filter
// cannot read its arguments, which are in memory).
type seccompArch struct {
	native, compat       uint32
	socket, ioUringSetup uint32
	x32                  bool // x86-64: refuse the x32 ABI's numbers
	compatSocket         uint32
	compatSocketcall     uint32 // 0: none
}

// localFamilies are the socket families a command without network may
// create: Unix sockets, netlink (which libc asks for the machine's
// addresses) and the kernel's crypto API.
var localFamilies = []uint32{unix.AF_UNIX, unix.AF_NETLINK, unix.AF_ALG}

// ioUringSetup is io_uring_setup(2)'s number on every architecture here.
const ioUringSetup = 425

var seccompArches = map[string]seccompArch{
	"amd64": {native: unix.AUDIT_ARCH_X86_64, compat: unix.AUDIT_ARCH_I386, socket: unix.SYS_SOCKET, ioUringSetup: ioUringSetup,
		x32: true, compatSocket: 359, compatSocketcall: 102},
	"arm64": {native: unix.AUDIT_ARCH_AARCH64, compat: unix.AUDIT_ARCH_ARM, socket: unix.SYS_SOCKET, ioUringSetup: ioUringSetup,
		compatSocket: 281},
}

// errNoSeccompArch: the filter is not written for this architecture.
var errNoSeccompArch = errors.New("no seccomp network filter for " + runtime.GOARCH)

// Offsets in struct seccomp_data; args[0]'s low half on little-endian.
const (
	offNR   = 0
	offArch = 4
	offArg0 = 16
)

// denyNetwork installs the filter on the calling thread, which must stay
// locked to its goroutine until it execs the command (execve keeps the
// calling thread's filter). no_new_privs must be set (Landlock set it).
func denyNetwork() error {
	a, ok := seccompArches[runtime.GOARCH]
	if !ok {
		return errNoSeccompArch
	}
	prog := networkFilter(a)
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	return unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0)
}

// bpf builds a classic BPF program whose jumps name labels.
type bpf struct {
	prog   []unix.SockFilter
	labels map[string]int
	fixups []fixup
}

type fixup struct {
	at     int
	jt, jf string
}

func (b *bpf) label(name string) { b.labels[name] = len(b.prog) }

func (b *bpf) load(off uint32) {
	b.prog = append(b.prog, unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off})
}

func (b *bpf) ret(v uint32) {
	b.prog = append(b.prog, unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: v})
}

// jump compares the accumulator with k (op: BPF_JEQ or BPF_JGE) and goes
// to label jt when true, to jf when false ("" = the next instruction).
func (b *bpf) jump(op uint16, k uint32, jt, jf string) {
	b.fixups = append(b.fixups, fixup{at: len(b.prog), jt: jt, jf: jf})
	b.prog = append(b.prog, unix.SockFilter{Code: unix.BPF_JMP | op | unix.BPF_K, K: k})
}

func (b *bpf) resolve() []unix.SockFilter {
	for _, f := range b.fixups {
		rel := func(l string) uint8 {
			if l == "" {
				return 0
			}
			return uint8(b.labels[l] - f.at - 1) // programs here are far shorter than 256
		}
		b.prog[f.at].Jt, b.prog[f.at].Jf = rel(f.jt), rel(f.jf)
	}
	return b.prog
}

const (
	retAllow  = unix.SECCOMP_RET_ALLOW
	retEACCES = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
	retENOSYS = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
)

func networkFilter(a seccompArch) []unix.SockFilter {
	b := &bpf{labels: map[string]int{}}
	b.load(offArch)
	b.jump(unix.BPF_JEQ, a.native, "", "compat")
	b.load(offNR)
	if a.x32 {
		b.jump(unix.BPF_JGE, 0x40000000, "eacces", "")
	}
	b.jump(unix.BPF_JEQ, a.socket, "domain", "")
	b.jump(unix.BPF_JEQ, a.ioUringSetup, "enosys", "")
	b.ret(retAllow)

	b.label("compat")
	b.load(offArch)
	b.jump(unix.BPF_JEQ, a.compat, "", "enosys") // an ABI not known here runs nothing
	b.load(offNR)
	if a.compatSocketcall != 0 {
		b.jump(unix.BPF_JEQ, a.compatSocketcall, "eacces", "")
	}
	b.jump(unix.BPF_JEQ, a.compatSocket, "domain", "")
	b.jump(unix.BPF_JEQ, ioUringSetup, "enosys", "")
	b.ret(retAllow)

	// Only the local families are allowed, not IPv4 and IPv6 alone: a
	// family such as AF_VSOCK (a virtual machine's host), AF_TIPC or
	// AF_RDS reaches other machines too.
	b.label("domain")
	b.load(offArg0)
	for _, af := range localFamilies {
		b.jump(unix.BPF_JEQ, af, "allow", "")
	}
	b.ret(retEACCES)
	b.label("allow")
	b.ret(retAllow)

	b.label("eacces")
	b.ret(retEACCES)
	b.label("enosys")
	b.ret(retENOSYS)
	return b.resolve()
}

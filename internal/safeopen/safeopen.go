// Package safeopen opens files that must be regular without ever blocking
// on them. Opening a named pipe for reading waits for a writer, and for
// writing waits for a reader; a device may wait for hardware. A file a model
// names, a glob matches or an agents directory holds can be any of these, so
// every such open goes through here: the file is opened non-blocking (which
// returns at once for every kind of file), its type checked on the open
// descriptor (no check-then-open race), and anything but a regular file
// refused with *NotRegularError.
package safeopen

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// NotRegularError refuses a file that is not a regular file.
type NotRegularError struct {
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return "not a regular file (" + Kind(e.Mode) + ")"
}

// Kind names the type of a file mode in words: "a named pipe", "a socket",
// "a device", "a directory".
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsRegular():
		return "a regular file"
	}
	return "a special file"
}

// Open opens path for reading. It fails with *NotRegularError, without
// blocking, when path is not a regular file.
func Open(path string) (*os.File, error) {
	return check(os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0))
}

// OpenIn opens name inside root with flag (os.O_RDONLY, os.O_WRONLY|os.O_CREATE,
// ...; never O_TRUNC, which would act before the type is known: truncate a
// writable file with File.Truncate). The os.Root keeps the open inside root
// even when a link is swapped in after the caller checked the path. It
// fails with *NotRegularError, without blocking, when name is not a regular
// file.
func OpenIn(root *os.Root, name string, flag int, perm fs.FileMode) (*os.File, error) {
	if flag&os.O_TRUNC != 0 {
		return nil, fmt.Errorf("safeopen: O_TRUNC is not allowed")
	}
	return check(root.OpenFile(name, flag|syscall.O_NONBLOCK, perm))
}

func check(f *os.File, err error) (*os.File, error) {
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &NotRegularError{Mode: fi.Mode()}
	}
	return f, nil
}

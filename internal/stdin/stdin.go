// Package stdin reads the input piped to a command, for deputy run and
// for deputy-temporal run (which deputy hands 'run --temporal' to, with
// the same stdin), so that both read it by one rule.
package stdin

import (
	"fmt"
	"io"
	"os"

	"github.com/mattn/go-isatty"

	"github.com/deputyhq/deputy/config"
)

// TooLargeError refuses an input over the limit.
type TooLargeError struct{ Limit int }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("stdin holds more than %s, the limit (limits.stdin_max_bytes in config.yaml); pass a smaller input, or name the files in the agent's files instead", byteSize(e.Limit))
}

// ReadPiped reads in when it is a pipe or a file, not a terminal, up to
// limit bytes (limits.stdin_max_bytes; 0 means the default): more is
// refused with a *TooLargeError, after reading no more than limit+1 bytes,
// so a huge input costs neither memory nor a ledger row of its size.
func ReadPiped(in io.Reader, limit int) (string, error) {
	if in == nil {
		return "", nil
	}
	if f, ok := in.(*os.File); ok {
		if isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()) {
			return "", nil
		}
		fi, err := f.Stat()
		if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeCharDevice) == os.ModeCharDevice {
			// /dev/null and other character devices carry nothing to read.
			return "", nil
		}
	}
	if limit <= 0 {
		limit = config.DefaultStdinMaxBytes
	}
	b, err := io.ReadAll(io.LimitReader(in, int64(limit)+1))
	if err != nil {
		return "", fmt.Errorf("reading stdin: %w", err)
	}
	if len(b) > limit {
		return "", &TooLargeError{Limit: limit}
	}
	return string(b), nil
}

// byteSize shows n bytes in the largest whole binary unit.
func byteSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

package builtin

import (
	"bufio"
	"bytes"
	"io"
)

// sniffLen is how much of a file is inspected to tell text from binary,
// the same amount git looks at.
const sniffLen = 8000

// looksBinary reports whether the start of a file holds a NUL byte, which
// text files do not.
func looksBinary(head []byte) bool {
	return bytes.IndexByte(head[:min(len(head), sniffLen)], 0) >= 0
}

// readLine reads one line without its line ending, keeping at most max
// bytes of it and discarding the rest, so a giant minified line costs no
// memory; cut reports that something was dropped. The line is built in
// buf's storage, which callers pass back in (line[:0]) to spare an
// allocation per line; the result is only valid until the next call. It
// returns io.EOF only when there is no line left.
func readLine(br *bufio.Reader, max int, buf []byte) (line []byte, cut bool, err error) {
	line = buf[:0]
	total := 0
	for {
		chunk, err := br.ReadSlice('\n')
		total += len(chunk)
		// Two bytes beyond max leave room for "\r\n", so a line of
		// exactly max bytes is not mistaken for a cut one.
		if room := max + 2 - len(line); room > 0 {
			line = append(line, chunk[:min(len(chunk), room)]...)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && total == 0:
			return line[:0], false, io.EOF
		case err != nil && err != io.EOF:
			return line[:0], false, err
		}
		line = trimEOL(line)
		if len(line) > max {
			return line[:max], true, nil
		}
		return line, false, nil
	}
}

// trimEOL drops a trailing "\n" or "\r\n".
func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

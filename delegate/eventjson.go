package delegate

import (
	"strconv"
	"unicode/utf8"

	"github.com/deputyhq/deputy/tool"
)

// eventFields is the JSON object of an event's fields in the ledger. It is
// written by hand, keys in sorted order and strings escaped as
// encoding/json escapes them, so that the bytes are what json.Marshal of a
// map would give: every child writes two of these, and reflection over a
// map of interfaces cost each child's goroutine more stack and time than
// the rest of its start.
type eventFields struct{ b []byte }

func (f *eventFields) key(k string) {
	if len(f.b) == 0 {
		f.b = append(f.b, '{')
	} else {
		f.b = append(f.b, ',')
	}
	f.b = appendJSONString(f.b, k)
	f.b = append(f.b, ':')
}

func (f *eventFields) str(k, v string) {
	f.key(k)
	f.b = appendJSONString(f.b, v)
}

func (f *eventFields) int(k string, v int64) {
	f.key(k)
	f.b = strconv.AppendInt(f.b, v, 10)
}

// strs writes a list of strings; nil is null, as encoding/json writes it.
func (f *eventFields) strs(k string, v []string) {
	f.key(k)
	if v == nil {
		f.b = append(f.b, "null"...)
		return
	}
	f.b = append(f.b, '[')
	for i, s := range v {
		if i > 0 {
			f.b = append(f.b, ',')
		}
		f.b = appendJSONString(f.b, s)
	}
	f.b = append(f.b, ']')
}

// todos writes a task list as encoding/json would: a list of objects in
// TodoItem's field order, empty optional fields left out.
func (f *eventFields) todos(k string, items []tool.TodoItem) {
	f.key(k)
	f.b = append(f.b, '[')
	for i, t := range items {
		if i > 0 {
			f.b = append(f.b, ',')
		}
		f.b = append(f.b, `{"content":`...)
		f.b = appendJSONString(f.b, t.Content)
		f.b = append(f.b, `,"status":`...)
		f.b = appendJSONString(f.b, t.Status)
		for _, opt := range [...]struct{ k, v string }{{"activeForm", t.ActiveForm}, {"priority", t.Priority}, {"id", t.ID}} {
			if opt.v != "" {
				f.b = append(f.b, ',')
				f.b = appendJSONString(f.b, opt.k)
				f.b = append(f.b, ':')
				f.b = appendJSONString(f.b, opt.v)
			}
		}
		f.b = append(f.b, '}')
	}
	f.b = append(f.b, ']')
}

func (f *eventFields) bytes() []byte {
	if len(f.b) == 0 {
		return []byte("{}")
	}
	return append(f.b, '}')
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string the way encoding/json does
// by default: HTML-safe (<, > and & as \u003c, \u003e, \u0026), U+2028 and
// U+2029 escaped, invalid UTF-8 as U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

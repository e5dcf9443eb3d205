package config

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Severity says whether a diagnostic stops deputy (Error) or is only shown
// (Warning).
type Severity int

const (
	// Error is a problem that must be fixed before the configuration is used.
	Error Severity = iota + 1
	// Warning is shown but does not stop anything.
	Warning
)

// String returns "error" or "warning".
func (s Severity) String() string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	}
	return "severity(" + strconv.Itoa(int(s)) + ")"
}

// Diagnostic is one problem found in a configuration file.
type Diagnostic struct {
	File     string // path of the file, as it was given to the loader
	Line     int    // 1-based; 0 when unknown
	Key      string // dotted key ("sub_agents_config.max_depth"); "" when the problem is not about one key
	Severity Severity
	Message  string
}

// String renders the diagnostic as FILE:LINE: KEY: MESSAGE, leaving out the
// parts that are unknown.
func (d Diagnostic) String() string {
	var b strings.Builder
	switch {
	case d.File != "" && d.Line > 0:
		b.WriteString(d.File)
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(d.Line))
		b.WriteString(": ")
	case d.File != "":
		b.WriteString(d.File)
		b.WriteString(": ")
	case d.Line > 0:
		b.WriteString("line ")
		b.WriteString(strconv.Itoa(d.Line))
		b.WriteString(": ")
	}
	if d.Key != "" {
		b.WriteString(d.Key)
		b.WriteString(": ")
	}
	b.WriteString(d.Message)
	return b.String()
}

// Diagnostics is a list of diagnostics, in the order they were found.
type Diagnostics []Diagnostic

// HasErrors reports whether any diagnostic is an Error.
func (ds Diagnostics) HasErrors() bool {
	return slices.ContainsFunc(ds, func(d Diagnostic) bool { return d.Severity == Error })
}

// Errors returns only the Error diagnostics.
func (ds Diagnostics) Errors() Diagnostics {
	return ds.filter(func(d Diagnostic) bool { return d.Severity == Error })
}

// Warnings returns only the Warning diagnostics.
func (ds Diagnostics) Warnings() Diagnostics {
	return ds.filter(func(d Diagnostic) bool { return d.Severity == Warning })
}

// ForFile returns the diagnostics about one file.
func (ds Diagnostics) ForFile(path string) Diagnostics {
	return ds.filter(func(d Diagnostic) bool { return d.File == path })
}

func (ds Diagnostics) filter(keep func(Diagnostic) bool) Diagnostics {
	var out Diagnostics
	for _, d := range ds {
		if keep(d) {
			out = append(out, d)
		}
	}
	return out
}

// Sorted returns a copy ordered by file, then line, keeping the original
// order among equals.
func (ds Diagnostics) Sorted() Diagnostics {
	out := slices.Clone(ds)
	slices.SortStableFunc(out, func(a, b Diagnostic) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
	})
	return out
}

// String renders one diagnostic per line.
func (ds Diagnostics) String() string {
	lines := make([]string, len(ds))
	for i, d := range ds {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// Err returns nil when there are no errors, and otherwise a
// *ValidationError holding the Error diagnostics (warnings are left out).
func (ds Diagnostics) Err() error {
	errs := ds.Errors()
	if len(errs) == 0 {
		return nil
	}
	return &ValidationError{Diagnostics: errs}
}

// ValidationError is a configuration that failed validation. Its message
// lists every problem on its own line, so a user can fix them all at once.
type ValidationError struct {
	Diagnostics Diagnostics
}

func (e *ValidationError) Error() string { return e.Diagnostics.String() }

// Sink collects the diagnostics of one file. Origin packages report
// through it what they find in their tools' files.
type Sink struct {
	File  string
	Diags Diagnostics
}

// Errorf adds an Error at line (0: unknown) about key ("": the file).
func (s *Sink) Errorf(line int, key, format string, args ...any) {
	s.add(Error, line, key, format, args...)
}

// Warnf adds a Warning at line (0: unknown) about key ("": the file).
func (s *Sink) Warnf(line int, key, format string, args ...any) {
	s.add(Warning, line, key, format, args...)
}

func (s *Sink) add(sev Severity, line int, key, format string, args ...any) {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	s.Diags = append(s.Diags, Diagnostic{File: s.File, Line: line, Key: key, Severity: sev, Message: msg})
}

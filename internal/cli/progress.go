package cli

import (
	"context"
	"io"
	"os"

	"github.com/mattn/go-isatty"

	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/internal/cli/live"
)

// Progress modes: how a run's tree shows on stderr while it works.
const (
	progressAuto  = "auto"
	progressLive  = "live"
	progressPlain = "plain"
	progressNone  = "none"
)

const progressHelp = "how the tree shows on stderr while it works: auto (a live view when stderr is a terminal that can redraw, else plain lines), live, plain (one line per step, as -v), none"

// progressMode settles the mode from the flag, -v and stderr: the live
// view needs a terminal that can redraw (not TERM=dumb) with colour allowed
// (NO_COLOR unset or empty). Everything else — a terminal without those, a
// pipe, a file — gets the same information as plain lines, so a run in CI
// or under another program still shows what it is doing; --progress=none
// keeps stderr clean.
func progressMode(flag string, verbose bool, stderr io.Writer) (string, error) {
	switch flag {
	case progressAuto, progressLive, progressPlain, progressNone:
	default:
		return "", configErrf("--progress %q: use auto, live, plain or none", flag)
	}
	if verbose && flag == progressAuto {
		return progressPlain, nil
	}
	if flag == progressPlain || flag == progressNone {
		return flag, nil
	}
	if canRedraw(stderr) {
		return progressLive, nil
	}
	return progressPlain, nil
}

// canRedraw reports whether w is a terminal the live view can draw on.
func canRedraw(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || !isatty.IsTerminal(f.Fd()) {
		return false
	}
	// NO_COLOR counts when set and not empty (no-color.org).
	return os.Getenv("TERM") != "dumb" && os.Getenv("NO_COLOR") == ""
}

// showProgress starts what mode shows on stderr and returns its listeners,
// the live view (nil in the other modes: it can also ask the person), and
// a stop to call before anything else is printed. cancel cancels one run
// (the live view's key), interrupt the whole run (its ctrl+c).
func showProgress(ctx context.Context, mode string, stderr io.Writer, cancel func(string) bool, interrupt func()) ([]delegate.Listener, *live.View, func()) {
	switch mode {
	case progressPlain:
		return []delegate.Listener{live.NewPlain(stderr).Listen}, nil, func() {}
	case progressLive:
		v := live.Start(ctx, stderr.(*os.File), live.Options{Cancel: cancel, Interrupt: interrupt})
		return []delegate.Listener{v.Tree.Listen}, v, v.Stop
	}
	return nil, nil, func() {}
}

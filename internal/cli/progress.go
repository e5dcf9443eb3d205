package cli

import (
	"io"
	"os"

	"github.com/mattn/go-isatty"
)

// Progress modes: how a run's tree shows on stderr while it works.
const (
	progressAuto  = "auto"
	progressLive  = "live"
	progressPlain = "plain"
	progressNone  = "none"
)

const progressHelp = "how the tree shows on stderr while it works: auto (a live view when stderr is a terminal, else nothing), live, plain (one line per step, as -v), none"

// progressMode settles the mode from the flag, -v and the terminal: the
// live view needs a terminal that can redraw (not TERM=dumb) and colour
// allowed (no NO_COLOR); without one, live falls back to plain lines and
// auto to nothing.
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
	if flag == progressLive {
		return progressPlain, nil
	}
	return progressNone, nil
}

// canRedraw reports whether w is a terminal the live view can draw on.
func canRedraw(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || !isatty.IsTerminal(f.Fd()) {
		return false
	}
	if os.Getenv("TERM") == "dumb" {
		return false
	}
	_, noColor := os.LookupEnv("NO_COLOR")
	return !noColor
}

// Package builtin holds deputy's built-in tools: reading, writing and
// searching files inside a working directory, running shell commands,
// fetching URLs and asking the user. Every file tool goes through Confine,
// so no path the model sends reaches outside the working directory.
package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/deputyhq/deputy/internal/safeopen"
	"github.com/deputyhq/deputy/tool"
)

// Names of the built-in tools.
const (
	ReadFile      = "read_file"
	WriteFile     = "write_file"
	EditFile      = "edit_file"
	ListDirectory = "list_directory"
	FindPath      = "find_path"
	Grep          = "grep"
	Terminal      = "terminal"
	Fetch         = "fetch"
	AskUser       = "ask_user"
	// TodoWrite and TodoRead are in todo.go.
)

// Defaults for the zero values of Options.
const (
	DefaultFetchMaxBytes   = 1 << 20
	DefaultTerminalTimeout = 2 * time.Minute
	DefaultOutputMaxBytes  = 32 << 10
	DefaultReadMaxBytes    = 64 << 10
)

// Options configure the built-in tools. Only Workdir is required.
type Options struct {
	// Workdir is the directory the file tools are confined to and the
	// terminal runs in. It is made absolute by New.
	Workdir string
	// AskUser asks the person at the terminal a question. Nil means there
	// is no terminal: ask_user then answers with an error, never blocks.
	AskUser func(ctx context.Context, question string) (string, error)
	// FetchAllowHosts limits fetch to these hosts and their subdomains
	// ("example.com" allows "docs.example.com"). Empty allows any host.
	FetchAllowHosts []string
	// FetchMaxBytes caps a fetched body (default DefaultFetchMaxBytes).
	FetchMaxBytes int64
	// TerminalTimeout is the default time a command may run (default
	// DefaultTerminalTimeout); a call may ask for more, up to
	// max(TerminalTimeout, 10 minutes).
	TerminalTimeout time.Duration
	// OutputMaxBytes caps what terminal and grep return (default
	// DefaultOutputMaxBytes).
	OutputMaxBytes int
	// ReadMaxBytes caps what one read_file call returns (default
	// DefaultReadMaxBytes).
	ReadMaxBytes int
	// HTTPClient is used by fetch (default: a client with a 60 s timeout).
	HTTPClient *http.Client
	// TerminalEnv names environment variables commands see besides
	// BaseTerminalEnv; the rest of deputy's environment is withheld.
	TerminalEnv []string
	// SecretEnv names variables a command never sees, even when listed in
	// TerminalEnv: the provider keys and every api_key_env.
	SecretEnv []string
	// TerminalNetwork lets commands use the network; by default the
	// sandbox denies it (where the kernel supports that).
	TerminalNetwork bool
	// TerminalReadPaths and TerminalWritePaths grant commands access beyond
	// the system directories (read) and the working directory (read and
	// write).
	TerminalReadPaths  []string
	TerminalWritePaths []string
	// Search is the search API web_search calls; nil means none (the
	// engine then offers web_search only where the agent's provider runs
	// its own search).
	Search *SearchAPI
	// NoSandbox runs commands unconfined (still with the filtered
	// environment, still killed with everything they started where the
	// process group reaches).
	NoSandbox bool
}

// names lists every built-in tool in the order New registers them.
var names = []string{ReadFile, WriteFile, EditFile, ListDirectory, FindPath, Grep, Terminal, Fetch, WebSearch, AskUser, TodoWrite, TodoRead}

// Names returns the names of all built-in tools, for reserving them against
// user-defined tools. The group name tool.FileOps is reserved too.
func Names() []string { return slices.Clone(names) }

// DefaultToolNames returns the read-only tools an agent gets when its
// configuration names none. Writing, running, fetching and asking are only
// given to agents that name them.
func DefaultToolNames() []string {
	return []string{ReadFile, ListDirectory, FindPath, Grep}
}

// New returns a registry with every built-in tool and the file_ops group;
// callers narrow it to what an agent may use. New panics when
// opts.Workdir is empty, a programming error. A Workdir that does not exist
// is reported by each tool call instead, so building a registry never
// touches the disk.
func New(opts Options) *tool.Registry {
	if opts.Workdir == "" {
		panic("builtin.New: Options.Workdir is required")
	}
	e := newEnv(opts)
	// tool.NewRegistry already knows the file_ops group.
	return tool.NewRegistry(
		readFileTool(e),
		writeFileTool(e),
		editFileTool(e),
		listDirectoryTool(e),
		findPathTool(e),
		grepTool(e),
		terminalTool(e),
		newFetchTool(e, nil),
		newWebSearchTool(e, nil),
		askUserTool(e),
		todoWriteTool(),
		todoReadTool(),
	)
}

// env is the resolved configuration the tools share.
type env struct {
	opts Options
	root string // absolute, not yet symlink-resolved (it may not exist yet)

	sandboxNote sync.Once // the terminal says once when it cannot confine
}

func newEnv(opts Options) *env {
	root, err := filepath.Abs(opts.Workdir)
	if err != nil {
		// Abs only fails when the current directory is gone; keep the
		// path as given and let Confine report it on use.
		root = filepath.Clean(opts.Workdir)
	}
	opts.Workdir = root
	if opts.FetchMaxBytes <= 0 {
		opts.FetchMaxBytes = DefaultFetchMaxBytes
	}
	if opts.TerminalTimeout <= 0 {
		opts.TerminalTimeout = DefaultTerminalTimeout
	}
	if opts.OutputMaxBytes <= 0 {
		opts.OutputMaxBytes = DefaultOutputMaxBytes
	}
	if opts.ReadMaxBytes <= 0 {
		opts.ReadMaxBytes = DefaultReadMaxBytes
	}
	return &env{opts: opts, root: root}
}

// confine is Confine against the tools' working directory.
func (e *env) confine(p string) (string, error) { return Confine(e.root, p) }

// open opens p, a path confine returned, through an os.Root of the working
// directory: a link swapped in between the check and the open still cannot
// lead outside. Only regular files are opened, and never with a wait: a
// named pipe, socket or device fails at once with *safeopen.NotRegularError.
// flag must not hold O_TRUNC (see safeopen.OpenIn).
func (e *env) open(p string, flag int, perm fs.FileMode) (*os.File, error) {
	realRoot, err := e.confine("")
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(realRoot, p)
	if err != nil {
		return nil, err
	}
	r, err := os.OpenRoot(realRoot)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return safeopen.OpenIn(r, rel, flag, perm)
}

// rel shows an absolute path the way the model should write it: relative
// to the working directory, with forward slashes.
func (e *env) rel(abs string) string {
	realRoot, err := filepath.EvalSymlinks(e.root)
	if err != nil {
		realRoot = e.root
	}
	return relTo(realRoot, abs)
}

// relTo is rel against an already resolved root, for tools that show many
// paths in one call.
func relTo(realRoot, abs string) string {
	r, err := filepath.Rel(realRoot, abs)
	if err != nil {
		return filepath.ToSlash(abs)
	}
	return filepath.ToSlash(r)
}

// fileError turns an error from the file system into a message the model
// can act on. The *PathError's own path is dropped: it is the resolved
// absolute path, while the model knows the file as shown.
func fileError(shown string, err error) tool.Result {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var nr *safeopen.NotRegularError
	switch {
	case errors.As(err, &nr) && nr.Mode.IsDir(), errors.Is(err, syscall.EISDIR):
		return tool.Errorf("%s is a directory", shown)
	case errors.As(err, &nr):
		return tool.Errorf("%s is %s, not a regular file; the file tools read and write regular files only", shown, safeopen.Kind(nr.Mode))
	case errors.Is(err, fs.ErrNotExist):
		return tool.Errorf("%s does not exist", shown)
	case errors.Is(err, fs.ErrPermission):
		return tool.Errorf("permission denied: %s", shown)
	default:
		return tool.Errorf("%s: %v", shown, err)
	}
}

// pathError renders an error from Confine.
func pathError(err error) tool.Result { return tool.Errorf("%v", err) }

// orDot shows the working directory itself as ".".
func orDot(p string) string {
	if p == "" {
		return "."
	}
	return p
}

// plural picks the word form for n.
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

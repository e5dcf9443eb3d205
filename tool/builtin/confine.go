package builtin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxSymlinkHops bounds symlink resolution, so a loop is an error rather
// than a hang (the kernel's own limit is 40).
const maxSymlinkHops = 40

// OutsideError reports a path that leaves the working directory, whether
// lexically (../x, /etc/passwd) or through a symbolic link.
type OutsideError struct {
	// Path is the path as the model gave it.
	Path string
	// ViaSymlink is set when the path only escapes through a link.
	ViaSymlink bool
}

func (e *OutsideError) Error() string {
	if e.ViaSymlink {
		return fmt.Sprintf("path %q is outside the working directory (through a symbolic link)", e.Path)
	}
	return fmt.Sprintf("path %q is outside the working directory", e.Path)
}

// Confine resolves p against the working directory root and returns the
// absolute path it names with every existing symbolic link resolved. A
// relative p is taken from root; an absolute p must lie inside root. The
// result is refused with an *OutsideError when it ends up outside root,
// including through a link at any component: the final one, a dangling one
// (whose target a write would create), or the parent of a file that does
// not exist yet. The empty path means root itself. ".." is applied to the
// path as written (filepath.Clean) before links are followed, so
// "link/../x" is root/x whatever link points to.
//
// Tools operate on the returned path, not on p, so what was checked is what
// gets opened; a link swapped in between the two remains possible, which is
// acceptable for tools run on the user's behalf in the user's own tree.
func Confine(root, p string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 || strings.IndexByte(root, 0) >= 0 {
		return "", fmt.Errorf("path %q contains a NUL byte", p)
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("working directory %q: %w", root, err)
	}
	realRoot, err := filepath.EvalSymlinks(absRoot)
	if err != nil {
		return "", fmt.Errorf("working directory %q: %w", root, err)
	}

	// Relative paths are joined to the resolved root, so that ".." is
	// applied to the real directory, as the kernel would apply it.
	var lexical string
	switch {
	case filepath.IsAbs(p):
		lexical = filepath.Clean(p)
	default:
		lexical = filepath.Join(realRoot, p)
	}
	// An absolute path may be spelled through the unresolved root (the
	// user's workdir may itself sit behind a link); resolution below sorts
	// that out, so only paths outside both spellings are refused here.
	if !within(realRoot, lexical) && !within(absRoot, lexical) {
		return "", &OutsideError{Path: p}
	}
	resolved, err := resolve(lexical)
	if err != nil {
		return "", fmt.Errorf("path %q: %w", p, err)
	}
	if !within(realRoot, resolved) {
		return "", &OutsideError{Path: p, ViaSymlink: true}
	}
	return resolved, nil
}

// within reports whether path is root or below it; both are clean and
// absolute.
func within(root, path string) bool {
	if path == root {
		return true
	}
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root += string(filepath.Separator)
	}
	return strings.HasPrefix(path, root)
}

// resolve is filepath.EvalSymlinks for paths that may not exist yet: it
// follows every link on the existing part of path, including dangling
// links (they matter, since writing through one creates its target), and
// keeps the missing remainder as written. path is clean and absolute.
func resolve(path string) (string, error) {
	vol := filepath.VolumeName(path)
	resolved := vol + string(filepath.Separator)
	rest := splitPath(path[len(vol):])
	hops := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || isNotDir(err) {
				// Nothing below a missing component can be a link.
				resolved = next
				continue
			}
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		hops++
		if hops > maxSymlinkHops {
			return "", errors.New("too many levels of symbolic links")
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			tv := filepath.VolumeName(target)
			resolved = tv + string(filepath.Separator)
			target = target[len(tv):]
		}
		rest = append(splitPath(target), rest...)
	}
	return resolved, nil
}

func splitPath(p string) []string {
	return strings.Split(filepath.ToSlash(p), "/")
}

// isNotDir reports the error of looking up a name below a file that is not
// a directory ("notes.txt/x"); for confinement that is just a missing path.
func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }

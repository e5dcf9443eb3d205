package builtin

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// confineTree builds a working directory with links pointing in, out and
// nowhere, next to an "outside" directory holding a secret:
//
//	base/root/a.txt, sub/b.txt, in_link -> sub, in_file_link -> a.txt,
//	  out_dir_link -> ../outside, out_file_link -> ../outside/secret.txt,
//	  dangling_out -> ../outside/new.txt, dangling_in -> missing.txt,
//	  abs_out -> <abs outside>, loop1 <-> loop2, sub/up -> ..
//	base/outside/secret.txt
//	base/root_link -> root
//
// It returns the real (link-free) root and the outside directory.
func confineTree(t testing.TB, base string) (root, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(base)
	if err != nil {
		t.Fatal(err)
	}
	root = filepath.Join(base, "root")
	outside = filepath.Join(base, "outside")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "sub"), 0o755))
	must(os.MkdirAll(outside, 0o755))
	must(os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o644))
	must(os.WriteFile(filepath.Join(root, "sub", "b.txt"), []byte("b\n"), 0o644))
	must(os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret\n"), 0o644))
	for link, target := range map[string]string{
		"in_link":       "sub",
		"in_file_link":  "a.txt",
		"out_dir_link":  "../outside",
		"out_file_link": "../outside/secret.txt",
		"dangling_out":  "../outside/new.txt",
		"dangling_in":   "missing.txt",
		"abs_out":       outside,
		"loop1":         "loop2",
		"loop2":         "loop1",
		"sub/up":        "..",
	} {
		must(os.Symlink(target, filepath.Join(root, link)))
	}
	must(os.Symlink("root", filepath.Join(base, "root_link")))
	return root, outside
}

func TestConfine(t *testing.T) {
	root, _ := confineTree(t, t.TempDir())
	rootLink := filepath.Join(filepath.Dir(root), "root_link")
	tests := []struct {
		root, path string
		want       string // relative to root; "" with wantErr
		outside    bool   // want an *OutsideError
		viaLink    bool
		wantErr    bool // want some other error
	}{
		{root: root, path: "a.txt", want: "a.txt"},
		{root: root, path: "", want: "."},
		{root: root, path: ".", want: "."},
		{root: root, path: "./sub/./b.txt", want: "sub/b.txt"},
		{root: root, path: "sub/../a.txt", want: "a.txt"},
		{root: root, path: "new/dir/file.txt", want: "new/dir/file.txt"},
		{root: root, path: root + "/sub/b.txt", want: "sub/b.txt"},
		{root: root, path: root, want: "."},
		{root: root, path: "in_link/b.txt", want: "sub/b.txt"},
		{root: root, path: "in_link/new.txt", want: "sub/new.txt"},
		{root: root, path: "in_file_link", want: "a.txt"},
		{root: root, path: "dangling_in", want: "missing.txt"},
		{root: root, path: "sub/up/a.txt", want: "a.txt"},
		{root: root, path: "a.txt/x", want: "a.txt/x"},
		{root: root, path: "sub/up/up/x", want: "up/x"},
		// ".." is applied to the path as written (filepath.Clean), before
		// links are followed, so it cannot climb out through one.
		{root: root, path: "in_link/up/../outside", want: "sub/outside"},

		{root: root, path: "..", outside: true},
		{root: root, path: "../x", outside: true},
		{root: root, path: "../outside/secret.txt", outside: true},
		{root: root, path: "sub/../../x", outside: true},
		{root: root, path: "/etc/passwd", outside: true},
		{root: root, path: "/", outside: true},
		{root: root, path: root + "x/y", outside: true}, // a sibling sharing the prefix
		{root: root, path: "out_dir_link/secret.txt", outside: true, viaLink: true},
		{root: root, path: "out_dir_link", outside: true, viaLink: true},
		{root: root, path: "out_dir_link/not_yet.txt", outside: true, viaLink: true},
		{root: root, path: "out_dir_link/new/deep.txt", outside: true, viaLink: true},
		{root: root, path: "out_file_link", outside: true, viaLink: true},
		{root: root, path: "dangling_out", outside: true, viaLink: true},
		{root: root, path: "abs_out/secret.txt", outside: true, viaLink: true},
		{root: root, path: "in_link/up/out_dir_link/secret.txt", outside: true, viaLink: true},

		{root: root, path: "loop1", wantErr: true},
		{root: root, path: "a\x00b", wantErr: true},

		// A working directory reached through a link: both spellings of
		// an absolute path inside it are fine.
		{root: rootLink, path: "a.txt", want: "a.txt"},
		{root: rootLink, path: rootLink + "/a.txt", want: "a.txt"},
		{root: rootLink, path: root + "/a.txt", want: "a.txt"},
		{root: rootLink, path: "../outside/secret.txt", outside: true},
	}
	for _, tt := range tests {
		got, err := Confine(tt.root, tt.path)
		var oe *OutsideError
		switch {
		case tt.outside:
			if !errors.As(err, &oe) {
				t.Errorf("Confine(%q) = %q, %v; want an OutsideError", tt.path, got, err)
			} else if oe.ViaSymlink != tt.viaLink {
				t.Errorf("Confine(%q) ViaSymlink = %v, want %v", tt.path, oe.ViaSymlink, tt.viaLink)
			}
		case tt.wantErr:
			if err == nil || errors.As(err, &oe) {
				t.Errorf("Confine(%q) = %q, %v; want a non-outside error", tt.path, got, err)
			}
		default:
			want := filepath.Join(root, tt.want)
			if err != nil || got != want {
				t.Errorf("Confine(%q) = %q, %v; want %q", tt.path, got, err, want)
			}
		}
	}
}

func TestOutsideErrorMessage(t *testing.T) {
	_, err := Confine(t.TempDir(), "../x")
	if err == nil || err.Error() != `path "../x" is outside the working directory` {
		t.Errorf("message = %v", err)
	}
}

func TestConfineMissingRoot(t *testing.T) {
	if _, err := Confine(filepath.Join(t.TempDir(), "gone"), "a.txt"); err == nil {
		t.Error("Confine with a missing root succeeded")
	}
}

// FuzzConfine throws random paths at Confine over a tree full of links:
// it must not panic, and any accepted path must, once its existing part is
// resolved by the OS's rules (filepath.EvalSymlinks), lie inside the root.
func FuzzConfine(f *testing.F) {
	for _, seed := range []string{
		"a.txt", "", ".", "..", "../x", "/etc/passwd", "sub/../../x", "in_link/b.txt",
		"out_dir_link/secret.txt", "out_dir_link/new.txt", "dangling_out", "dangling_in",
		"abs_out", "loop1/x", "sub/up/up/x", "a.txt/x", "new/dir/f", "//a.txt", "a\x00",
		"in_link/up/../outside/secret.txt", "sub/./../in_link/../../outside",
	} {
		f.Add(seed)
	}
	root, _ := confineTree(f, f.TempDir())
	f.Fuzz(func(t *testing.T, p string) {
		got, err := Confine(root, p)
		if err != nil {
			return
		}
		if !filepath.IsAbs(got) || filepath.Clean(got) != got {
			t.Fatalf("Confine(%q) = %q, not a clean absolute path", p, got)
		}
		if !within(root, got) {
			t.Fatalf("Confine(%q) = %q, outside %q", p, got, root)
		}
		// Resolve the longest existing prefix the way the OS would.
		existing, rest := got, ""
		for {
			if _, err := os.Lstat(existing); err == nil || existing == filepath.Dir(existing) {
				break
			} else if !errors.Is(err, fs.ErrNotExist) && !isNotDir(err) {
				return
			}
			rest = filepath.Join(filepath.Base(existing), rest)
			existing = filepath.Dir(existing)
		}
		real, err := filepath.EvalSymlinks(existing)
		if err != nil {
			// A dangling link as the last existing component: Confine has
			// already followed it, so got itself names the target.
			if _, lerr := os.Lstat(existing); lerr == nil {
				t.Fatalf("Confine(%q) = %q whose existing part %q does not resolve: %v", p, got, existing, err)
			}
			return
		}
		if final := filepath.Join(real, rest); !within(root, final) && !strings.HasPrefix(final, root) {
			t.Fatalf("Confine(%q) = %q resolves to %q, outside %q", p, got, final, root)
		}
	})
}

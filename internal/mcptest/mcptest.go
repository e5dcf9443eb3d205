// Package mcptest installs the real MCP servers deputy's tests run, from
// npm, into a cache directory shared by every test package and CI run.
package mcptest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/config"
)

// Packages are the npm packages the tests use, pinned.
var Packages = []string{
	"@modelcontextprotocol/server-everything@2026.8.31",
	"@modelcontextprotocol/server-filesystem@2026.8.31",
	"@modelcontextprotocol/inspector-cli@1.0.3",
}

// Dir is where the packages are installed: $DEPUTY_TEST_NPM_DIR, or a
// directory under the user's cache named after the pinned versions.
func Dir() (string, error) {
	if d := os.Getenv("DEPUTY_TEST_NPM_DIR"); d != "" {
		return d, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(strings.Join(Packages, "\n")))
	return filepath.Join(base, "deputy-test", "npm-"+hex.EncodeToString(sum[:6])), nil
}

// Install installs the packages into Dir unless they are there already,
// and returns Dir. Concurrent callers (test packages run in parallel)
// wait for one another.
func Install() (string, error) {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("npm is not installed: %w", err)
	}
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	unlock, err := lock(filepath.Join(dir, ".lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	marker := filepath.Join(dir, ".installed")
	if b, err := os.ReadFile(marker); err == nil && string(b) == strings.Join(Packages, "\n") {
		return dir, nil
	}
	args := append([]string{"install", "--no-audit", "--no-fund", "--no-save", "--loglevel=error", "--prefix", dir}, Packages...)
	cmd := exec.Command(npm, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm install: %v\n%s", err, out)
	}
	return dir, os.WriteFile(marker, []byte(strings.Join(Packages, "\n")), 0o644)
}

// Require installs the packages for a test, and skips the test when npm
// is missing (the only reason it may skip).
func Require(tb testing.TB) string {
	tb.Helper()
	dir, err := Install()
	if err != nil {
		if _, lookErr := exec.LookPath("npm"); lookErr != nil {
			tb.Skipf("skipping: this test runs MCP servers from npm, and npm is not installed (%v)", lookErr)
		}
		tb.Fatal(err)
	}
	return dir
}

// Script returns the path of a package's entry point (its bin script).
func Script(dir, pkg string) string {
	m := map[string]string{
		"server-everything": "@modelcontextprotocol/server-everything/dist/index.js",
		"server-filesystem": "@modelcontextprotocol/server-filesystem/dist/index.js",
		"inspector-cli":     "@modelcontextprotocol/inspector-cli/build/cli.js",
	}
	return filepath.Join(dir, "node_modules", m[pkg])
}

// Everything is server-everything over stdio, under the given name. Its
// process carries the test's tag (see Processes).
func Everything(tb testing.TB, name string) config.MCPServer {
	dir := Require(tb)
	return config.MCPServer{Name: name, Transport: config.MCPStdio, Command: "node", Args: []string{Script(dir, "server-everything")},
		Env: map[string]string{TagVar: Tag(tb)}}
}

// Filesystem is server-filesystem over stdio, allowed into roots.
func Filesystem(tb testing.TB, name string, roots ...string) config.MCPServer {
	dir := Require(tb)
	return config.MCPServer{Name: name, Transport: config.MCPStdio, Command: "node", Args: append([]string{Script(dir, "server-filesystem")}, roots...),
		Env: map[string]string{TagVar: Tag(tb)}}
}

// TagVar is the environment variable that marks the server processes of
// one test, so that tests running at the same time (other packages, other
// checkouts on the machine) do not count each other's servers.
const TagVar = "DEPUTY_TEST_TAG"

// Tag is the test's tag: its name and this process's id.
func Tag(tb testing.TB) string {
	return fmt.Sprintf("%s-%d", strings.ReplaceAll(tb.Name(), "/", "_"), os.Getpid())
}

// Processes lists the live processes carrying tag in their environment
// (from /proc), to show that no server outlives its run.
func Processes(tag string) ([]string, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	want := TagVar + "=" + tag + "\x00"
	var out []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !strings.Contains(string(env)+"\x00", want) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if strings.Contains(string(stat), ") Z ") {
			continue // a zombie is gone already, only not yet reaped
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out = append(out, e.Name()+" "+strings.ReplaceAll(strings.TrimRight(string(cmd), "\x00"), "\x00", " "))
	}
	slices.Sort(out)
	return out, nil
}

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// userVars are the environment variables that point deputy at the user's
// own files: other runners' directories (their agents would join the
// test's), a settings file, the ledger, the session model of Claude Code.
var userVars = []string{
	"CLAUDE_CONFIG_DIR", "ANTHROPIC_MODEL", "CODEX_HOME", "GEMINI_CLI_HOME", "OPENCODE_CONFIG", "OPENCODE_CONFIG_DIR",
	"DEPUTY_CONFIG", "DEPUTY_DB", "DEPUTY_LOG",
}

// privateEnv is the environment of a deputy a test starts outside a
// script: the test's own, without userVars, with a home of its own (and
// its XDG directories) under home, then more.
func privateEnv(home string, more ...string) []string {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(userVars, name)
	})
	env = append(env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"XDG_STATE_HOME="+filepath.Join(home, ".local", "state"))
	return append(env, more...)
}

package claude

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/deputyhq/deputy/config"
)

// MCPJSONName is the project file Claude Code reads its MCP servers from.
const MCPJSONName = ".mcp.json"

// LoadMCPJSON reads a Claude Code .mcp.json ({"mcpServers": {NAME: {...}}}).
// A missing file is no servers and no error.
func LoadMCPJSON(path string) ([]config.MCPServer, config.Diagnostics) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, config.Diagnostics{{File: path, Severity: config.Error, Message: "cannot read: " + err.Error()}}
	}
	return ParseMCPJSON(data, path)
}

// ParseMCPJSON reads the contents of a .mcp.json; path names it in
// diagnostics.
func ParseMCPJSON(data []byte, path string) ([]config.MCPServer, config.Diagnostics) {
	sink := &config.Sink{File: path}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		sink.Errorf(0, "", "invalid JSON: %s", err.Error())
		return nil, sink.Diags
	}
	f := sink.Fields(m)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k != "mcpServers" {
			sink.Warnf(0, k, "only mcpServers is read from %s; this key is ignored", filepath.Base(path))
		}
	}
	return f.MCPServers("mcpServers"), sink.Diags.Sorted()
}

// UserMCPPath is where Claude Code keeps the MCP servers `claude mcp
// add` configures for a user ($CLAUDE_CONFIG_DIR/.claude.json, else
// ~/.claude.json); "" when there is no home directory.
func UserMCPPath() string {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return filepath.Join(d, ".claude.json")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".claude.json")
}

// LoadUserMCP reads the MCP servers of Claude Code's user file
// (UserMCPPath): its top-level mcpServers, and those of project
// dir, which win. The file is Claude Code's, not deputy's, so what deputy
// cannot read in it is left out silently. A missing file is no servers.
func LoadUserMCP(path, dir string) []config.MCPServer {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(data, &m) != nil {
		return nil
	}
	sink := &config.Sink{File: path}
	servers := sink.Fields(m).MCPServers("mcpServers")
	if projects, ok := m["projects"].(map[string]any); ok {
		if p, ok := projects[dir].(map[string]any); ok {
			for _, s := range sink.Fields(p).MCPServers("mcpServers") {
				servers = slices.DeleteFunc(servers, func(o config.MCPServer) bool { return o.Name == s.Name })
				servers = append(servers, s)
			}
		}
	}
	return servers
}

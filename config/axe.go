package config

// What an axe agent file means to deputy beyond the keys both share: axe's
// tool names, its default task, and its configuration directory.

// AxeDefaultTask is the task axe sends when `axe run NAME` gets none on
// stdin; deputy sends it to agents found in axe's directory likewise.
const AxeDefaultTask = "Execute the task described in your instructions."

// axeToolNames maps axe's tool names to deputy's; the others (read_file,
// write_file, edit_file, list_directory, call_agent) are the same in both.
var axeToolNames = map[string]string{
	"run_command": "terminal",
	"url_fetch":   "fetch",
}

// axeOnlyTools are axe tools deputy has no counterpart for.
var axeOnlyTools = map[string]bool{"web_search": true}

// axeTools translates axe tool names in a TOML agent's tools list; a tool
// deputy lacks is left out with a warning, other names pass through for
// lint to check.
func axeTools(f fields, tools []string) []string {
	out := make([]string, 0, len(tools))
	for _, t := range tools {
		if axeOnlyTools[t] {
			f.sink.warnf(f.line("tools"), "tools", "%q is an axe tool deputy does not have; it is left out", t)
			continue
		}
		if mapped, ok := axeToolNames[t]; ok {
			t = mapped
		}
		out = append(out, t)
	}
	return out
}

package config

// Specialization is one [llm_tool_<name>] section: a tool that behaves
// like llm_query with a fixed session, skill and system prompt patch.
type Specialization struct {
	ToolName          string // <name> of [llm_tool_<name>]
	SystemPromptPatch string
	SessionID         string
	// SkillName is the skill as written; Skill is what it resolved to.
	SkillName string
	Skill     *Skill
	// ContextWindow is how many earlier exchanges of the session are
	// replayed; 0 (also when absent) means all of them.
	ContextWindow int
	Section       string // the section name, "llm_tool_<name>"
	Line          int    // line of the section header
}

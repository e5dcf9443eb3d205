package workspace_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/delegate"
	"github.com/deputyhq/deputy/workspace"
)

// Real files of each origin (testdata/corpus, with their licences; see each
// SOURCE) load with warnings at most, from where their tool keeps them and
// with no flag, and a dry run of each shows the model, tools and prompt the
// origin tool would use.
func TestCorpusLoadsAndDryRuns(t *testing.T) {
	home := isolate(t)
	corpus, err := filepath.Abs(filepath.Join("testdata", "corpus"))
	if err != nil {
		t.Fatal(err)
	}
	project := t.TempDir()
	// axe's directory holds its agents and the skills they name by a path
	// relative to it.
	mustCopy(t, filepath.Join(corpus, "axe"), filepath.Join(home, ".config", "axe"))
	mustCopy(t, filepath.Join(corpus, "claude", "agents"), filepath.Join(project, ".claude", "agents"))
	// opencode's: a project's .opencode directory and opencode.json.
	mustCopy(t, filepath.Join(corpus, "opencode", ".opencode"), filepath.Join(project, ".opencode"))
	mustCopyFile(t, filepath.Join(corpus, "opencode", "opencode.json"), filepath.Join(project, "opencode.json"))
	// Gemini CLI's, in the user's directory; Codex's, in the project's.
	mustCopy(t, filepath.Join(corpus, "gemini", "agents"), filepath.Join(home, ".gemini", "agents"))
	mustCopy(t, filepath.Join(corpus, "codex", "agents"), filepath.Join(project, ".codex", "agents"))
	// As a new user would run them: no config.yaml, and only Anthropic's
	// key. A Claude agent that names no model (or inherit) runs as a root
	// on Claude Code's own default, sonnet.
	for _, k := range []string{"OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENROUTER_API_KEY", "OPENCODE_API_KEY"} {
		t.Setenv(k, "")
	}
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-test")
	t.Setenv("REVIEW_LANG", "Go")
	t.Setenv("PROJECT", "deputy")

	w, err := workspace.Load(workspace.Options{Dir: project, Subqueries: filepath.Join(corpus, "stdslop", "slop.ini")})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, a := range w.Agents.List() {
		count[a.Origin()]++
		agent, _, err := w.Agent(a.Name)
		if err != nil {
			t.Errorf("%s: %v", a.Path, err)
			continue
		}
		p, err := w.Engine(nil).Prepare(delegate.RunRequest{Agent: agent, Task: "t", Workdir: project})
		if err != nil {
			t.Errorf("%s: dry run: %v", a.Path, err)
			continue
		}
		if p.Model == "" || p.System == "" && a.Origin() == "claude" {
			t.Errorf("%s: dry run model %q, system %q", a.Path, p.Model, p.System)
		}
		if a.Origin() == "claude" && a.InheritsModel() && p.Model != "anthropic/claude-sonnet-5-5" {
			t.Errorf("%s: inherits, and runs at the root on %q, not Claude Code's default", a.Path, p.Model)
		}
		var tools []string
		for _, tl := range p.Tools {
			tools = append(tools, tl.Name)
		}
		switch {
		case a.Origin() == "axe" && a.Name == "tool-run-cmd" && strings.Join(tools, ",") != "terminal",
			a.Origin() == "axe" && a.Name == "tool-url-fetch" && strings.Join(tools, ",") != "fetch",
			a.Origin() == "axe" && a.Name == "provider-opencode" && len(tools) != 0:
			t.Errorf("%s: tools %v", a.Name, tools)
		}
		if a.Origin() == "axe" && p.Model != a.Model {
			t.Errorf("%s: model %q, want the file's %q", a.Name, p.Model, a.Model)
		}
		switch a.Name {
		case "with-subagents": // sub_agents names "with_skill" by its file, as axe does
			if strings.Join(tools, ",") != "call_agent" {
				t.Errorf("%s: tools %v", a.Name, tools)
			}
		case "with-skill":
			if !strings.Contains(p.System, "A stub skill") {
				t.Errorf("%s: system %q", a.Name, p.System)
			}
		case "dart-expert":
			if p.Model != "anthropic/claude-sonnet-4-20250514" {
				t.Errorf("%s: model %q", a.Name, p.Model)
			}
		case "codebase-orchestrator": // names agents and skills as tools
			if strings.Join(tools, ",") != "read_file,write_file,edit_file,terminal,find_path,grep,fetch" {
				t.Errorf("%s: tools %v", a.Name, tools)
			}
		case "frontend-developer": // front matter closed by a long dash line
			if !strings.HasPrefix(p.System, "# Frontend") || !strings.Contains(strings.Join(tools, ","), "terminal") {
				t.Errorf("%s: system %.40q, tools %v", a.Name, p.System, tools)
			}
		case "reviewer", "image-specialist", "release-notes": // opencode: tools: {bash: false}; permission: {bash: deny}; a bash pattern
			if a.Origin() == "opencode" && (slices.Contains(tools, "terminal") || slices.Contains(tools, "write_file") || !slices.Contains(tools, "read_file")) {
				t.Errorf("%s: tools %v", a.Name, tools)
			}
			if a.Name == "release-notes" && (p.System == "" || p.Model != "anthropic/claude-sonnet-4-20250514") {
				t.Errorf("%s: model %q, system %q", a.Name, p.Model, p.System)
			}
		case "workflow-orchestrator": // opencode's task tool: call_agent over the other opencode agents
			if !slices.Contains(tools, "call_agent") || !slices.Contains(a.Subagents, "reviewer") || p.Model != "anthropic/claude-sonnet-4-20250514" {
				t.Errorf("%s: model %q, tools %v, sub-agents %v", a.Name, p.Model, tools, a.Subagents)
			}
		case "android-build-expert": // Gemini CLI: its model on Gemini, its tools in deputy's names, edit_file (not Gemini CLI's) left out
			if p.Model != "gemini/gemini-3.1-flash-lite-preview" || strings.Join(tools, ",") != "read_file,write_file,terminal,grep,find_path" {
				t.Errorf("%s: model %q, tools %v", a.Name, p.Model, tools)
			}
		case "code-reviewer": // Codex: read-only sandbox, developer_instructions
			if a.Origin() == "codex" && (p.Model != "openai/gpt-5.4" || slices.Contains(tools, "terminal") || !strings.HasPrefix(p.System, "Own code quality review")) {
				t.Errorf("%s: model %q, tools %v, system %.30q", a.Name, p.Model, tools, p.System)
			}
		case "prd-writer": // a description YAML alone would not take
			if !strings.HasPrefix(a.Description, "**PRIMARY AGENT for project planning**: ") {
				t.Errorf("%s: description %q", a.Name, a.Description)
			}
		}
	}
	// "Python Performance Expert" is called by its file's name.
	if a, ok := w.Agents.Get("performance-expert"); !ok || !strings.HasSuffix(a.Path, filepath.Join("python", "performance-expert.md")) {
		t.Errorf("performance-expert: %v", a)
	}
	if d := cmp.Diff(map[string]int{"axe": 21, "claude": 27, "opencode": 11, "gemini": 12, "codex": 12}, count); d != "" {
		t.Errorf("agents by origin (-want +got):\n%s", d)
	}
	// Two collections in one tree both define golang-pro: the first by path
	// is used and the other is named in a warning, as Claude Code loads one.
	if g, _ := w.Agents.Get("golang-pro"); g == nil || filepath.Base(filepath.Dir(g.Path)) != "agents" {
		t.Errorf("golang-pro from %v", g)
	}
	dup := 0
	for _, d := range w.Diagnostics.Warnings() {
		if strings.Contains(d.Message, `agent "golang-pro" is also defined in golang-pro.md`) {
			dup++
		}
	}
	if dup != 1 {
		t.Errorf("%d duplicate warnings for golang-pro:\n%s", dup, w.Diagnostics.Warnings())
	}
	if len(w.Specializations) != 2 || w.Specializations[0].SystemPromptPatch != "You are a strict Go reviewer; cite file:line." ||
		w.Specializations[0].SessionID != "deputy-review" || w.Specializations[1].SystemPromptPatch != "Map the repository; list paths # as you go" {
		t.Errorf("specializations %+v", w.Specializations)
	}
	if n := len(w.Diagnostics.Errors()); n != 0 {
		t.Errorf("%d errors:\n%s", n, w.Diagnostics.Errors())
	}

	// Every xzatoma config loads whole: warnings, no errors.
	files, _ := filepath.Glob(filepath.Join(corpus, "xzatoma", "*.yaml"))
	if len(files) < 20 {
		t.Fatalf("only %d xzatoma files", len(files))
	}
	for _, f := range files {
		s, err := workspace.LoadSettings([]string{f})
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
			continue
		}
		if s.DefaultModel == "" && !copilot(t, f) {
			t.Errorf("%s: no default model", filepath.Base(f))
		}
	}
}

func copilot(t *testing.T, path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(data), "type: copilot") || !strings.Contains(string(data), "type:")
}

func mustCopyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustCopy(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
}

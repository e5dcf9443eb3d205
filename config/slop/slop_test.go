package slop

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/internal/testfile"
)

var testSpecOptions = Options{
	Reserved:  func(name string) bool { return name == "read_file" || name == "bash" },
	SkillDirs: []string{"testdata"},
}

// parseWarn parses src, the file named file, with opts, failing the test
// on an error, and returns the specializations and the warnings.
func parseWarn(t *testing.T, src, file string, opts Options) ([]config.Specialization, []string) {
	t.Helper()
	var warnings []string
	opts.Warn = func(d config.Diagnostic) { warnings = append(warnings, d.String()) }
	specs, err := Parse([]byte(src), file, opts)
	if err != nil {
		t.Fatal(err)
	}
	return specs, warnings
}

func TestLoadSpecializationsExample(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "example_subqueries.ini")
	specs, err := Load(path, testSpecOptions)
	if err != nil {
		t.Fatal(err)
	}
	want := []config.Specialization{
		{
			ToolName:          "code_review_llm",
			SystemPromptPatch: "You are a strict code reviewer focused on correctness and maintainability.",
			SessionID:         "code_review",
			SkillName:         "code_reviewer",
			ContextWindow:     8,
			Section:           "llm_tool_code_review_llm",
			Line:              22,
		},
		{
			ToolName:          "explorer_llm",
			SystemPromptPatch: "You explore repository structure and summarize findings with file paths.",
			SessionID:         "data_explorer",
			SkillName:         "data_explorer",
			ContextWindow:     20,
			Section:           "llm_tool_explorer_llm",
			Line:              28,
		},
	}
	if d := cmp.Diff(want, specs, cmpopts.IgnoreFields(config.Specialization{}, "Skill")); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	for _, s := range specs {
		if s.Skill == nil || s.Skill.Name != s.SkillName || s.Skill.Body == "" {
			t.Errorf("%s: skill = %+v", s.ToolName, s.Skill)
		}
	}
}

func TestParseSpecializationsValues(t *testing.T) {
	src := `top = level keys belong to DEFAULT and are ignored
[server]
port = 8080

[llm_tool_x]
system_prompt_patch = Use C#; keep "quotes" and trailing \ ; not this
session_id = s1
skill = testdata/skills/code_reviewer
; context_window absent: 0

[llm_tool_y]
system_prompt_patch = "Two; # lines"
session_id = s2
skill = ./testdata/skills/data_explorer/SKILL.md
context_window = 0
`
	specs, err := Parse([]byte(src), "subqueries.ini", testSpecOptions)
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 2 {
		t.Fatalf("got %d specializations, want 2: %+v", len(specs), specs)
	}
	x, y := specs[0], specs[1]
	if x.SystemPromptPatch != `Use C#; keep "quotes" and trailing \` || x.ContextWindow != 0 || x.Line != 5 || x.Skill == nil {
		t.Errorf("x = %+v", x)
	}
	if y.SystemPromptPatch != "Two; # lines" || y.SessionID != "s2" || y.Line != 11 || y.Skill == nil || y.Skill.Name != "data_explorer" {
		t.Errorf("y = %+v", y)
	}
}

func TestParseSpecializationsNone(t *testing.T) {
	for _, src := range []string{"", "; only comments\n", "[other]\na = b\n"} {
		specs, err := Parse([]byte(src), "f.ini", testSpecOptions)
		if err != nil || len(specs) != 0 {
			t.Errorf("%q: %v, %v", src, specs, err)
		}
	}
}

const goodSection = "system_prompt_patch = p\nsession_id = s\nskill = code_reviewer\n"

// Every validation message of the INI loader, exactly.
func TestParseSpecializationsMessages(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"empty tool name", "[llm_tool_]\n" + goodSection, []string{"f.ini:1: [llm_tool_]: empty tool name"}},
		{"missing key", "[llm_tool_x]\nsystem_prompt_patch = p\nskill = code_reviewer\n", []string{`f.ini:1: [llm_tool_x]: missing required key "session_id"`}},
		{"all keys missing", "\n[llm_tool_x]\n", []string{
			`f.ini:2: [llm_tool_x]: missing required key "system_prompt_patch"`,
			`f.ini:2: [llm_tool_x]: missing required key "session_id"`,
			`f.ini:2: [llm_tool_x]: missing required key "skill"`,
		}},
		{"empty key", "[llm_tool_x]\nsystem_prompt_patch = p\nsession_id = s\nskill =   \n", []string{`f.ini:4: [llm_tool_x]: key "skill" must not be empty`}},
		{"negative context_window", "[llm_tool_x]\n" + goodSection + "context_window = -1\n", []string{`f.ini:5: [llm_tool_x]: context_window must be a non-negative integer, got "-1"`}},
		{"non-numeric context_window", "[llm_tool_x]\n" + goodSection + "context_window = ten\n", []string{`f.ini:5: [llm_tool_x]: context_window must be a non-negative integer, got "ten"`}},
		{"empty context_window", "[llm_tool_x]\n" + goodSection + "context_window =\n", []string{`f.ini:5: [llm_tool_x]: context_window must be a non-negative integer, got ""`}},
		{"duplicate section", "[llm_tool_x]\n" + goodSection + "\n[llm_tool_x]\n" + goodSection, []string{"f.ini:6: [llm_tool_x]: duplicate section (first defined at line 1)"}},
		{"invalid tool name", "[llm_tool_x y]\n" + goodSection, []string{`f.ini:1: [llm_tool_x y]: "x y" is not a valid tool name (letters, digits, '_' and '-', at most 64 characters)`}},
		{"tool name too long", "[llm_tool_" + strings.Repeat("a", 65) + "]\n" + goodSection, []string{`f.ini:1: [llm_tool_` + strings.Repeat("a", 65) + `]: "` + strings.Repeat("a", 65) + `" is not a valid tool name (letters, digits, '_' and '-', at most 64 characters)`}},
		{"collides with llm_query", "[llm_tool_llm_query]\n" + goodSection, []string{`f.ini:1: [llm_tool_llm_query]: tool name "llm_query" collides with a built-in tool`}},
		{"collides with subagent", "[llm_tool_subagent]\n" + goodSection, []string{`f.ini:1: [llm_tool_subagent]: tool name "subagent" collides with a built-in tool`}},
		{"collides through Reserved", "[llm_tool_bash]\n" + goodSection, []string{`f.ini:1: [llm_tool_bash]: tool name "bash" collides with a built-in tool`}},
		{"unknown skill", "[llm_tool_x]\nsystem_prompt_patch = p\nsession_id = s\nskill = nope\n", []string{
			`f.ini:4: [llm_tool_x]: skill "nope" not found (looked in nope, testdata/skills/nope/SKILL.md)`,
		}},
		{"every problem collected", "[llm_tool_llm_query]\n" + goodSection + "[llm_tool_a]\nskill = nope\ncontext_window = x\nextra = 1\n[llm_tool_]\n" + goodSection, []string{
			`f.ini:1: [llm_tool_llm_query]: tool name "llm_query" collides with a built-in tool`,
			`f.ini:5: [llm_tool_a]: missing required key "system_prompt_patch"`,
			`f.ini:5: [llm_tool_a]: missing required key "session_id"`,
			`f.ini:6: [llm_tool_a]: skill "nope" not found (looked in nope, testdata/skills/nope/SKILL.md)`,
			`f.ini:7: [llm_tool_a]: context_window must be a non-negative integer, got "x"`,
			"f.ini:9: [llm_tool_]: empty tool name",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			specs, err := Parse([]byte(tt.src), "f.ini", testSpecOptions)
			if err == nil {
				t.Fatalf("no error; got %+v", specs)
			}
			if specs != nil {
				t.Error("specializations returned along with an error")
			}
			var ve *config.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %T is not a *config.ValidationError", err)
			}
			if d := cmp.Diff(strings.Join(tt.want, "\n"), err.Error()); d != "" {
				t.Errorf("error (-want +got):\n%s", d)
			}
			// Deterministic: the same input gives the same error.
			_, again := Parse([]byte(tt.src), "f.ini", testSpecOptions)
			if again == nil || again.Error() != err.Error() {
				t.Errorf("second run gave %v", again)
			}
		})
	}
}

func TestParseSpecializationsSkillRelativeToFile(t *testing.T) {
	dir := t.TempDir()
	testfile.WriteFiles(t, dir, map[string]string{
		"conf/subqueries.ini":       "[llm_tool_r]\nsystem_prompt_patch = p\nsession_id = s\nskill = skills/mine\n",
		"conf/skills/mine/SKILL.md": "Mine.\n",
	})
	specs, err := Load(filepath.Join(dir, "conf", "subqueries.ini"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if specs[0].Skill == nil || specs[0].Skill.Body != "Mine." || specs[0].Skill.Name != "mine" {
		t.Errorf("skill = %+v", specs[0].Skill)
	}
}

func TestLoadSpecializationsMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "none.ini"), Options{})
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v, want ErrNotExist", err)
	}
}

// The INI reading rules of std::slop's ParseIni, one case each.
func TestParseINI(t *testing.T) {
	src := "\ufeffk = v\n[a] ; comment\n  x = 1   # note\ny = Use C#; be brief\nz = \"a # b\" ; c\nw = 'lit $X' # c\nq = \"open # kept ; too\nb = `tick`\n; full comment\n# another\nstray line\n[ b ]\ne =\n= no key\n[c\n[d = v\ne = again\n"
	secs, strays := parseINI(src)
	want := []iniSection{
		{name: "a", line: 2, keys: []iniKey{
			{name: "x", value: "1", line: 3},
			{name: "y", value: "Use C#; be brief", line: 4},
			{name: "z", value: "a # b", line: 5},
			{name: "w", value: "lit $X", literal: true, line: 6},
			{name: "q", value: "\"open # kept ; too", line: 7},
			{name: "b", value: "tick", line: 8},
		}},
		// The name is trimmed; a '[' never closed is a key when it has
		// an '=' and skipped when not; a repeated key is kept twice.
		{name: "b", line: 12, keys: []iniKey{
			{name: "e", value: "", line: 13},
			{name: "[d", value: "v", line: 16},
			{name: "e", value: "again", line: 17},
		}},
	}
	if d := cmp.Diff(want, secs, cmp.AllowUnexported(iniSection{}, iniKey{})); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	wantStrays := []iniStray{{section: 0, line: 11, text: "stray line"}, {section: 1, line: 14, text: "= no key"}, {section: 1, line: 15, text: "[c"}}
	if d := cmp.Diff(wantStrays, strays, cmp.AllowUnexported(iniStray{})); d != "" {
		t.Errorf("strays (-want +got):\n%s", d)
	}
}

func TestExpandINIValue(t *testing.T) {
	env := map[string]string{"HOME": "/h", "A_1": "x", "EMPTY": ""}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for in, want := range map[string]string{
		"${HOME}/p":      "/h/p",
		"$HOME/p":        "/h/p",
		"$A_1$A_1":       "xx",
		"${A_1}b":        "xb",
		"$A_1b":          "",
		"cost $5 or $":   "cost $5 or $",
		"${1} ${ x} ${":  "${1} ${ x} ${",
		"$EMPTY.":        ".",
		"no dollars":     "no dollars",
		"$$HOME":         "$/h",
		"unset ${NOPE}!": "unset !",
	} {
		if got, _ := expandINIValue(in, lookup); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
	if _, unset := expandINIValue("$NOPE ${ALSO} $HOME", lookup); !slices.Equal(unset, []string{"NOPE", "ALSO"}) {
		t.Errorf("unset = %v", unset)
	}
}

// A std::slop file as its users write them: comments at line ends, ${VAR},
// the earlier [llm_tool.name] spelling, and near-miss names and keys
// std::slop does not read, which warn (its loader ignores unknown keys).
func TestParseSpecializationsStdSlop(t *testing.T) {
	src := `# std::slop configuration
[general]
model = gemini-2.5-flash ; not ours

[llm_tool.review_llm]   # earlier spelling
system_prompt_patch = You review ${LANG_NAME} code; cite lines.  # why: terse
session_id = $PROJECT-review ; per project
skill = code_reviewer

[LLM_TOOL_loud]
system_prompt_patch = p
[ llm_tool_padded ]
system_prompt_patch = p
session_id = padded
skill = code_reviewer
[llm_tool_quoted]
system_prompt_patch = "Keep # and ; here" # but not this
session_id = '${LITERAL}'
skill = testdata/skills/data_explorer
context_window = 4 ; four
description = a key std::slop does not read
Context-Window = 8
description = twice
`
	env := map[string]string{"LANG_NAME": "Go", "PROJECT": "deputy"}
	opts := testSpecOptions
	opts.LookupEnv = func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	specs, warnings := parseWarn(t, src, "slop.ini", opts)
	got := map[string]config.Specialization{}
	for _, s := range specs {
		got[s.ToolName] = s
	}
	r, q := got["review_llm"], got["quoted"]
	if p := got["padded"]; p.SessionID != "padded" || p.Section != "llm_tool_padded" {
		t.Errorf("padded = %+v", p)
	}
	if len(specs) != 3 || r.SystemPromptPatch != "You review Go code; cite lines." || r.SessionID != "deputy-review" || r.Section != "llm_tool.review_llm" {
		t.Errorf("review_llm = %+v (of %d)", r, len(specs))
	}
	if q.SystemPromptPatch != "Keep # and ; here" || q.SessionID != "${LITERAL}" || q.ContextWindow != 4 {
		t.Errorf("quoted = %+v", q)
	}
	want := []string{
		"slop.ini:10: [LLM_TOOL_loud]: looks like a specialization but is not one (section names are exact: write [llm_tool_loud]); ignored",
		`slop.ini:21: [llm_tool_quoted]: unknown key "description"; ignored`,
		`slop.ini:22: [llm_tool_quoted]: unknown key "Context-Window"; ignored (keys are exact: did you mean "context_window"?)`,
	}
	if d := cmp.Diff(want, warnings); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}

	// Both spellings of one tool are one tool, defined twice.
	_, err := Parse([]byte("[llm_tool_x]\n"+goodSection+"[llm_tool.x]\n"+goodSection), "f.ini", testSpecOptions)
	if err == nil || err.Error() != "f.ini:5: [llm_tool.x]: duplicate section (first defined at line 1)" {
		t.Errorf("err = %v", err)
	}
	// An unset variable warns and expands to nothing.
	opts.LookupEnv = func(string) (string, bool) { return "", false }
	_, warnings = parseWarn(t, "[llm_tool_x]\nsystem_prompt_patch = p $NOPE\nsession_id = s\nskill = code_reviewer\n", "f.ini", opts)
	if d := cmp.Diff([]string{"f.ini:2: [llm_tool_x]: system_prompt_patch: $NOPE is not set; it expands to nothing"}, warnings); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}
}

// What std::slop's ParseIni accepts loads here the same way: a key set
// twice keeps its last value, a line that is not key = value is skipped, a
// '[' never closed is no header, and blanks inside the brackets or after
// the prefix are trimmed. Each likely slip gets one warning.
func TestParseSpecializationsLenient(t *testing.T) {
	src := `[llm_tool_x]
system_prompt_patch = first
session_id = s1
skill = nope
context_window = 2
session_id = s2
skill = code_reviewer
session_id = s3
a prompt's second line
= no key

[ llm_tool_padded ]
` + goodSection + `[llm_tool_ spaced ]
` + goodSection + `[other]
no key here, and none needed
[llm_tool_y
` + goodSection + `[llm_tool_z]
` + goodSection + `[llm_tool_w = 1
`
	specs, warnings := parseWarn(t, src, "f.ini", testSpecOptions)
	var tools []string
	for _, s := range specs {
		tools = append(tools, s.ToolName+"/"+s.Section)
	}
	if d := cmp.Diff([]string{"x/llm_tool_x", "padded/llm_tool_padded", "spaced/llm_tool_ spaced", "z/llm_tool_z"}, tools); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
	if x := specs[0]; x.SystemPromptPatch != "first" || x.SessionID != "s3" || x.SkillName != "code_reviewer" || x.Skill == nil || x.ContextWindow != 2 {
		t.Errorf("x = %+v", x)
	}
	want := []string{
		`f.ini:6: [llm_tool_x]: key "session_id" is also set at line 3; the last value wins, line 3 ignored`,
		`f.ini:7: [llm_tool_x]: key "skill" is also set at line 4; the last value wins, line 4 ignored`,
		`f.ini:8: [llm_tool_x]: key "session_id" is also set at line 6; the last value wins, line 6 ignored`,
		`f.ini:9: [llm_tool_x]: line is not "key = value"; skipped: a prompt's second line`,
		`f.ini:10: [llm_tool_x]: line is not "key = value"; skipped: = no key`,
		`f.ini:22: [other]: [llm_tool_y is not a section header (no closing ']'); skipped`,
		`f.ini:30: [llm_tool_z]: unknown key "[llm_tool_w"; ignored`,
	}
	if d := cmp.Diff(want, warnings); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}

	// The lines after an unclosed header stay in the section before it,
	// as in std::slop: here they set x's keys again.
	specs, warnings = parseWarn(t, "[llm_tool_x]\n"+goodSection+"[llm_tool_y\nsession_id = y\n", "f.ini", testSpecOptions)
	if len(specs) != 1 || specs[0].SessionID != "y" {
		t.Fatalf("%+v", specs)
	}
	want = []string{
		`f.ini:5: [llm_tool_x]: [llm_tool_y is not a section header (no closing ']'); skipped`,
		`f.ini:6: [llm_tool_x]: key "session_id" is also set at line 3; the last value wins, line 3 ignored`,
	}
	if d := cmp.Diff(want, warnings); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}

	// What the spec refuses stays refused: padding does not make an
	// empty name, nor does it let a repeated section through.
	for src, msg := range map[string]string{
		"[ llm_tool_ ]\n" + goodSection:                                                           "f.ini:1: [llm_tool_]: empty tool name",
		"[llm_tool_x]\n" + goodSection + "[ llm_tool_x ]\n" + goodSection:                         "f.ini:5: [llm_tool_x]: duplicate section (first defined at line 1)",
		"[llm_tool_x]\nsystem_prompt_patch = p\nsession_id = s\nskill = code_reviewer\nskill =\n": `f.ini:5: [llm_tool_x]: key "skill" must not be empty`,
	} {
		if _, err := Parse([]byte(src), "f.ini", testSpecOptions); err == nil || err.Error() != msg {
			t.Errorf("%q: err = %v, want %s", src, err, msg)
		}
	}
}

// A file in another encoding loads: each invalid byte sequence of a value
// is read as U+FFFD, with one warning naming the key, so the text the
// model gets is the text deputy shows and records.
func TestParseSpecializationsNotUTF8(t *testing.T) {
	src := "[llm_tool_x]\nsystem_prompt_patch = Caf\xe9 review\nsession_id = caf\xe9\xe9\nskill = code_reviewer\n"
	specs, warnings := parseWarn(t, src, "f.ini", testSpecOptions)
	if p, s := specs[0].SystemPromptPatch, specs[0].SessionID; p != "Caf\uFFFD review" || s != "caf\uFFFD" {
		t.Errorf("patch %q, session %q", p, s)
	}
	want := []string{
		"f.ini:2: [llm_tool_x]: system_prompt_patch is not valid UTF-8; each invalid byte sequence is read as U+FFFD (save the file as UTF-8)",
		"f.ini:3: [llm_tool_x]: session_id is not valid UTF-8; each invalid byte sequence is read as U+FFFD (save the file as UTF-8)",
	}
	if d := cmp.Diff(want, warnings); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}
}

// Line ends and a byte order mark as editors write them: CRLF, a BOM
// before the first header, a comment after a header, tabs around '='.
func TestParseSpecializationsLineEnds(t *testing.T) {
	src := "\ufeff[llm_tool_x] ; first\r\nsystem_prompt_patch\t=\tp = q # note\r\nsession_id =s\r\nskill= code_reviewer\r\ncontext_window = 3\r\n"
	specs, warnings := parseWarn(t, src, "f.ini", testSpecOptions)
	if len(specs) != 1 || specs[0].ToolName != "x" || specs[0].SystemPromptPatch != "p = q" || specs[0].SessionID != "s" || specs[0].ContextWindow != 3 || len(warnings) != 0 {
		t.Errorf("%+v, warnings %q", specs, warnings)
	}
}

package slop

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/internal/testfile"
)

func FuzzParseSpecializations(f *testing.F) {
	testfile.AddFileSeeds(f, filepath.Join("..", "..", "docs", "example_subqueries.ini"))
	testfile.AddSeeds(f, seedsINI)
	opts := Options{SkillDirs: []string{"testdata"}, Reserved: func(n string) bool { return n == "read_file" }}
	f.Fuzz(func(t *testing.T, data []byte) {
		var warnings []config.Diagnostic
		opts := opts
		opts.Warn = func(d config.Diagnostic) { warnings = append(warnings, d) }
		specs, err := Parse(data, "subqueries.ini", opts)
		_, again := Parse(data, "subqueries.ini", Options{SkillDirs: opts.SkillDirs, Reserved: opts.Reserved})
		if (err == nil) != (again == nil) || (err != nil && err.Error() != again.Error()) {
			t.Fatalf("not deterministic: %v / %v", err, again)
		}
		// The INI reader never fails and keeps every value on its line, so
		// no value holds a newline, and a duplicated specialization is
		// always rejected. As in std::slop, what it reads is accepted:
		// an unknown key is ignored with one warning each, a repeated key
		// keeps its last value with one warning for each repeat, and a
		// line of a specialization that is not key = value is skipped
		// with one warning.
		secs, strays := parseINI(string(data))
		seen := map[string]bool{}
		last := map[string]map[string]iniKey{} // tool -> key -> its last line
		unknown, repeats, skipped := 0, 0, 0
		specSection := map[int]bool{}
		for i, s := range secs {
			if s.name != strings.TrimSpace(s.name) {
				t.Fatalf("section name %q not trimmed", s.name)
			}
			for _, k := range s.keys {
				if strings.ContainsAny(k.value, "\n") {
					t.Fatalf("value %q runs over a line", k.value)
				}
				if k.name == "" {
					t.Fatalf("empty key read at line %d", k.line)
				}
			}
			tool, ok := specToolName(s.name)
			if !ok {
				continue
			}
			specSection[i] = true
			if seen[tool] && err == nil {
				t.Fatalf("duplicate section %q accepted", s.name)
			}
			if !seen[tool] {
				names := map[string]bool{}
				last[tool] = map[string]iniKey{}
				for _, k := range s.keys {
					switch {
					case !specKeys[k.name] && !names[k.name]:
						unknown++
					case specKeys[k.name] && names[k.name]:
						repeats++
					}
					names[k.name] = true
					last[tool][k.name] = k
				}
			}
			seen[tool] = true
		}
		for _, st := range strays {
			inSpec := st.section >= 0 && specSection[st.section]
			switch {
			case st.section >= 0 && st.line == secs[st.section].line: // text after a header
			case inSpec, strings.HasPrefix(st.text, "[") && nearMissSpec(st.text[1:]):
				skipped++
			}
		}
		var warnedUnknown, warnedRepeats, warnedSkipped int
		for _, w := range warnings {
			if w.Severity != config.Warning {
				t.Fatalf("an error among the warnings: %v", w)
			}
			// A section name holds no ']', so the first "]: " ends the
			// message's "[section]" label; a line skipped before the
			// first section has none (and holds no ']').
			msg := w.Message
			if _, after, ok := strings.Cut(msg, "]: "); ok {
				msg = after
			}
			switch {
			case strings.HasPrefix(msg, "unknown key "):
				warnedUnknown++
			case strings.HasPrefix(msg, "key \""):
				warnedRepeats++
			case strings.HasPrefix(msg, "line is not \"key = value\"; skipped: "),
				strings.HasPrefix(msg, "[") && strings.HasSuffix(msg, " is not a section header (no closing ']'); skipped"):
				warnedSkipped++
			}
		}
		if warnedUnknown != unknown || warnedRepeats != repeats || warnedSkipped != skipped {
			t.Fatalf("warnings: %d unknown keys, %d repeats, %d skipped lines for %d, %d, %d: %v",
				warnedUnknown, warnedRepeats, warnedSkipped, unknown, repeats, skipped, warnings)
		}
		if err == nil {
			for _, s := range specs {
				// The last value of a repeated key is the one used
				// (checked where the environment plays no part).
				if k := last[s.ToolName]["session_id"]; k.literal || !strings.Contains(k.value, "$") {
					if s.SessionID != strings.ToValidUTF8(strings.TrimSpace(k.value), "\uFFFD") {
						t.Fatalf("session_id = %q, last written %q", s.SessionID, k.value)
					}
				}
			}
		}
		if err != nil {
			if specs != nil {
				t.Error("specializations returned with an error")
			}
			return
		}
		names := map[string]bool{}
		for _, s := range specs {
			if !validToolName(s.ToolName) || alwaysReserved[s.ToolName] || s.ToolName == "read_file" || names[s.ToolName] {
				t.Errorf("bad tool name accepted: %q", s.ToolName)
			}
			names[s.ToolName] = true
			if s.SystemPromptPatch == "" || s.SessionID == "" || s.SkillName == "" || s.Skill == nil || s.ContextWindow < 0 {
				t.Errorf("incomplete specialization accepted: %+v", s)
			}
			// What reaches the model and the ledger is text.
			if !utf8.ValidString(s.SystemPromptPatch) || !utf8.ValidString(s.SessionID) {
				t.Errorf("invalid UTF-8 accepted: %+v", s)
			}
		}
	})
}

// seedsINI are snippets of the unit tests; the same inputs are committed
// under testdata/fuzz/FuzzParseSpecializations.
var seedsINI = []string{
	"[llm_tool_]\n" + goodSection,
	"[llm_tool_x]\nsystem_prompt_patch = p\nskill = code_reviewer\n",
	"[llm_tool_x]\n" + goodSection + "context_window = -1\n",
	"[llm_tool_x]\n" + goodSection + "\n[llm_tool_x]\n" + goodSection,
	"[llm_tool_x y]\n" + goodSection,
	"[llm_tool_llm_query]\n" + goodSection,
	"[llm_tool_x]\n" + goodSection + "foo = 1\nsession_id = t\n",
	"[llm_tool_x]\nsystem_prompt_patch = \"\"\"a\n[llm_tool_x]\n\"\"\"\nsession_id = s\nskill = nope\n",
	"k = v\n[other]\n- = a\n[llm_tool_a.b]\n" + goodSection,
	"[llm_tool_x\n",
	"[llm_tool.x] # old spelling\nsystem_prompt_patch = \"quoted # kept\" ; cut\nsession_id = ${SESSION}_$USER\nskill = code_reviewer ; a comment\n",
	"[LLM_TOOL_x]\n[ llm_tool_y ]\n[llm-tool-z]\nsystem_prompt_patch = `unclosed # kept\nsession_id = '$NOT expanded'\n",
	"[llm_tool_x]\nsystem_prompt_patch = a $ b ${ c} ${1} $$ $\nno equals here\n",
	"[llm_tool_x]\n" + goodSection + "description = d\nContext-Window = 4\ndescription = again\n[llm_tool.x]\nextra = 1\n",
	"[llm_tool_y]\nSystem_Prompt_Patch = p\nsession-id = s\nskill = code_reviewer\n",
	"[llm_tool_x]\n" + goodSection + "session_id = t\nskill = nope\nskill = code_reviewer\nsession_id = $X\nfoo = 1\nfoo = 2\n",
	"[llm_tool_x]\nsystem_prompt_patch = a prompt\nthat runs on\n= no key\n  =\nsession_id = s\nskill = code_reviewer\n[other]\nfree text\n",
	"[ llm_tool_x ]\n" + goodSection + "[llm_tool_ y\t]\n" + goodSection + "[ llm_tool_ ]\n" + goodSection + "[ llm_tool.x ]\n" + goodSection,
	"[llm_tool_x\n" + goodSection + "[llm_tool_y]\n" + goodSection + "[llm_tool_z\nsession_id = z\n[llm_tool_w = 1\n[LLM-TOOL-v\n",
}

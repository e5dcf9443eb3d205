package delegate_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/tool"
	"github.com/deputyhq/deputy/tool/builtin"
)

// searchingProvider is a provider that runs web search on its side, as
// Anthropic's, OpenAI's Responses and Gemini's do.
type searchingProvider struct{ *timedProvider }

func (searchingProvider) ServerTools(model string) []string {
	switch model {
	case "no-search":
		return nil
	case "no-domains": // as Gemini's, which has no allowed domains
		return []string{llm.ServerWebSearch}
	}
	return []string{llm.ServerWebSearch, llm.ServerWebSearch + llm.ServerDomains}
}

// web_search is the provider's own search where the run's provider has
// one, the configured API's elsewhere, and left out with one warning
// where there is neither (issue 26); search.mode chooses.
func TestWebSearchNativeOrAPIOrLeftOut(t *testing.T) {
	script := `
rules:
  - {name: answer, reply: {text: "done"}}
`
	for _, tc := range []struct {
		name, mode, model string
		api, anyHost      bool
		want              string // "native", "api" or "" (left out)
		warning           string
	}{
		{"auto, provider search", "", "script/test", false, false, "native", ""},
		{"auto, provider search and an API", "auto", "script/test", true, false, "native", ""},
		{"auto, no provider search, an API", "auto", "script/no-search", true, false, "api", ""},
		{"auto, neither", "", "script/no-search", false, false, "", "its provider has no search of its own for this model and config.yaml sets no search API"},
		{"native, no provider search", "native", "script/no-search", true, false, "", "search.mode is native"},
		{"api", "api", "script/test", true, false, "api", ""},
		{"off", "off", "script/test", true, false, "", "search.mode is off"},
		// A provider whose search cannot keep to the agent's hosts is
		// not given it: they only narrow.
		{"auto, provider search without domains, an API", "", "script/no-domains", true, false, "api", ""},
		{"auto, provider search without domains", "", "script/no-domains", false, false, "", "its provider's own search cannot keep to the agent's allowed_hosts and config.yaml sets no search API"},
		{"native, provider search without domains", "native", "script/no-domains", true, false, "", "search.mode is native and its provider's own search cannot keep to the agent's allowed_hosts"},
		{"auto, provider search without domains, any host", "", "script/no-domains", false, true, "native", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, script)
			h.engine.Models = models{searchingProvider{h.prov}}
			var search *builtin.SearchAPI
			if tc.api {
				search = &builtin.SearchAPI{Kind: builtin.SearchSearXNG, URL: "http://127.0.0.1:1"}
			}
			h.engine.Tools = func(workdir string) *tool.Registry {
				return builtin.New(builtin.Options{Workdir: workdir, Search: search})
			}
			h.engine.WebSearch = tc.mode
			var logs bytes.Buffer
			h.engine.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			a := agentDef("researcher", "RESEARCH")
			a.Model = tc.model
			a.Tools = []string{"read_file", "web_search"}
			if !tc.anyHost {
				a.AllowedHosts = []string{"go.dev"}
			}
			if env := h.run(a, "look it up"); !env.OK() {
				t.Fatalf("run: %s", env.Error)
			}
			req := h.prov.requests("RESEARCH")[0]
			var spec *llm.ToolSpec
			for i := range req.Tools {
				if req.Tools[i].Name == "web_search" {
					spec = &req.Tools[i]
				}
			}
			switch {
			case tc.want == "":
				if spec != nil {
					t.Fatalf("web_search offered: %+v", spec)
				}
				if strings.Count(logs.String(), "web_search is left out") != 1 || !strings.Contains(logs.String(), tc.warning) {
					t.Fatalf("warning: %s", logs.String())
				}
			case spec == nil:
				t.Fatalf("web_search not offered: %v", toolNames(req))
			case tc.want == "native":
				if spec.Server == nil || spec.Server.Kind != llm.ServerWebSearch || !tc.anyHost && (len(spec.Server.AllowedDomains) != 1 || spec.Server.AllowedDomains[0] != "go.dev") {
					t.Fatalf("not the provider's search: %+v", spec.Server)
				}
			case tc.want == "api":
				if spec.Server != nil {
					t.Fatalf("the provider's search, not the API's: %+v", spec.Server)
				}
			}
			if tc.want != "" && logs.Len() > 0 {
				t.Fatalf("unexpected log: %s", logs.String())
			}
		})
	}
}

// A model that calls the provider's own search as if it were a function
// is refused, and nothing runs.
func TestProviderSearchIsNotRunByDeputy(t *testing.T) {
	h := newHarness(t, `
rules:
  - {name: call, match: {last_role: user}, reply: {tool_calls: [{name: web_search, arguments: {query: "x"}}]}}
  - {name: answer, match: {last_role: tool}, reply: {text: "{{ index .ToolResults 0 }}"}}
`)
	h.engine.Models = models{searchingProvider{h.prov}}
	a := agentDef("researcher", "RESEARCH")
	a.Tools = []string{config.ToolsAll}
	env := h.run(a, "look it up")
	if env.Output != "web_search runs on the provider's side: its results are in your own answer, not a tool call" {
		t.Fatalf("got %q", env.Output)
	}
}

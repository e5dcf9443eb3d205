package config

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/deputyhq/deputy/config/internal/testfile"
	"github.com/deputyhq/deputy/llm/capability"
)

func TestLoadSettingsMerge(t *testing.T) {
	user := filepath.Join("testdata", "settings", "user.yaml")
	project := filepath.Join("testdata", "settings", "project.yaml")
	s, err := LoadSettings([]string{user, project, filepath.Join("testdata", "settings", "absent.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultSettings()
	want.DefaultModel = "local/llama3" // project wins
	want.Providers = map[string]ProviderSettings{"local": {
		Type:      "openai",                    // from the user file
		BaseURL:   "http://127.0.0.1:9000/v1/", // project wins
		APIKeyEnv: "LOCAL_API_KEY",             // from the user file
	}}
	want.Concurrency = 4 // only the user sets it
	want.Retry.MaxAttempts = 6
	want.Retry.BaseDelay = 250 * time.Millisecond
	want.Fetch.AllowHosts = []string{"example.com"}
	want.Agent.Subagent.MaxDepth = 5
	want.Agent.Subagent.TelemetryEnabled = false // explicit false in the project wins over the user's true
	want.Agent.Subagent.MaxTotalTime = 300 * time.Second
	want.Files = []string{user, project}
	if d := cmp.Diff(want, s, cmpopts.IgnoreFields(Settings{}, "Retry.OnRetry")); d != "" {
		t.Errorf("settings (-want +got):\n%s", d)
	}
	if !s.KnownProvider("local") || !s.KnownProvider("ollama") || s.KnownProvider("acme") {
		t.Error("KnownProvider is wrong")
	}
}

func TestLoadSettingsNoFiles(t *testing.T) {
	s, err := LoadSettings(nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(DefaultSettings(), s, cmpopts.IgnoreFields(Settings{}, "Retry.OnRetry")); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestLoadSettingsEmptyAndCommentOnly(t *testing.T) {
	for _, content := range []string{"", "# nothing\n", "---\n", "~\n"} {
		if _, err := LoadSettings([]string{testfile.Temp(t, "config.yaml", content)}); err != nil {
			t.Errorf("%q: %v", content, err)
		}
	}
}

func TestInitSettingsYAMLIsTheDefaults(t *testing.T) {
	s, err := LoadSettings([]string{testfile.Temp(t, "config.yaml", string(InitSettingsYAML()))})
	if err != nil {
		t.Fatal(err)
	}
	s.Files = nil
	if d := cmp.Diff(DefaultSettings(), s, cmpopts.IgnoreFields(Settings{}, "Retry.OnRetry"), cmpopts.EquateEmpty()); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// Every validation message of config.yaml, exactly.
func TestLoadSettingsMessages(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // each prefixed with the file path and ":" below
	}{
		{"max_depth high", "agent:\n  subagent:\n    max_depth: 11\n", []string{" agent.subagent.max_depth must be between 1 and 10 (got 11)"}},
		{"max_depth low", "agent:\n  subagent:\n    max_depth: 0\n", []string{" agent.subagent.max_depth must be between 1 and 10 (got 0)"}},
		{"default_max_turns", "agent:\n  subagent:\n    default_max_turns: 101\n", []string{" agent.subagent.default_max_turns must be between 1 and 100 (got 101)"}},
		{"default_max_turns zero", "agent: {subagent: {default_max_turns: 0}}\n", []string{" agent.subagent.default_max_turns must be between 1 and 100 (got 0)"}},
		{"output_max_size", "agent:\n  subagent:\n    output_max_size: 1023\n", []string{" agent.subagent.output_max_size must be at least 1024 (got 1023)"}},
		{"max_executions", "agent:\n  subagent:\n    max_executions: -1\n", []string{" agent.subagent.max_executions must not be negative (got -1)"}},
		{"max_total_tokens", "agent:\n  subagent:\n    max_total_tokens: -5\n", []string{" agent.subagent.max_total_tokens must not be negative (got -5)"}},
		{"max_total_time", "agent:\n  subagent:\n    max_total_time: -10\n", []string{" agent.subagent.max_total_time must not be negative (got -10s)"}},
		{"concurrency", "concurrency: 0\n", []string{" concurrency must be at least 1 (got 0)"}},
		{"max_turns", "max_turns: 0\n", []string{" max_turns must be at least 1 (got 0)"}},
		{"max_attempts", "retry: {max_attempts: 0}\n", []string{" retry.max_attempts must be at least 1 (got 0)"}},
		{"base_delay", "retry: {base_delay: 0s}\n", []string{" retry.base_delay must be positive (got 0s)"}},
		{"stream_idle_timeout", "stream_idle_timeout: -1s\n", []string{" stream_idle_timeout must not be negative (got -1s)"}},
		{"response_timeout", "response_timeout: -1s\n", []string{" response_timeout must not be negative (got -1s)"}},
		{"bad duration", "retry:\n  max_delay: soon\n", []string{`2: retry.max_delay must be a duration such as 500ms or 2m, or a number of seconds; got "soon"`}},
		{"unknown key", "concurrency: 2\nconcurency: 3\n", []string{`2: unknown key "concurency"`}},
		{"unknown nested key", "agent:\n  subagent:\n    max_dept: 3\n    depth: 1\n", []string{`3: unknown key "agent.subagent.max_dept"`, `4: unknown key "agent.subagent.depth"`}},
		{"unknown provider key", "providers:\n  local:\n    base_url: http://x/v1/\n    apikey: k\n", []string{`4: unknown key "providers.local.apikey"`}},
		{"key not a string", "providers:\n  [local]: {}\nretry:\n  {max_attempts: 1}: 2\n", []string{`2: providers: keys must be plain strings`, `4: unknown key "retry."`}},
		{"wrong type", "concurrency: many\n", []string{`1: concurrency must be an integer, got "many"`}},
		{"wrong bool", "agent: {subagent: {telemetry_enabled: 1}}\n", []string{`1: agent.subagent.telemetry_enabled must be true or false, got "1"`}},
		{"not a mapping", "retry: 3\n", []string{`1: retry must be a mapping, got "3"`}},
		{"not a list", "fetch: {allow_hosts: example.com}\n", []string{`1: fetch.allow_hosts must be a list, got "example.com"`}},
		{"int overflow", "concurrency: 99999999999999999999\n", []string{`1: concurrency must be an integer, got "99999999999999999999"`}},
		{"invalid yaml", "a: [\n", []string{"1: invalid YAML: did not find expected node content"}},
		{"two documents", "concurrency: 2\n---\nconcurrency: 3\n", []string{"2: holds more than one YAML document; settings are one mapping"}},
		{"top level list", "- a\n", []string{`1: the settings file must be a mapping, got a list`}},
		{"several problems at once", "concurrency: 0\nmax_turns: 0\nagent:\n  subagent:\n    max_depth: 11\n", []string{
			" concurrency must be at least 1 (got 0)",
			" max_turns must be at least 1 (got 0)",
			" agent.subagent.max_depth must be between 1 and 10 (got 11)",
		}},
		{"provider type", "providers:\n  local: {type: anthropic, base_url: http://x/v1/}\n", []string{` providers.local.type must be "openai" (got "anthropic")`}},
		{"provider base_url", "providers:\n  local: {base_url: 'ftp://x'}\n", []string{` providers.local.base_url must be an http or https URL (got "ftp://x")`}},
		{"provider without base_url", "providers:\n  local: {api_key_env: K}\n", []string{" providers.local.base_url is required"}},
		{"provider named like a built-in", "providers:\n  openai: {base_url: http://x/v1/}\n", []string{" providers.openai: the name collides with a built-in provider (anthropic, gemini, ollama, openai, script); an entry of openai may set only wire_api"}},
		{"provider wire_api", "providers:\n  local: {base_url: http://x/v1/, wire_api: completions}\n  openai: {wire_api: Responses}\n", []string{
			` providers.local.wire_api must be "chat" or "responses" (got "completions")`,
			` providers.openai.wire_api must be "chat" or "responses" (got "Responses")`,
		}},
		{"wire_api of a built-in without one", "providers:\n  gemini: {wire_api: chat}\n", []string{" providers.gemini: the name collides with a built-in provider (anthropic, gemini, ollama, openai, script)"}},
		{"provider name with slash", "providers:\n  a/b: {base_url: http://x/v1/}\n", []string{" providers.a/b: a provider name must be non-empty, without '/' or spaces"}},
		{"api key in api_key_env", "providers:\n  local: {base_url: http://x/v1/, api_key_env: sk-live-SECRET123}\n", []string{" providers.local.api_key_env must be the name of an environment variable (letters, digits and '_'), not the key itself"}},
		{"default_model malformed", "default_model: gpt-4\n", []string{` default_model: model "gpt-4" must be written provider/model (for example openai/gpt-4.1)`}},
		{"default_model unknown provider", "default_model: acme/x\n", []string{` default_model "acme/x" names unknown provider "acme"`}},
		{"subagent provider without model", "agent: {subagent: {provider: anthropic}}\n", []string{" agent.subagent.model is required when agent.subagent.provider is set"}},
		{"subagent unknown provider", "agent: {subagent: {provider: acme, model: m}}\n", []string{` agent.subagent.provider names unknown provider "acme"`}},
		{"price as a string", "prices:\n  openai/gpt-4.1: {input: '2', output: $8}\n", []string{
			`2: prices.openai/gpt-4.1.input must be a number, got "2"`,
			`2: prices.openai/gpt-4.1.output must be a number, got "$8"`,
		}},
		{"capabilities", "capabilities:\n  gpt-5.6: {max_output: 0}\n  openai/gpt-5.6: {refuses: [temprature], thinking: deep, efforts: [low, ''], context: -1}\n", []string{
			` capabilities.gpt-5.6: an entry is keyed by provider/model (for example openai/gpt-5.6)`,
			` capabilities.gpt-5.6.max_output must be a number of tokens of at least 1 (got 0)`,
			` capabilities.openai/gpt-5.6.refuses: "temprature" is not a sampling parameter (temperature, top_p, top_k)`,
			` capabilities.openai/gpt-5.6.efforts: an effort is a word such as low or high (got ["low" ""])`,
			` capabilities.openai/gpt-5.6.thinking: "deep" is not one of adaptive, adaptive-always, budget, level, effort`,
			` capabilities.openai/gpt-5.6.context must be a number of tokens of at least 1 (got -1)`,
		}},
		{"capability max_output as a string", "capabilities:\n  openai/gpt-5.6: {max_output: lots}\n", []string{
			`2: capabilities.openai/gpt-5.6.max_output must be an integer, got "lots"`,
		}},
		{"allow_hosts entry", "fetch: {allow_hosts: ['https://x.com/']}\n", []string{` fetch.allow_hosts entries must be host names such as example.com (got "https://x.com/")`}},
		{"search", "search: {mode: bing, api: google, url: 'ftp://s', max_results: 21}\n", []string{
			` search.mode must be one of auto, native, api, off (got "bing")`,
			` search.api must be one of brave, searxng (got "google")`,
			` search.url must be an http or https URL (got "ftp://s")`,
			` search.max_results must be between 1 and 20 (got 21)`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := testfile.Temp(t, "config.yaml", tt.yaml)
			s, err := LoadSettings([]string{p})
			if err == nil {
				t.Fatalf("no error; settings %+v", s)
			}
			if s != nil {
				t.Error("settings returned along with an error")
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %T is not a *ValidationError", err)
			}
			var want []string
			for _, w := range tt.want {
				want = append(want, p+":"+w)
			}
			if d := cmp.Diff(strings.Join(want, "\n"), err.Error()); d != "" {
				t.Errorf("error (-want +got):\n%s", d)
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Error("the error repeats a secret")
			}
		})
	}
}

// wire_api chooses the API of a custom provider, and of the built-in
// openai and ollama, whose entry sets nothing else.
func TestLoadSettingsWireAPI(t *testing.T) {
	p := testfile.Temp(t, "config.yaml", "providers:\n  local: {base_url: 'http://127.0.0.1:1/v1/', wire_api: responses}\n  plain: {base_url: 'http://127.0.0.1:2/v1/'}\n  openai: {wire_api: responses}\n  ollama: {wire_api: chat}\n")
	s, err := LoadSettings([]string{p})
	if err != nil {
		t.Fatal(err)
	}
	if s.Providers["local"].WireAPI != "responses" || s.Providers["plain"].WireAPI != "" {
		t.Errorf("providers %+v", s.Providers)
	}
	if _, ok := s.Providers["openai"]; ok {
		t.Errorf("the built-in openai became a custom provider: %+v", s.Providers)
	}
	if d := cmp.Diff(map[string]string{"openai": "responses", "ollama": "chat"}, s.BuiltinWireAPI); d != "" {
		t.Errorf("built-in wire APIs (-want +got):\n%s", d)
	}
}

func TestLoadSettingsErrorNamesTheFileThatSetTheKey(t *testing.T) {
	user := testfile.Temp(t, "config.yaml", "providers:\n  local: {api_key_env: K}\n")
	project := testfile.Temp(t, "config.yaml", "default_model: local/m\n")
	_, err := LoadSettings([]string{user, project})
	if err == nil || err.Error() != user+": providers.local.base_url is required" {
		t.Errorf("err = %v", err)
	}
	// The project can supply what the user's file lacks.
	fix := testfile.Temp(t, "config.yaml", "providers:\n  local: {base_url: 'http://127.0.0.1:1/v1/'}\n")
	s, err := LoadSettings([]string{user, fix, project})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Providers["local"]; got.APIKeyEnv != "K" || got.BaseURL == "" || got.Type != "openai" {
		t.Errorf("local = %+v", got)
	}
}

func TestLoadSettingsBothFilesReported(t *testing.T) {
	a := testfile.Temp(t, "config.yaml", "concurrency: 0\n")
	b := testfile.Temp(t, "config.yaml", "max_turns: 0\n")
	_, err := LoadSettings([]string{a, b})
	want := a + ": concurrency must be at least 1 (got 0)\n" + b + ": max_turns must be at least 1 (got 0)"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want\n%s", err, want)
	}
}

func TestSettingsDurations(t *testing.T) {
	p := testfile.Temp(t, "config.yaml", "stream_idle_timeout: 0\nresponse_timeout: 30s\nretry: {max_elapsed: 90, max_delay: 1m30s}\nagent: {subagent: {max_total_time: 2h}}\n")
	s, err := LoadSettings([]string{p})
	if err != nil {
		t.Fatal(err)
	}
	if s.StreamIdleTimeout != 0 || s.ResponseTimeout != 30*time.Second || s.Retry.MaxElapsed != 90*time.Second || s.Retry.MaxDelay != 90*time.Second || s.Agent.Subagent.MaxTotalTime != 2*time.Hour {
		t.Errorf("durations: idle %v, elapsed %v, delay %v, total %v", s.StreamIdleTimeout, s.Retry.MaxElapsed, s.Retry.MaxDelay, s.Agent.Subagent.MaxTotalTime)
	}
}

func TestSettingsPathsAndStorePath(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/cfg")
	t.Setenv("XDG_DATA_HOME", "/data")
	t.Setenv("DEPUTY_DB", "")
	if got := SettingsPaths("/w"); !cmp.Equal(got, []string{"/cfg/deputy/config.yaml", "/w/.deputy/config.yaml"}) {
		t.Errorf("SettingsPaths = %q", got)
	}
	s := DefaultSettings()
	if got := s.StorePath(); got != "/data/deputy/deputy.db" {
		t.Errorf("StorePath = %q", got)
	}
	t.Setenv("DEPUTY_DB", "/tmp/x.db") // the CLI's business, not the settings'
	if got := s.StorePath(); got != "/data/deputy/deputy.db" {
		t.Errorf("StorePath with DEPUTY_DB = %q", got)
	}
	s.Store.Path = "/set.db"
	if got := s.StorePath(); got != "/set.db" {
		t.Errorf("StorePath with store.path = %q", got)
	}
}

func TestSubagentModel(t *testing.T) {
	s := DefaultSettings()
	if s.SubagentModel() != "" {
		t.Error("default SubagentModel not empty")
	}
	s.Agent.Subagent.Provider, s.Agent.Subagent.Model = "anthropic", "claude-x"
	if got := s.SubagentModel(); got != "anthropic/claude-x" {
		t.Errorf("SubagentModel = %q", got)
	}
}

// xzatoma config files are accepted whole: provider, agent.max_turns and
// agent.subagent mean what they mean in xzatoma; the rest warns once per
// section.
// A price whose provider deputy does not know is never used: one warning
// naming it (a misspelt provider would otherwise leave cost_usd null with
// no word why).
func TestPriceOfUnknownProviderWarns(t *testing.T) {
	p := testfile.Temp(t, "config.yaml", "providers:\n  local: {base_url: 'http://127.0.0.1:1/v1/'}\nprices:\n  opeani/gpt-4.1: {input: 2, output: 8}\n  local/qwen: {input: 0, output: 0}\n  google/gemini-2.5-pro: {input: 1, output: 1}\n")
	s, err := LoadSettings([]string{p})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range s.Warnings {
		got = append(got, w.String())
	}
	want := []string{p + `: prices.opeani/gpt-4.1: no provider is called "opeani" (built-in: anthropic, gemini, ollama, openai, script; hosted: atlascloud, bedrock, edenai, google, minimax, opencode, openrouter, requesty; others are defined under providers), so this price is never used`}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}
	if _, ok := s.Prices["opeani/gpt-4.1"]; !ok {
		t.Error("the price was dropped; a warning keeps it")
	}
}

// A price's web_search is per 1,000 searches; an entry that leaves it out
// keeps the embedded table's search price for that model, since it
// overrides token prices, not the provider's per-search fee.
func TestPriceWebSearch(t *testing.T) {
	p := testfile.Temp(t, "config.yaml", "prices:\n  anthropic/claude-sonnet-5-5: {input: 1, output: 1}\n  anthropic/claude-opus-5-5: {input: 1, output: 1, web_search: 12.5}\n  local/qwen: {input: 0, output: 0}\nproviders:\n  local: {base_url: 'http://127.0.0.1:1/v1/'}\n")
	s, err := LoadSettings([]string{p})
	if err != nil {
		t.Fatal(err)
	}
	for model, want := range map[string]float64{"anthropic/claude-sonnet-5-5": 10, "anthropic/claude-opus-5-5": 12.5, "local/qwen": 0} {
		if got := s.Prices[model].WebSearch; got != want {
			t.Errorf("%s: web search %v per 1,000, want %v", model, got, want)
		}
	}
	p = testfile.Temp(t, "config.yaml", "prices:\n  anthropic/claude-sonnet-5-5: {input: 1, output: 1, web_search: -1}\n")
	_, err = LoadSettings([]string{p})
	if want := p + ": prices.anthropic/claude-sonnet-5-5.web_search must be a non-negative number of US dollars per 1,000 searches (got -1)"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

// capabilities: lay entries over the capability table, field by field;
// an entry for a provider deputy does not know warns, as a price does.
func TestCapabilities(t *testing.T) {
	p := testfile.Temp(t, "config.yaml", "capabilities:\n  anthropic/claude-sonnet-5-5: {max_output: 64000}\n  openai/gpt-5.6: {refuses: []}\n  opeani/gpt-5.6: {no_effort: true}\n")
	s, err := LoadSettings([]string{p})
	if err != nil {
		t.Fatal(err)
	}
	tab := capability.NewTable(s.Capabilities)
	if m, _ := tab.Lookup("anthropic/claude-sonnet-5-5"); m.MaxOutput != 64_000 || m.Accepts(capability.Temperature, "") {
		t.Errorf("sonnet 5.5 with max_output: 64000: %+v", m)
	}
	if m, _ := tab.Lookup("openai/gpt-5.6"); !m.Accepts(capability.Temperature, "high") || !m.TakesEffort("max") {
		t.Errorf("gpt-5.6 with refuses: []: %+v", m)
	}
	if len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0].String(), `capabilities.opeani/gpt-5.6: no provider is called "opeani"`) {
		t.Errorf("warnings: %v", s.Warnings)
	}
}

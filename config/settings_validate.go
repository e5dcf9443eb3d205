package config

import (
	"maps"
	"math"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/deputyhq/deputy/config/internal/osfile"
	"github.com/deputyhq/deputy/llm"
	"github.com/deputyhq/deputy/llm/capability"
	"github.com/deputyhq/deputy/llm/price"
	"github.com/deputyhq/deputy/permission"
)

var envVarNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// check range-checks the values one file sets. Messages are prefixed with
// the file by the sink and name the key and its range.
func (f *settingsFile) check(sink *Sink) {
	atLeast, positive, notNegative := sink.atLeast, sink.positive, sink.notNegative
	atLeast("concurrency", f.Concurrency, 1)
	atLeast("max_turns", f.MaxTurns, 1)
	if r := f.Retry; r != nil {
		atLeast("retry.max_attempts", r.MaxAttempts, 1)
		positive("retry.base_delay", r.BaseDelay)
		positive("retry.max_delay", r.MaxDelay)
		positive("retry.max_elapsed", r.MaxElapsed)
	}
	notNegative("stream_idle_timeout", f.StreamIdleTimeout)
	notNegative("response_timeout", f.ResponseTimeout)
	positive("approval_timeout", f.ApprovalTimeout)
	if p := f.Permissions; p != nil {
		checkPermissions(sink, p)
	}
	if f.Fetch != nil && f.Fetch.AllowHosts != nil {
		for _, h := range *f.Fetch.AllowHosts {
			if h = strings.TrimSpace(h); h == "" || strings.ContainsAny(h, "/ \t") {
				sink.Errorf(0, "", "fetch.allow_hosts entries must be host names such as example.com (got %q)", h)
			}
		}
	}
	if f.Search != nil {
		checkSearch(sink, f.Search)
	}
	if f.DefaultModel != nil {
		checkModelString(sink, "default_model", *f.DefaultModel)
	}
	for _, name := range sortedKeys(f.Providers) {
		checkProvider(sink, name, f.Providers[name])
	}
	for _, model := range sortedKeys(f.Prices) {
		checkPrice(sink, model, f.Prices[model])
	}
	for _, model := range sortedKeys(f.Capabilities) {
		checkCapability(sink, model, f.Capabilities[model])
	}
	if l := f.Limits; l != nil {
		atLeast("limits.stdin_max_bytes", l.StdinMaxBytes, 1)
		atLeast("limits.tool_output_max_bytes", l.ToolOutputMaxBytes, 1024)
		atLeast("limits.read_file_max_bytes", l.ReadFileMaxBytes, 1024)
		atLeast("limits.fetch_max_bytes", l.FetchMaxBytes, 1024)
	}
	if t := f.Terminal; t != nil && t.Env != nil {
		for _, n := range *t.Env {
			if !envVarNameRE.MatchString(n) {
				sink.Errorf(0, "", "terminal.env entries must be names of environment variables (got %q)", n)
			}
		}
	}
	if f.Agent != nil && f.Agent.Subagent != nil {
		checkSubagent(sink, f.Agent.Subagent)
	}
}

// The range checks of check's values; each message names the key and its
// range.
func (sink *Sink) atLeast(key string, v *int, lo int) {
	if v != nil && *v < lo {
		sink.Errorf(0, "", "%s must be at least %d (got %d)", key, lo, *v)
	}
}

func (sink *Sink) between(key string, v *int, lo, hi int) {
	if v != nil && (*v < lo || *v > hi) {
		sink.Errorf(0, "", "%s must be between %d and %d (got %d)", key, lo, hi, *v)
	}
}

func (sink *Sink) positive(key string, d *duration) {
	if d != nil && *d <= 0 {
		sink.Errorf(0, "", "%s must be positive (got %s)", key, time.Duration(*d))
	}
}

func (sink *Sink) notNegative(key string, d *duration) {
	if d != nil && *d < 0 {
		sink.Errorf(0, "", "%s must not be negative (got %s)", key, time.Duration(*d))
	}
}

// checkPermissions checks the rules and mode of permissions.
func checkPermissions(sink *Sink, p *permissionsFile) {
	for _, l := range []struct {
		key  string
		list *[]string
	}{{"allow", p.Allow}, {"ask", p.Ask}, {"deny", p.Deny}} {
		if l.list == nil {
			continue
		}
		for _, text := range *l.list {
			if _, err := permission.Parse(text); err != nil {
				sink.Errorf(0, "", "permissions.%s: %s", l.key, err.Error())
			}
		}
	}
	if p.Mode != nil {
		if _, err := permission.ParseMode(*p.Mode); err != nil {
			sink.Errorf(0, "", "permissions.mode: %s", err.Error())
		}
	}
}

// checkSubagent range-checks agent.subagent (xzatoma's limits of its
// subagent tool).
func checkSubagent(sink *Sink, sa *subagentFile) {
	sink.between("agent.subagent.max_depth", sa.MaxDepth, 1, SubagentMaxDepthLimit)
	sink.between("agent.subagent.default_max_turns", sa.DefaultMaxTurns, 1, SubagentMaxTurnsLimit)
	sink.atLeast("agent.subagent.output_max_size", sa.OutputMaxSize, SubagentMinOutputMaxSize)
	if sa.MaxExecutions != nil && *sa.MaxExecutions < 0 {
		sink.Errorf(0, "", "agent.subagent.max_executions must not be negative (got %d)", *sa.MaxExecutions)
	}
	if sa.MaxTotalTokens != nil && *sa.MaxTotalTokens < 0 {
		sink.Errorf(0, "", "agent.subagent.max_total_tokens must not be negative (got %d)", *sa.MaxTotalTokens)
	}
	sink.notNegative("agent.subagent.max_total_time", sa.MaxTotalTime)
	if sa.Provider != nil && strings.Contains(*sa.Provider, "/") {
		sink.Errorf(0, "", "agent.subagent.provider must be a provider name without '/' (got %q)", *sa.Provider)
	}
}

// checkModelString checks the form of a model setting; whether its
// provider exists is checked after merging, when all providers are known.
func checkModelString(sink *Sink, key, model string) {
	if model == "" || model == ModelInherit {
		return
	}
	if _, err := llm.ParseModel(model); err != nil {
		sink.Errorf(0, "", "%s: %s", key, err.Error())
	}
}

func checkProvider(sink *Sink, name string, p *providerFile) {
	key := "providers." + name
	switch {
	case name == "" || strings.ContainsAny(name, "/ \t"):
		sink.Errorf(0, "", "%s: a provider name must be non-empty, without '/' or spaces", key)
		return
	case slices.Contains(builtinWireProviders, name) && p != nil && p.WireAPI != nil && p.Type == nil && p.BaseURL == nil && p.APIKeyEnv == nil:
		// The built-in openai and ollama take their key and base URL from
		// the environment; their entry only chooses the API.
		checkWireAPI(sink, key, *p.WireAPI)
		return
	case isBuiltinProvider(name) && slices.Contains(builtinWireProviders, name):
		sink.Errorf(0, "", "%s: the name collides with a built-in provider (%s); an entry of %s may set only wire_api", key, strings.Join(builtinProviders, ", "), name)
		return
	case isBuiltinProvider(name):
		sink.Errorf(0, "", "%s: the name collides with a built-in provider (%s)", key, strings.Join(builtinProviders, ", "))
		return
	}
	if p == nil {
		return
	}
	if p.WireAPI != nil {
		checkWireAPI(sink, key, *p.WireAPI)
	}
	if p.Type != nil && *p.Type != "openai" {
		sink.Errorf(0, "", "%s.type must be \"openai\" (got %q)", key, *p.Type)
	}
	if p.BaseURL != nil {
		u, err := url.Parse(*p.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			sink.Errorf(0, "", "%s.base_url must be an http or https URL (got %q)", key, llm.RedactURL(*p.BaseURL))
		}
	}
	// The value is never shown: someone who put the key itself here has
	// just written a secret into a config file.
	if p.APIKeyEnv != nil && *p.APIKeyEnv != "" && !envVarNameRE.MatchString(*p.APIKeyEnv) {
		sink.Errorf(0, "", "%s.api_key_env must be the name of an environment variable (letters, digits and '_'), not the key itself", key)
	}
}

func checkWireAPI(sink *Sink, key, v string) {
	if !slices.Contains(wireAPIs, v) {
		sink.Errorf(0, "", "%s.wire_api must be %q or %q (got %q)", key, wireAPIs[0], wireAPIs[1], v)
	}
}

// apply copies the keys f sets onto s, recording which file set the keys
// that are checked again after merging.
func (f *settingsFile) apply(s *Settings, path string, origin map[string]string) {
	set := setter{path: path, origin: origin}
	set.str(&s.DefaultModel, f.DefaultModel, "default_model")
	for _, m := range f.mcp {
		s.MCPServers = slices.DeleteFunc(s.MCPServers, func(o MCPServer) bool { return o.Name == m.Name })
		s.MCPServers = append(s.MCPServers, m)
	}
	f.applyProviders(s, set)
	f.applyPrices(s, set)
	for model, cf := range f.Capabilities {
		if cf == nil {
			continue
		}
		if s.Capabilities == nil {
			s.Capabilities = map[string]capability.Override{}
		}
		s.Capabilities[model] = capability.Override{Refuses: cf.Refuses, SamplingEfforts: cf.SamplingEfforts,
			Efforts: cf.Efforts, NoEffort: cf.NoEffort, DefaultEffort: cf.DefaultEffort, Thinking: cf.Thinking,
			BudgetMin: cf.BudgetMin, BudgetMax: cf.BudgetMax, MaxOutput: cf.MaxOutput, Context: cf.Context}
		origin["capabilities."+model] = path
	}
	setInt(&s.Concurrency, f.Concurrency)
	setInt(&s.MaxTurns, f.MaxTurns)
	if r := f.Retry; r != nil {
		setInt(&s.Retry.MaxAttempts, r.MaxAttempts)
		setDur(&s.Retry.BaseDelay, r.BaseDelay)
		setDur(&s.Retry.MaxDelay, r.MaxDelay)
		setDur(&s.Retry.MaxElapsed, r.MaxElapsed)
	}
	setDur(&s.StreamIdleTimeout, f.StreamIdleTimeout)
	setDur(&s.ResponseTimeout, f.ResponseTimeout)
	setDur(&s.ApprovalTimeout, f.ApprovalTimeout)
	if f.Fetch != nil && f.Fetch.AllowHosts != nil {
		s.Fetch.AllowHosts = append([]string{}, *f.Fetch.AllowHosts...)
	}
	if q := f.Search; q != nil {
		set.str(&s.Search.Mode, q.Mode, "search.mode")
		set.str(&s.Search.API, q.API, "search.api")
		set.str(&s.Search.URL, q.URL, "search.url")
		set.str(&s.Search.APIKeyEnv, q.APIKeyEnv, "search.api_key_env")
		setInt(&s.Search.MaxResults, q.MaxResults)
	}
	if t := f.Terminal; t != nil {
		t.apply(&s.Terminal)
	}
	if p := f.Permissions; p != nil {
		p.apply(&s.Permissions, path)
	}
	if l := f.Limits; l != nil {
		setInt(&s.Limits.StdinMaxBytes, l.StdinMaxBytes)
		setInt(&s.Limits.ToolOutputMaxBytes, l.ToolOutputMaxBytes)
		setInt(&s.Limits.ReadFileMaxBytes, l.ReadFileMaxBytes)
		setInt(&s.Limits.FetchMaxBytes, l.FetchMaxBytes)
	}
	if f.Store != nil {
		set.str(&s.Store.Path, f.Store.Path, "store.path")
	}
	if f.Agent != nil && f.Agent.Subagent != nil {
		f.Agent.Subagent.apply(&s.Agent.Subagent, set)
	}
}

// setter copies a string key a file sets, noting the file as the key's
// origin for the checks after merging.
type setter struct {
	path   string
	origin map[string]string
}

func (st setter) str(dst *string, v *string, key string) {
	if v != nil {
		*dst = *v
		st.origin[key] = st.path
	}
}

func setInt(dst *int, v *int) {
	if v != nil {
		*dst = *v
	}
}

func setDur(dst *time.Duration, v *duration) {
	if v != nil {
		*dst = time.Duration(*v)
	}
}

func setBool(dst *bool, v *bool) {
	if v != nil {
		*dst = *v
	}
}

// applyProviders copies providers: a built-in's entry sets only its
// wire_api (check refused anything else).
func (f *settingsFile) applyProviders(s *Settings, set setter) {
	for _, name := range sortedKeys(f.Providers) {
		if isBuiltinProvider(name) {
			if s.BuiltinWireAPI == nil {
				s.BuiltinWireAPI = map[string]string{}
			}
			s.BuiltinWireAPI[name] = *f.Providers[name].WireAPI
			continue
		}
		p := s.Providers[name]
		if pf := f.Providers[name]; pf != nil {
			set.str(&p.WireAPI, pf.WireAPI, "providers."+name+".wire_api")
			set.str(&p.Type, pf.Type, "providers."+name+".type")
			set.str(&p.BaseURL, pf.BaseURL, "providers."+name+".base_url")
			set.str(&p.APIKeyEnv, pf.APIKeyEnv, "providers."+name+".api_key_env")
		}
		s.Providers[name] = p
		set.origin["providers."+name] = set.path
	}
}

// applyPrices copies prices; an entry without web_search keeps the
// embedded table's, as searches are billed per provider, not per token.
func (f *settingsFile) applyPrices(s *Settings, set setter) {
	var embedded *price.Table
	for model, pf := range f.Prices {
		if pf == nil || pf.Input == nil || pf.Output == nil {
			continue // reported by check
		}
		if s.Prices == nil {
			s.Prices = map[string]price.Price{}
		}
		p := price.Price{Input: *pf.Input, Output: *pf.Output}
		if pf.CacheRead != nil {
			p.CacheRead = *pf.CacheRead
		}
		if pf.CacheWrite != nil {
			p.CacheWrite = *pf.CacheWrite
		}
		if embedded == nil {
			embedded = price.NewTable(nil)
		}
		if e, ok := embedded.Lookup(model); ok {
			p.WebSearch = e.WebSearch
		}
		if pf.WebSearch != nil {
			p.WebSearch = *pf.WebSearch
		}
		s.Prices[model] = p
		set.origin["prices."+model] = set.path
	}
}

// apply copies the terminal section onto t.
func (tf *terminalFile) apply(t *TerminalSettings) {
	if tf.Env != nil {
		t.Env = append([]string{}, *tf.Env...)
	}
	if tf.ReadPaths != nil {
		t.ReadPaths = expandPaths(*tf.ReadPaths)
	}
	if tf.WritePaths != nil {
		t.WritePaths = expandPaths(*tf.WritePaths)
	}
	setBool(&t.Network, tf.Network)
	setBool(&t.Sandbox, tf.Sandbox)
}

// apply copies the permissions section of the file at path onto ps. Rules
// of every file add up: a file read later cannot take back a deny an
// earlier one wrote.
func (p *permissionsFile) apply(ps *PermissionSettings, path string) {
	set := func(dst *[]string, v *[]string) {
		if v != nil {
			*dst = append([]string{}, *v...)
		}
	}
	set(&ps.Tools, p.Tools)
	set(&ps.DenyTools, p.DenyTools)
	set(&ps.Hosts, p.Hosts)
	if p.Paths != nil {
		ps.Paths = expandPaths(*p.Paths)
	}
	for _, l := range []struct {
		list *[]string
		dst  *[]permission.Rule
	}{{p.Allow, &ps.Rules.Allow}, {p.Ask, &ps.Rules.Ask}, {p.Deny, &ps.Rules.Deny}} {
		if l.list == nil {
			continue
		}
		for _, text := range *l.list {
			if r, err := permission.Parse(text); err == nil { // checked by check
				*l.dst = AppendRules(*l.dst, []permission.Rule{r}, path)
			}
		}
	}
	if p.Mode != nil {
		ps.Rules.Mode, _ = permission.ParseMode(*p.Mode)
	}
}

// apply copies agent.subagent onto dst.
func (sa *subagentFile) apply(dst *SubagentSettings, set setter) {
	setInt(&dst.MaxDepth, sa.MaxDepth)
	setInt(&dst.DefaultMaxTurns, sa.DefaultMaxTurns)
	setInt(&dst.OutputMaxSize, sa.OutputMaxSize)
	setBool(&dst.TelemetryEnabled, sa.TelemetryEnabled)
	setBool(&dst.PersistenceEnabled, sa.PersistenceEnabled)
	setInt(&dst.MaxExecutions, sa.MaxExecutions)
	if sa.MaxTotalTokens != nil {
		dst.MaxTotalTokens = *sa.MaxTotalTokens
	}
	setDur(&dst.MaxTotalTime, sa.MaxTotalTime)
	set.str(&dst.Provider, sa.Provider, "agent.subagent.provider")
	set.str(&dst.Model, sa.Model, "agent.subagent.model")
}

// checkMerged checks what depends on several keys, possibly from several
// files: providers need a base_url, and models must name a known provider
// (a price of an unknown one is a warning).
// Each message names the file that set the key last.
func (s *Settings) checkMerged(origin map[string]string) Diagnostics {
	var diags Diagnostics
	errorf := func(key, format string, args ...any) {
		sink := &Sink{File: origin[key]}
		sink.Errorf(0, "", format, args...)
		diags = append(diags, sink.Diags...)
	}
	if q := s.Search; q.API == "searxng" && q.URL == "" {
		errorf("search.api", "search.api searxng needs search.url, the instance's address (https://searx.example.org)")
	}
	if q := s.Search; q.Mode == SearchAPI && q.API == "" {
		errorf("search.mode", "search.mode api needs search.api (brave or searxng)")
	}
	for _, name := range s.ProviderNames() {
		if s.Providers[name].BaseURL == "" {
			errorf("providers."+name, "providers.%s.base_url is required", name)
		}
	}
	if m := s.DefaultModel; m != "" && m != ModelInherit {
		if ref, err := llm.ParseModel(m); err == nil && !s.KnownProvider(ref.Provider) {
			errorf("default_model", "default_model %q names unknown provider %q", m, ref.Provider)
		}
	}
	// Lenient: an entry of a provider deputy does not know is kept, but a
	// misspelt provider would otherwise leave cost_usd null, or a rule
	// unapplied, with no word why.
	unused := func(section string, models []string, what string) {
		for _, model := range models {
			if provider, _, _ := strings.Cut(model, "/"); !s.KnownProvider(provider) {
				sink := &Sink{File: origin[section+"."+model]}
				sink.Warnf(0, "", "%s.%s: no provider is called %q (built-in: %s; hosted: %s; others are defined under providers), so this %s is never used",
					section, model, provider, strings.Join(builtinProviders, ", "), strings.Join(HostedProviders, ", "), what)
				diags = append(diags, sink.Diags...)
			}
		}
	}
	unused("prices", sortedKeys(s.Prices), "price")
	unused("capabilities", sortedKeys(s.Capabilities), "entry")
	sa := s.Agent.Subagent
	switch {
	case sa.Provider != "" && sa.Model == "":
		errorf("agent.subagent.provider", "agent.subagent.model is required when agent.subagent.provider is set")
	case sa.Provider != "" && !s.KnownProvider(sa.Provider):
		errorf("agent.subagent.provider", "agent.subagent.provider names unknown provider %q", sa.Provider)
	}
	// agent.subagent.model alone, without a known provider in front, is a
	// model of the parent's provider (SubagentModelName).
	return diags
}

// sortedKeys returns the keys of m in order, so that diagnostics about map
// entries come out the same on every run.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// expandPaths expands a leading ~ and $VARS in each path, as agent workdirs
// are.
func expandPaths(ps []string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, os.ExpandEnv(osfile.ExpandHome(p)))
	}
	return out
}

// checkCapability checks one entry of capabilities: a provider/model
// key, sampling parameters and thinking kinds deputy knows, limits of at
// least one token.
func checkCapability(sink *Sink, model string, c *capabilityFile) {
	key := "capabilities." + model
	if provider, name, ok := strings.Cut(model, "/"); !ok || provider == "" || name == "" {
		sink.Errorf(0, "", "%s: an entry is keyed by provider/model (for example openai/gpt-5.6)", key)
	}
	if c == nil {
		return
	}
	if c.Refuses != nil {
		for _, p := range *c.Refuses {
			if !slices.Contains(capability.Params, p) {
				sink.Errorf(0, "", "%s.refuses: %q is not a sampling parameter (%s)", key, p, strings.Join(capability.Params, ", "))
			}
		}
	}
	for _, list := range []struct {
		name string
		v    *[]string
	}{{"efforts", c.Efforts}, {"sampling_efforts", c.SamplingEfforts}} {
		if list.v != nil && slices.ContainsFunc(*list.v, func(e string) bool { return strings.TrimSpace(e) != e || list.name == "efforts" && e == "" }) {
			sink.Errorf(0, "", "%s.%s: an effort is a word such as low or high (got %q)", key, list.name, *list.v)
		}
	}
	if c.Thinking != nil && !slices.Contains(capability.ThinkingKinds, *c.Thinking) {
		sink.Errorf(0, "", "%s.thinking: %q is not one of %s", key, *c.Thinking, strings.Join(capability.ThinkingKinds, ", "))
	}
	for _, f := range []struct {
		name string
		v    *int
		min  int
	}{{"max_output", c.MaxOutput, 1}, {"context", c.Context, 1}, {"budget_min", c.BudgetMin, 0}, {"budget_max", c.BudgetMax, 0}} {
		if f.v != nil && *f.v < f.min {
			sink.Errorf(0, "", "%s.%s must be a number of tokens of at least %d (got %d)", key, f.name, f.min, *f.v)
		}
	}
}

// checkPrice checks one entry of prices: a provider/model key, input and
// output set, no negative price.
func checkPrice(sink *Sink, model string, p *priceFile) {
	key := "prices." + model
	if provider, name, ok := strings.Cut(model, "/"); !ok || provider == "" || name == "" {
		sink.Errorf(0, "", "%s: a price is keyed by provider/model (for example openai/gpt-4.1)", key)
	}
	if p == nil || p.Input == nil || p.Output == nil {
		sink.Errorf(0, "", "%s: input and output are required (US dollars per million tokens)", key)
		return
	}
	for _, f := range []struct {
		name, unit string
		v          *float64
	}{{"input", "million tokens", p.Input}, {"output", "million tokens", p.Output}, {"cache_read", "million tokens", p.CacheRead},
		{"cache_write", "million tokens", p.CacheWrite}, {"web_search", "1,000 searches", p.WebSearch}} {
		if f.v != nil && (*f.v < 0 || math.IsNaN(*f.v) || math.IsInf(*f.v, 0)) {
			sink.Errorf(0, "", "%s.%s must be a non-negative number of US dollars per %s (got %v)", key, f.name, f.unit, *f.v)
		}
	}
}

// checkSearch checks the search section: a known mode and API, a URL a
// SearXNG can be reached at, results between 1 and 20.
func checkSearch(sink *Sink, q *searchFile) {
	oneOf := func(key string, v *string, values ...string) {
		if v != nil && !slices.Contains(values, *v) {
			sink.Errorf(0, "", "%s must be one of %s (got %q)", key, strings.Join(values, ", "), *v)
		}
	}
	oneOf("search.mode", q.Mode, SearchAuto, SearchNative, SearchAPI, SearchOff)
	oneOf("search.api", q.API, "brave", "searxng")
	if q.URL != nil {
		if u, err := url.Parse(*q.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			sink.Errorf(0, "", "search.url must be an http or https URL (got %q)", llm.RedactURL(*q.URL))
		}
	}
	if q.MaxResults != nil && (*q.MaxResults < 1 || *q.MaxResults > 20) {
		sink.Errorf(0, "", "search.max_results must be between 1 and 20 (got %d)", *q.MaxResults)
	}
}

package openai

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/deputyhq/deputy/llm/capability"
)

// openAIFamilyRE matches the models OpenAI serves on the Responses API:
// the GPT-4.x and GPT-5.x families, the o-series reasoning models, and
// the ChatGPT, Codex and computer-use models (developers.openai.com/api/
// docs/models, read 2026-11-28). gpt-oss, OpenAI's open-weight model, runs
// on Ollama, vLLM and the like, so it is not one of them.
var openAIFamilyRE = regexp.MustCompile(`^(gpt-[45]|o[1-9]($|-)|chatgpt-|codex-|computer-use-)`)

// OpenAIFamily reports whether model is one of OpenAI's own (a fine-tune
// of one, "ft:gpt-4.1-mini:org::id", included).
func OpenAIFamily(model string) bool {
	model = strings.TrimPrefix(strings.ToLower(model), "ft:")
	return openAIFamilyRE.MatchString(model) && !strings.HasPrefix(model, "gpt-oss")
}

// isOpenAIHost reports whether base (a normalised base URL) is OpenAI's
// own API, its regional hosts (eu.api.openai.com) included.
func isOpenAIHost(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	h := strings.ToLower(u.Hostname())
	return h == "api.openai.com" || strings.HasSuffix(h, ".api.openai.com")
}

// usesResponses reports whether a request for model goes to the
// Responses API (see Options.WireAPI).
func (p *Provider) usesResponses(model string) bool {
	switch p.wire {
	case WireResponses:
		return true
	case WireChat:
		return false
	}
	return p.openAIHost && OpenAIFamily(model)
}

// reasoning says how a model reasons, as far as the adapter must know to
// build a request: whether it takes a reasoning effort at all, and whether
// it is one of OpenAI's reasoning models (which return encrypted reasoning
// items and summaries on the Responses API).
type reasoning struct {
	noEffort bool
	reasons  bool
}

// reasoningOf reads the capability table (llm/capability, dated there;
// config.yaml's overrides laid over it, Options.Capabilities) for the
// provider's model of that name, else OpenAI's. A model the table does
// not know takes an effort if the caller sets one, and is taken for a
// reasoning model when its name is of OpenAI's reasoning families
// (gpt-5.x but the chat models, the o-series).
func (p *Provider) reasoningOf(model string) reasoning {
	name := strings.TrimPrefix(strings.ToLower(model), "ft:")
	m, ok := p.caps.Lookup(p.name + "/" + name)
	if !ok {
		m, ok = p.caps.Lookup("openai/" + name)
	}
	if ok {
		return reasoning{noEffort: m.NoEffort, reasons: m.Thinking == capability.ThinkingEffort}
	}
	reasons := OpenAIFamily(name) && !strings.HasPrefix(name, "gpt-4") && !strings.Contains(name, "-chat")
	return reasoning{reasons: reasons}
}

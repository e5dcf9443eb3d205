package llm

import (
	"fmt"
	"strings"
)

// ModelRef is a parsed model string "provider/model".
type ModelRef struct {
	Provider string
	Model    string
}

func (m ModelRef) String() string { return m.Provider + "/" + m.Model }

// ParseModel splits "provider/model" at the first slash, so model names that
// contain slashes ("openrouter/meta-llama/llama-3.1-8b", "script/examples/x.yaml")
// keep them. It does not check that the provider exists.
func ParseModel(s string) (ModelRef, error) {
	s = strings.TrimSpace(s)
	provider, model, ok := strings.Cut(s, "/")
	if !ok || provider == "" || model == "" {
		return ModelRef{}, fmt.Errorf("model %q must be written provider/model (for example openai/gpt-4.1)", s)
	}
	return ModelRef{Provider: provider, Model: model}, nil
}

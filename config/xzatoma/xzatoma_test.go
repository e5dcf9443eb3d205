package xzatoma

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deputyhq/deputy/config"
	"github.com/deputyhq/deputy/config/internal/testfile"
)

func TestLoadSettingsXzatoma(t *testing.T) {
	s, err := config.LoadSettings([]string{filepath.Join("testdata", "subagents.yaml")}, Settings)
	if err != nil {
		t.Fatal(err)
	}
	sa := s.Agent.Subagent
	if s.DefaultModel != "ollama/granite4:3b" || s.MaxTurns != 30 || sa.MaxDepth != 2 || sa.OutputMaxSize != 65536 || sa.MaxExecutions != 5 || !sa.PersistenceEnabled {
		t.Errorf("settings %+v", s)
	}
	// The sub-agents' model alone runs on the parent's provider.
	if s.SubagentModel() != "" || s.SubagentModelName() != "granite4:1b" {
		t.Errorf("subagent model %q / %q", s.SubagentModel(), s.SubagentModelName())
	}
	var got []string
	for _, w := range s.Warnings {
		got = append(got, fmt.Sprintf("%d %s", w.Line, w.Key))
	}
	want := []string{"11 agent.timeout_seconds", "12 agent.conversation", "15 agent.tools", "17 agent.terminal",
		"26 agent.subagent.persistence_path", "28 agent.subagent.chat_enabled", "31 skills", "34 watcher", "40 acp"}
	slices.Sort(got)
	slices.Sort(want)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("warnings (-want +got):\n%s\n%v", d, s.Warnings)
	}

	s, err = config.LoadSettings([]string{filepath.Join("testdata", "openai.yaml")}, Settings)
	if err != nil {
		t.Fatal(err)
	}
	p := s.Providers[OpenAIProvider]
	if s.DefaultModel != OpenAIProvider+"/qwen3" || p.BaseURL != "http://localhost:8080/v1" || p.APIKeyEnv != "OPENAI_API_KEY" || s.ResponseTimeout != 120*time.Second {
		t.Errorf("openai section: %+v", s)
	}
	// agent.subagent.provider alone: that provider with xzatoma's model for it.
	if s.SubagentModel() != "ollama/llama3.2:latest" {
		t.Errorf("subagent model %q", s.SubagentModel())
	}
	for _, w := range s.Warnings {
		if strings.Contains(w.String(), "not-a-real-key") {
			t.Errorf("a key reached a warning: %s", w)
		}
	}
	if len(s.Warnings) != 1 || s.Warnings[0].Key != "provider.openai.api_key" {
		t.Errorf("warnings %v", s.Warnings)
	}

	// Copilot loads, with a warning that says how to choose a model.
	s, err = config.LoadSettings([]string{testfile.Temp(t, "config.yaml", "provider:\n  type: copilot\n  copilot:\n    model: gpt-4o\n")}, Settings)
	if err != nil || s.DefaultModel != "" || len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0].Message, "set default_model (for example openai/gpt-4o)") {
		t.Errorf("copilot: %v %+v", err, s)
	}
	// An unknown provider type is an error naming xzatoma's.
	_, err = config.LoadSettings([]string{testfile.Temp(t, "config.yaml", "provider:\n  type: gpt\n")}, Settings)
	if err == nil || !strings.Contains(err.Error(), `unknown xzatoma provider "gpt" (xzatoma knows ollama, openai and copilot)`) {
		t.Errorf("err = %v", err)
	}
}

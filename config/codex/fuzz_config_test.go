package codex

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// configSeeds are Codex config.toml files: a model and its provider, roles
// declared with their files, and some Codex would not take.
var configSeeds = []string{
	"model = \"gpt-5.4\"\nmodel_provider = \"openai\"\n",
	"model = \"qwen3\"\nmodel_provider = \"ollama\"\n[model_providers.mine]\nbase_url = \"http://x\"\n",
	"model = \"m\"\nmodel_provider = \"mine\"\n",
	"[agents]\nmax_threads = 4\n[agents.reviewer]\ndescription = \"r\"\nconfig_file = \"agents/reviewer.toml\"\n[agents.home]\nconfig_file = \"~/roles/home.toml\"\n[agents.abs]\nconfig_file = \"/etc/../roles/abs.toml\"\n",
	"[agents.bad]\nconfig_file = 3\n[agents.none]\ndescription = \"no file\"\n",
	"model = [1]\n[agents]\nx = \"y\"\n", "agents = 1\n", "[[agents]]\n", "=", "",
}

// FuzzConfig: any config.toml gives a model of provider/model or none,
// and role files at clean absolute paths, never a panic; twice the same.
func FuzzConfig(f *testing.F) {
	for _, s := range configSeeds {
		f.Add([]byte(s))
	}
	dir := filepath.Join(f.TempDir(), "proj", ".codex")
	f.Fuzz(func(t *testing.T, data []byte) {
		m := configModel(data)
		if provider, model, ok := strings.Cut(m, "/"); m != "" && (!ok || provider == "" || model == "") {
			t.Errorf("configModel = %q", m)
		}
		roles := roleFiles(data, dir)
		for path, name := range roles {
			if !filepath.IsAbs(path) || filepath.Clean(path) != path || name == "" {
				t.Errorf("role %q at %q", name, path)
			}
		}
		if d := cmp.Diff(roles, roleFiles(data, dir)); d != "" || m != configModel(data) {
			t.Errorf("not deterministic: %s", d)
		}
	})
}

// Codex reads config.toml's keys as written: Config_file and Model are
// not its keys (and, with config_file beside it, which one a struct took
// changed from run to run).
func TestConfigExactKeys(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".codex")
	if got := roleFiles([]byte("[agents.r]\nConfig_file = \"r.toml\"\n"), dir); len(got) != 0 {
		t.Errorf("Config_file: roles %v", got)
	}
	got := roleFiles([]byte("[agents.r]\nConfig_file = \"x.toml\"\nconfig_file = \"r.toml\"\n"), dir)
	if d := cmp.Diff(map[string]string{filepath.Join(dir, "r.toml"): "r"}, got); d != "" {
		t.Errorf("roles (-want +got):\n%s", d)
	}
	// Two roles declaring one file: the first name, whatever the order
	// the map gives them in.
	for range 20 {
		got := roleFiles([]byte("[agents.zed]\nconfig_file = \"x.toml\"\n[agents.amy]\nconfig_file = \"x.toml\"\n"), dir)
		if d := cmp.Diff(map[string]string{filepath.Join(dir, "x.toml"): "amy"}, got); d != "" {
			t.Fatalf("two roles, one file (-want +got):\n%s", d)
		}
	}
	if got := configModel([]byte("Model = \"gpt-5.4\"\n")); got != "" {
		t.Errorf("Model: %q", got)
	}
	if got := configModel([]byte("model = \"gpt-5.4\"\n")); got != "openai/gpt-5.4" {
		t.Errorf("model: %q", got)
	}
}

package cli

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestBuildVersion(t *testing.T) {
	tests := []struct {
		name string
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{"no build info", nil, false, "deputy dev\n"},
		{"checkout build", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "deputy dev\n"},
		{"go install", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, true, "deputy v1.2.3\n"},
		{"with vcs", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"},
			{Key: "vcs.time", Value: "2025-01-31T09:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		}}, true, "deputy dev (0123456789ab, 2025-01-31T09:00:00Z, modified)\n"},
	}
	platform := runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
	for _, tt := range tests {
		got := buildVersion(tt.info, tt.ok).String()
		if want := tt.want + platform; got != want {
			t.Errorf("%s: got %q, want %q", tt.name, got, want)
		}
	}
}

func TestVersionCommandRuns(t *testing.T) {
	var out, errb strings.Builder
	if code := run(t.Context(), []string{"version"}, strings.NewReader(""), &out, &errb); code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	if !strings.HasPrefix(out.String(), "deputy ") || !strings.Contains(out.String(), runtime.Version()) {
		t.Errorf("output %q", out.String())
	}
}

package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// versionInfo is what 'deputy version' reports.
type versionInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit,omitempty"`
	Time     string `json:"commit_time,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
}

// buildVersion reads the version from the build info the Go toolchain
// embeds: the module version for 'go install deputy@vX', else "dev", with
// the VCS revision when the binary was built from a checkout.
func buildVersion(info *debug.BuildInfo, ok bool) versionInfo {
	v := versionInfo{Version: "dev", Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if !ok || info == nil {
		return v
	}
	if mv := info.Main.Version; mv != "" && mv != "(devel)" {
		v.Version = mv
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

func (v versionInfo) String() string {
	s := "deputy " + v.Version
	if v.Commit != "" {
		commit := v.Commit
		if len(commit) > 12 {
			commit = commit[:12]
		}
		s += " (" + commit
		if v.Time != "" {
			s += ", " + v.Time
		}
		if v.Modified {
			s += ", modified"
		}
		s += ")"
	}
	return fmt.Sprintf("%s\n%s %s/%s", s, v.Go, v.OS, v.Arch)
}

func newVersionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print deputy's version, Go version and platform",
		Long: `Print the version of deputy (the module version when installed with
'go install', "dev" for a build from a checkout, with its commit when known),
the Go version it was built with, and the operating system and architecture.`,
		Example: `  deputy version
  deputy version --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := buildVersion(debug.ReadBuildInfo())
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), v)
			}
			fmt.Fprintln(cmd.OutOrStdout(), v)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the version as JSON")
	return cmd
}

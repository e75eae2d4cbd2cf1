package cmd

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// versionInfo is what sandbox version says, from the build's own record
// (debug.ReadBuildInfo): the module version go install stamps, and the
// commit, its time and whether the tree had changes, which go build stamps
// from the VCS.
type versionInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	BuildDate string `json:"build_date,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	Go        string `json:"go"`
	Platform  string `json:"platform"`
}

func readVersion() versionInfo {
	v := versionInfo{Version: "(devel)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.time":
			v.BuildDate = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

func (v versionInfo) String() string {
	s := "sandbox " + v.Version
	if v.Commit != "" {
		c := v.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		s += " (commit " + c
		if v.Modified {
			s += ", modified"
		}
		if v.BuildDate != "" {
			s += ", " + v.BuildDate
		}
		s += ")"
	}
	return s + " " + v.Go + " " + v.Platform
}

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and build date of sandbox",
		Long: `version prints sandbox's module version (set by go install …@VERSION), the
commit it was built from, that commit's date, whether the tree had local
changes, and the Go version and platform. sandbox --version prints the same
line.`,
		Example: `  sandbox version
  sandbox version --json | jq -r .commit`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			v := readVersion()
			if a.json {
				return a.writeJSON(v)
			}
			fmt.Fprintln(a.stdout, v)
			return nil
		},
	}
}

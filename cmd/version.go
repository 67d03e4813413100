package cmd

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/report"
)

// buildVersion is what `ctxfold version` reports. Fields are empty when
// the build does not record them (go run, or -buildvcs=false).
type buildVersion struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	CommitAt  string `json:"commit_time"`
	Modified  bool   `json:"modified"`
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"`
}

type versionOptions struct {
	IO        *report.IOStreams
	JSON      bool
	BuildInfo func() (*debug.BuildInfo, bool)
}

func newVersionCmd(f *Factory, runF func(*versionOptions) error) *cobra.Command {
	opts := &versionOptions{IO: f.IO, BuildInfo: debug.ReadBuildInfo}
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go version of this build",
		Long: `Print the module version, the VCS commit the binary was built from (when the
build recorded it) and the Go toolchain version. Include this line in bug
reports.` + exitStatusHelp(""),
		Example: `  ctxfold version
  ctxfold version --json | jq -r .commit`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.IO.JSON
			if runF != nil {
				return runF(opts)
			}
			return runVersion(cmd.Context(), opts)
		},
	}
}

func runVersion(_ context.Context, opts *versionOptions) error {
	v := readBuildVersion(opts.BuildInfo)
	if opts.JSON {
		return report.JSON(opts.IO.Out, v)
	}
	fmt.Fprintf(opts.IO.Out, "ctxfold %s\n", v.Version)
	if v.Commit != "" {
		dirty := ""
		if v.Modified {
			dirty = " (modified)"
		}
		fmt.Fprintf(opts.IO.Out, "commit %s%s %s\n", v.Commit, dirty, v.CommitAt)
	}
	fmt.Fprintf(opts.IO.Out, "%s %s\n", v.GoVersion, v.Platform)
	return nil
}

// releaseVersion is the release's version, set by the release build
// (.goreleaser.yaml's -X, scripts/release-build.sh VERSION): the version
// the npm packages carry, which the module version of a snapshot build
// is not. "" in any other build.
var releaseVersion string

// readBuildVersion takes the module version and the vcs.* settings the Go
// toolchain stamps into binaries built inside a checkout.
func readBuildVersion(read func() (*debug.BuildInfo, bool)) buildVersion {
	v := buildVersion{Version: "(devel)", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := read()
	if !ok {
		return v
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	if releaseVersion != "" {
		v.Version = releaseVersion
	}
	if bi.GoVersion != "" {
		v.GoVersion = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.time":
			v.CommitAt = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

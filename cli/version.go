package cli

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/airlockdev/airlock/gate"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print airlock's version, module version and VCS revision",
		Long: `version prints airlock's version, then what the Go toolchain recorded in the binary: the
module version (a tag for go install ...@vX.Y.Z, "(devel)" for a local build without VCS
information) and the VCS revision and time, with "+dirty" for a modified tree.

airlock's version is the one a release build sets (-ldflags -X gate.Version=X.Y.Z). A build
that did not set it (gate.Version ends in -dev) shows the module version the toolchain
recorded instead, without its leading v (go install ...@v1.2.3 shows 1.2.3), and the -dev
default only when there is none.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			info, ok := debug.ReadBuildInfo()
			if !ok {
				info = nil
			}
			fmt.Fprintf(out, "airlock %s\n", shownVersion(gate.Version, info))
			if info == nil {
				fmt.Fprintln(out, "module: unknown (built without module support)")
				return nil
			}
			fmt.Fprintf(out, "module: %s %s\n", info.Main.Path, info.Main.Version)
			settings := map[string]string{}
			for _, s := range info.Settings {
				settings[s.Key] = s.Value
			}
			if rev := settings["vcs.revision"]; rev != "" {
				if settings["vcs.modified"] == "true" {
					rev += "+dirty"
				}
				fmt.Fprintf(out, "revision: %s %s\n", rev, settings["vcs.time"])
			}
			fmt.Fprintf(out, "go: %s\n", info.GoVersion)
			return nil
		},
	}
}

// UseBuildVersion sets gate.Version to what airlock version shows
// (shownVersion): a binary built with go install …@vX.Y.Z and no -ldflags
// then records X.Y.Z, not the -dev default, in its audit records, SARIF
// drivers and reports, so that airlock merge tells two such builds apart.
// A program that embeds cli.Main calls it once at start-up, before any
// goroutine reads gate.Version; cmd/airlock does.
func UseBuildVersion() { gate.Version = binaryVersion() }

// binaryVersion is shownVersion of gate.Version and this binary's build
// information.
func binaryVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = nil
	}
	return shownVersion(gate.Version, info)
}

// shownVersion is the version airlock version and --version print: v (gate.Version)
// when a build set it, that is unless it ends in "-dev" (the default in gate/audit.go);
// else the main module's version from info (debug.ReadBuildInfo; nil when
// there is none) without its leading "v", when the toolchain recorded a
// real one: not "" and not "(devel)" (a build outside a module proxy or
// VCS). Otherwise v.
func shownVersion(v string, info *debug.BuildInfo) string {
	if !strings.HasSuffix(v, "-dev") || info == nil {
		return v
	}
	mv := info.Main.Version
	if mv == "" || mv == "(devel)" {
		return v
	}
	return strings.TrimPrefix(mv, "v")
}

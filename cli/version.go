package cli

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/airlockdev/airlock/gate"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print airlock's version, module version and VCS revision",
		Long: `version prints the version recorded in audit records, then what the Go toolchain
recorded in the binary: the module version (a tag for go install ...@vX.Y.Z, "(devel)"
for a local build) and the VCS revision and time, with "+dirty" for a modified tree.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "airlock %s\n", gate.Version)
			info, ok := debug.ReadBuildInfo()
			if !ok {
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

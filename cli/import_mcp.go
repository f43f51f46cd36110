package cli

import "github.com/spf13/cobra"

// newImportMCPCmd is airlock import mcp (placeholder until it lands).
func newImportMCPCmd(e *env) *cobra.Command {
	return &cobra.Command{Use: "mcp", Short: "not yet", Hidden: true}
}

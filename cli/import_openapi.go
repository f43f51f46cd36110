package cli

import "github.com/spf13/cobra"

// newImportOpenAPICmd is airlock import openapi (placeholder until it lands).
func newImportOpenAPICmd(e *env) *cobra.Command {
	return &cobra.Command{Use: "openapi", Short: "not yet", Hidden: true}
}

package cli

import "github.com/spf13/cobra"

// newInferCmd is airlock infer (placeholder until it lands).
func newInferCmd(e *env) *cobra.Command {
	return &cobra.Command{Use: "infer", Short: "not yet", Hidden: true}
}

package cmd

import (
	"errors"

	"github.com/spf13/cobra"
)

// TODO(issue): placeholder until the estimate command lands; it refuses to run.
func newEstimateCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:    "estimate",
		Short:  "not implemented yet",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("estimate is not implemented yet")
		},
	}
}

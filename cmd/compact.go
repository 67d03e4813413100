package cmd

import (
	"errors"

	"github.com/spf13/cobra"
)

// TODO(issue): placeholder until the compact command lands; it refuses to run.
func newCompactCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:    "compact",
		Short:  "not implemented yet",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("compact is not implemented yet")
		},
	}
}

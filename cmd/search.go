package cmd

import (
	"errors"

	"github.com/spf13/cobra"
)

// TODO(issue): placeholder until the search command lands; it refuses to run.
func newSearchCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:    "search",
		Short:  "not implemented yet",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("search is not implemented yet")
		},
	}
}

package cmd

import (
	"errors"

	"github.com/spf13/cobra"
)

// TODO(issue): placeholder until the graph command lands; it refuses to run.
func newGraphCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:    "graph",
		Short:  "not implemented yet",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("graph is not implemented yet")
		},
	}
}

package cmd

import (
	"errors"

	"github.com/spf13/cobra"
)

// TODO(issue): placeholder until the version command lands; it refuses to run.
func newVersionCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:    "version",
		Short:  "not implemented yet",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("version is not implemented yet")
		},
	}
}

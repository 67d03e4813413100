package cmd

import (
	"errors"

	"github.com/spf13/cobra"
)

// TODO(issue): placeholder until the config command lands; it refuses to run.
func newConfigCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:    "config",
		Short:  "not implemented yet",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("config is not implemented yet")
		},
	}
}

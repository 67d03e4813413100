package cmd

import (
	"errors"

	"github.com/spf13/cobra"
)

// TODO(issue): placeholder until the verify command lands; it refuses to run.
func newVerifyCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:    "verify",
		Short:  "not implemented yet",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("verify is not implemented yet")
		},
	}
}

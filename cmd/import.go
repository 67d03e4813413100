package cmd

import (
	"errors"

	"github.com/spf13/cobra"
)

// TODO(issue): placeholder until the import command lands; it refuses to run.
func newImportCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:    "import",
		Short:  "not implemented yet",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("import is not implemented yet")
		},
	}
}

package cmd

import "github.com/spf13/cobra"

// addHiddenCommands registers maintenance commands not shown in help.
func addHiddenCommands(root *cobra.Command, f *Factory) {}

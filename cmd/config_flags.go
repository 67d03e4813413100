package cmd

// config's own flags: the settings other commands define, so that
// `ctxfold config --model X` resolves them as those commands would.

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// addConfigFlags lets `ctxfold config --model X` show what estimate would
// use: each whitelisted key another command defines as a flag is accepted
// by config too, with the same type, default and usage.
func addConfigFlags(root, config *cobra.Command) {
	for _, k := range configKeys {
		if fileOnlyKeys[k.Name] || root.PersistentFlags().Lookup(k.Name) != nil || config.Flags().Lookup(k.Name) != nil {
			continue
		}
		var src *pflag.Flag
		var owner *cobra.Command
		for _, c := range root.Commands() {
			if c != config {
				if owner, src = flagOwner(c, k.Name); src != nil {
					break
				}
			}
		}
		if src == nil {
			continue
		}
		// A new Flag over the same Value: only one command runs per process.
		config.Flags().AddFlag(&pflag.Flag{Name: src.Name, Usage: src.Usage, Value: src.Value, DefValue: src.DefValue, NoOptDefVal: src.NoOptDefVal})
		if fn, ok := owner.GetFlagCompletionFunc(src.Name); ok {
			_ = config.RegisterFlagCompletionFunc(src.Name, fn)
		}
	}
}

// flagOwner finds the first command in c's subtree defining a local flag
// named name.
func flagOwner(c *cobra.Command, name string) (*cobra.Command, *pflag.Flag) {
	if fl := c.LocalNonPersistentFlags().Lookup(name); fl != nil {
		return c, fl
	}
	for _, sub := range c.Commands() {
		if owner, fl := flagOwner(sub, name); fl != nil {
			return owner, fl
		}
	}
	return nil, nil
}

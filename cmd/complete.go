package cmd

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/store"
)

// completeNodeIDs offers the non-summary node ids of the session in dir.
func completeNodeIDs(f *Factory, dir, prefix string) ([]string, cobra.ShellCompDirective) {
	s, err := store.Open(dir, store.OpenOptions{})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer s.Close()
	var out []string
	for i := range s.Len() {
		r := s.Ref(i)
		if !r.Summary && strings.HasPrefix(r.ID, prefix) {
			out = append(out, r.ID+"\t"+string(r.Role))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// nodeIDFlagCompletion completes a flag naming a node of the session given
// as the first argument.
func nodeIDFlagCompletion(f *Factory) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) == 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return completeNodeIDs(f, args[0], toComplete)
	}
}

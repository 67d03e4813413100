package cmd

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/report"
)

// Every command a user can see — including ones added after this test was
// written — has examples and a Long help ending with the EXIT STATUS
// section (STYLE 11). Hidden commands are placeholders not yet written,
// except gen-docs, which is held to it too.
func TestEveryCommandHasExamplesAndExitStatus(t *testing.T) {
	ios, _, _, _ := report.Test()
	root := NewRootCmd(&Factory{IO: ios})
	var walk func(c *cobra.Command)
	seen := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c.Hidden && c.Name() != "gen-docs" {
			return
		}
		seen++
		path := c.CommandPath()
		if strings.TrimSpace(c.Example) == "" && c != root {
			t.Errorf("%s: no examples", path)
		}
		i := strings.LastIndex(c.Long, "\n\nEXIT STATUS\n")
		if i < 0 {
			t.Errorf("%s: Long help has no EXIT STATUS section", path)
			return
		}
		tail := c.Long[i:]
		if !strings.HasPrefix(tail, exitStatusHelp("")) {
			t.Errorf("%s: EXIT STATUS section is not the standard table:\n%s", path, tail)
		}
		// Nothing but command-specific codes may follow the table.
		for _, l := range strings.Split(strings.TrimPrefix(tail, exitStatusHelp("")), "\n") {
			if l != "" && strings.ToUpper(l) == l && !strings.HasPrefix(l, " ") {
				t.Errorf("%s: section %q after EXIT STATUS", path, l)
			}
		}
	}
	walk(root)
	if seen < 6 {
		t.Fatalf("walked only %d commands", seen)
	}
}

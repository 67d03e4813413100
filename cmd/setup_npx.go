package cmd

import (
	"fmt"
	"io"

	"github.com/ctxfold/ctxfold/setup"
)

// stableCopy is setup's own copy of a binary that runs from npx's
// temporary cache (docs/INSTALL.md): the client's settings name Dest,
// never the cache, and never npx (seconds of start-up and a registry
// look-up on every prompt).
type stableCopy struct {
	From, Dest string
}

// npxStableCopy is the copy to install when exe lives in npx's cache, nil
// otherwise.
func npxStableCopy(exe, home string, windows bool) *stableCopy {
	if !setup.Ephemeral(exe) || home == "" {
		return nil
	}
	return &stableCopy{From: exe, Dest: setup.StablePath(home, windows)}
}

// install copies the binary (not on a dry run) and says so on stderr.
func (c *stableCopy) install(errOut io.Writer, dry bool) error {
	if c == nil {
		return nil
	}
	if dry {
		fmt.Fprintf(errOut, "ctxfold: note: running from npx's temporary cache: setup would install a copy at %s and set the client to run it\n", c.Dest)
		return nil
	}
	wrote, err := setup.InstallCopy(c.From, c.Dest)
	if err != nil {
		return err
	}
	if wrote {
		fmt.Fprintf(errOut, "ctxfold: note: running from npx's temporary cache: installed a copy at %s, which the client runs (npx's cache is emptied at will)\n", c.Dest)
	}
	return nil
}

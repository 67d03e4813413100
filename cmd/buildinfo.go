package cmd

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// versionLine names the build for bug reports.
func versionLine() string {
	v := "(devel)"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		v = bi.Main.Version
	}
	return fmt.Sprintf("ctxfold %s %s", v, runtime.Version())
}

package report_test

import (
	"fmt"

	"github.com/ctxfold/ctxfold/report"
)

// A command reports progress unconditionally; the reporter decides whether
// to draw. These streams are not a terminal, so nothing reaches stderr.
func ExampleNewProgress() {
	ios, _, _, errOut := report.Test()
	p := report.NewProgress(ios, "estimating", 3)
	for range 3 {
		p.Add(1) // one session done
	}
	p.Done()
	fmt.Printf("stderr: %q\n", errOut.String())
	// Output: stderr: ""
}

package cmd

import (
	"regexp"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
)

// Issue 44 item 11: a window below the fixed costs — the output reserve,
// the margin, and the prefix the calibration adds to every request — is
// one error with one exit code, whichever of them it falls below; a
// "does not fit" (exit 5) always names a positive budget.
func TestRenderFitWindowBelowFixedCosts(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "tools")
	budget := regexp.MustCompile(`budget (-?\d+)`)
	for _, w := range []string{"300", "400", "500", "600"} {
		r := cliRun(t, nil, false, "render", dir, "--fit", "--window", w)
		if r.Code != ExitUsage || !strings.HasPrefix(r.Stderr, "ctxfold: error: no input budget: window "+w) {
			t.Errorf("--window %s: exit %d %s", w, r.Code, r.Stderr)
		}
	}
	for _, w := range []string{"700", "800", "1000"} {
		r := cliRun(t, nil, false, "render", dir, "--fit", "--window", w)
		if m := budget.FindStringSubmatch(r.Stderr); r.Code == ExitDoesNotFit && (m == nil || strings.HasPrefix(m[1], "-")) {
			t.Errorf("--window %s: exit 5 without a positive budget: %s", w, r.Stderr)
		}
	}
}

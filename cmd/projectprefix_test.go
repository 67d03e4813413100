package cmd

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/report"
)

// A fresh Claude Code session beside an earlier one of its project (the
// folder Claude Code keeps per project): `estimate FILE` and the status
// line both add what the earlier session's first request read beside its
// transcript, and agree.
func TestFreshSessionTakesTheProjectsEarlierSession(t *testing.T) {
	cache := t.TempDir()
	env := map[string]string{"XDG_CACHE_HOME": cache}
	tr := claudeInteropTranscripts(t)
	_, earlier, fresh := sessiontest.ProjectFolder(t, tr["chat"])

	var past struct {
		Calibration struct {
			History []struct {
				Estimated int `json:"estimated"`
				Measured  int `json:"measured"`
			} `json:"history"`
		} `json:"calibration"`
	}
	if r := runEnv(t, cliEnv{Env: env}, "estimate", earlier, "--nodes", "--json"); json.Unmarshal([]byte(r.Stdout), &past) != nil || len(past.Calibration.History) == 0 {
		t.Fatalf("the earlier session: %q", r.Stdout)
	}
	carried := past.Calibration.History[0].Measured - past.Calibration.History[0].Estimated

	var now struct {
		Total       int `json:"total"`
		Calibration struct {
			Method          string `json:"method"`
			CalibratedTotal int    `json:"calibrated_total"`
		} `json:"calibration"`
	}
	r := runEnv(t, cliEnv{Env: env}, "estimate", fresh, "--json")
	if err := json.Unmarshal([]byte(r.Stdout), &now); err != nil {
		t.Fatalf("%v %q", err, r.Stdout)
	}
	c := now.Calibration
	if !strings.HasPrefix(c.Method, "project: ") || c.CalibratedTotal != now.Total+carried {
		t.Errorf("estimate: %+v (total %d), want %d + %d from the project's session", c, now.Total, now.Total, carried)
	}
	var st StatusLine
	s := statusRun(t, cache, nil, statusHookJSON(t, fresh, "Sonnet 4.5", ""), "--json")
	if err := json.Unmarshal([]byte(s.Stdout), &st); err != nil {
		t.Fatalf("%v %q", err, s.Stdout)
	}
	if st.Tokens != c.CalibratedTotal || st.Basis != "calibrated" {
		t.Errorf("status line %d (%s), estimate %d", st.Tokens, st.Basis, c.CalibratedTotal)
	}
	// A person's terminal names where the prefix came from.
	tty := cliRun(t, map[string]string{"XDG_CACHE_HOME": cache, "NO_COLOR": "1"}, true, "estimate", fresh)
	if want := fmt.Sprintf("+ unrecorded prefix (the project's earlier session's first request, no usage recorded yet): %s tokens", report.Thousands(carried)); !strings.Contains(tty.Stdout, want) {
		t.Errorf("estimate on a terminal lacks %q:\n%s", want, tty.Stdout)
	}
}

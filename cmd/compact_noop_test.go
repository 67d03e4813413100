package cmd

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// importInterop imports one Claude Code interop transcript into a session.
func importInterop(t *testing.T, name string) string {
	t.Helper()
	src := claudeInteropTranscripts(t)[name]
	dir := filepath.Join(t.TempDir(), name)
	if r := cliRun(t, nil, false, "import", src, "-o", dir); r.Code != 0 {
		t.Fatalf("import %s: %d %s", name, r.Code, r.Stderr)
	}
	return dir
}

// Issue 44 item 8: a no-op compact --json reports one calibrated figure
// before and after, the one estimate prints.
func TestCompactNoOpCalibratedFigures(t *testing.T) {
	for _, name := range []string{"chat", "parallel", "subagent", "compact"} {
		dir := importInterop(t, name)
		var est struct {
			Calibration struct {
				CalibratedTotal int `json:"calibrated_total"`
			}
		}
		r := cliRun(t, nil, false, "estimate", dir, "--json")
		if err := json.Unmarshal([]byte(r.Stdout), &est); err != nil || est.Calibration.CalibratedTotal == 0 {
			t.Fatalf("%s: estimate: %v %s", name, err, r.Stdout)
		}
		for _, extra := range [][]string{nil, {"--dry-run"}} {
			var res struct {
				Outcome string
				Before  int `json:"calibrated_tokens_before"`
				After   int `json:"calibrated_tokens_after"`
			}
			r = cliRun(t, nil, false, append([]string{"compact", dir, "--json"}, extra...)...)
			if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil || r.Code != 0 || res.Outcome != "no_op" {
				t.Fatalf("%s %v: exit %d %v %s", name, extra, r.Code, err, r.Stdout)
			}
			if res.Before != est.Calibration.CalibratedTotal || res.After != res.Before {
				t.Errorf("%s %v: calibrated before %d after %d, estimate %d", name, extra, res.Before, res.After, est.Calibration.CalibratedTotal)
			}
		}
	}
}

// Issue 44 item 9: a session imported with the client's own compaction,
// whose history is within the target, says so — not "already compacted",
// which is kept for a summary ctxfold wrote with nothing new after it.
func TestCompactClientSummaryWithinTarget(t *testing.T) {
	dir := importInterop(t, "compact")
	for _, extra := range [][]string{nil, {"--dry-run"}} {
		r := cliRun(t, nil, false, append([]string{"compact", dir}, extra...)...)
		if r.Code != 0 || !strings.Contains(r.Stdout, "Nothing to compact: the history (") || strings.Contains(r.Stdout, "already compacted") {
			t.Errorf("compact %v: exit %d %q", extra, r.Code, r.Stdout)
		}
	}
	// Compacted by ctxfold, then run again: the message of docs/COMPACT.md §5.
	if r := cliRun(t, nil, false, "compact", dir, "--keep-tokens", "100"); r.Code != 0 || !strings.HasPrefix(r.Stdout, "Context compacted") {
		t.Fatalf("compact --keep-tokens 100: %d %q %s", r.Code, r.Stdout, r.Stderr)
	}
	if r := cliRun(t, nil, false, "compact", dir); r.Code != 0 || r.Stdout != "Context is already compacted; no older messages to fold.\n" {
		t.Errorf("compact again: %d %q", r.Code, r.Stdout)
	}
}

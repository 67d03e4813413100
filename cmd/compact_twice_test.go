package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
)

func TestCompactTwiceIsTheFourthMessage(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "long")
	if r := cliRun(t, nil, false, "compact", dir, "--keep-tokens", "2000"); r.Code != 0 || !strings.HasPrefix(r.Stdout, "Context compacted: covered 276 older messages, ") {
		t.Fatalf("first compact: %d %q %s", r.Code, r.Stdout, r.Stderr)
	}
	r := cliRun(t, nil, false, "compact", dir, "--keep-tokens", "2000")
	if r.Code != 0 || r.Stdout != "Context is already compacted; no older messages to fold.\n" {
		t.Fatalf("second compact: exit %d, stdout %q", r.Code, r.Stdout)
	}
	r = cliRun(t, nil, false, "compact", dir, "--keep-tokens", "2000", "--json")
	var obj map[string]any
	if err := json.Unmarshal([]byte(r.Stdout), &obj); err != nil || r.Code != 0 {
		t.Fatalf("second compact --json: %d %v %s", r.Code, err, r.Stdout)
	}
	if obj["outcome"] != "no_op" || obj["newly_covered_count"] != float64(0) || obj["message"] != "Context is already compacted; no older messages to fold." {
		t.Errorf("second compact --json: %s", r.Stdout)
	}

	// New turns: the message says how many of the covered messages are new.
	long := strings.Repeat("Please also check the rounding of the Quebec sales tax in every export path. ", 200)
	for _, c := range [][]string{{"user", long}, {"assistant", "Checked."}, {"user", "Thanks."}, {"assistant", "Done."}, {"user", "One more."}, {"assistant", "Sure."}} {
		if r := cliRun(t, nil, false, "append", dir, "--role", c[0], "--content", c[1]); r.Code != 0 {
			t.Fatalf("append: %d %s", r.Code, r.Stderr)
		}
	}
	r = cliRun(t, nil, false, "compact", dir, "--keep-tokens", "2000", "--json")
	if err := json.Unmarshal([]byte(r.Stdout), &obj); err != nil || r.Code != 0 {
		t.Fatalf("third compact --json: %d %v %s", r.Code, err, r.Stdout)
	}
	covered, newly := obj["summarised_count"].(float64), obj["newly_covered_count"].(float64)
	if obj["outcome"] != "succeeded" || newly <= 0 || newly >= covered {
		t.Fatalf("third compact: %s", r.Stdout)
	}
	want := regexp.MustCompile(`^Context compacted: covered [0-9]+ older messages \([0-9]+ new\), [0-9]+ → [0-9]+ tokens$`)
	if msg, _ := obj["message"].(string); !want.MatchString(msg) || !strings.Contains(msg, "("+jsonNum(newly)+" new)") {
		t.Errorf("message %q does not say how many are new (%v of %v)", msg, newly, covered)
	}
}

func TestCompactKeepTokensZeroIsAnError(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "long")
	before, _ := os.ReadFile(filepath.Join(dir, "nodes.jsonl"))
	r := cliRun(t, nil, false, "compact", dir, "--keep-tokens", "0")
	if r.Code != 2 || !strings.Contains(r.Stderr, "--keep-tokens 0") {
		t.Fatalf("--keep-tokens 0: exit %d, stderr %q", r.Code, r.Stderr)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "nodes.jsonl"))
	if string(before) != string(after) {
		t.Error("--keep-tokens 0 wrote to the session")
	}
}

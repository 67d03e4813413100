package cmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
)

// twoCompactions is the long fixture compacted, grown and compacted again:
// two summaries, the second extending the first.
func twoCompactions(t *testing.T) (dir, first, second string) {
	t.Helper()
	dir = sessiontest.CopyFixture(t, "long")
	compactID := func() string {
		r := cliRun(t, nil, false, "compact", dir, "--keep-tokens", "2000", "--json")
		var obj struct {
			Outcome   string `json:"outcome"`
			SummaryID string `json:"summary_id"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &obj); err != nil || obj.Outcome != "succeeded" || obj.SummaryID == "" {
			t.Fatalf("compact: exit %d %v: %s %s", r.Code, err, r.Stdout, r.Stderr)
		}
		return obj.SummaryID
	}
	first = compactID()
	long := strings.Repeat("Please also check the rounding of the Quebec sales tax in every export path. ", 200)
	for _, c := range [][]string{{"user", long}, {"assistant", "Checked."}, {"user", "Thanks."}, {"assistant", "Done."}} {
		if r := cliRun(t, nil, false, "append", dir, "--role", c[0], "--content", c[1]); r.Code != 0 {
			t.Fatalf("append: %d %s", r.Code, r.Stderr)
		}
	}
	return dir, first, compactID()
}

func renderIDs(t *testing.T, dir string) []string {
	t.Helper()
	r := cliRun(t, nil, false, "render", dir, "--format", "ids")
	if r.Code != 0 {
		t.Fatalf("render: %d %s", r.Code, r.Stderr)
	}
	return strings.Fields(r.Stdout)
}

func TestUncompactGoesBackOneCompactionAtATime(t *testing.T) {
	dir, first, second := twoCompactions(t)
	nodes := filepath.Join(dir, "nodes.jsonl")
	before, _ := os.ReadFile(nodes)
	compacted := renderIDs(t, dir)

	r := cliRun(t, nil, false, "uncompact", dir, "--json")
	var res struct {
		Undone, Active string
		Covered        int
	}
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil || r.Code != 0 || res.Undone != second || res.Active != first || res.Covered == 0 {
		t.Fatalf("first undo: exit %d %v: %s %s", r.Code, err, r.Stdout, r.Stderr)
	}
	once := renderIDs(t, dir)
	if len(once) <= len(compacted) || once[1] != first {
		t.Errorf("after one undo the view reads the first summary and more turns: %v", once[:min(3, len(once))])
	}
	if r := cliRun(t, nil, false, "verify", dir, "--strict"); r.Code != 0 {
		t.Errorf("verify --strict after an undo: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = cliRun(t, nil, false, "uncompact", dir)
	if r.Code != 0 || !strings.Contains(r.Stdout, "the branch renders raw") {
		t.Fatalf("second undo: exit %d %q", r.Code, r.Stdout)
	}
	raw := renderIDs(t, dir)
	rawCmd := cliRun(t, nil, false, "render", dir, "--format", "ids", "--raw")
	if strings.Join(raw, " ") != strings.Join(strings.Fields(rawCmd.Stdout), " ") {
		t.Errorf("after undoing both, render is not the raw branch")
	}
	after, _ := os.ReadFile(nodes)
	if !bytes.Equal(after, before) {
		t.Errorf("nodes.jsonl changed: undo is recorded beside the DAG")
	}
	if r := cliRun(t, nil, false, "uncompact", dir); r.Code != 0 || !strings.HasPrefix(r.Stdout, "nothing to undo") {
		t.Errorf("undo with nothing active: exit %d %q", r.Code, r.Stdout)
	}
	// Redo goes forward again, one step at a time.
	if r := cliRun(t, nil, false, "uncompact", dir, "--redo"); r.Code != 0 || !strings.Contains(r.Stdout, first) {
		t.Errorf("redo: exit %d %q", r.Code, r.Stdout)
	}
	if got := renderIDs(t, dir); strings.Join(got, " ") != strings.Join(once, " ") {
		t.Errorf("redo did not give back the view of one undo")
	}
	// compact works afterwards as on any session, and extends what is active.
	r = cliRun(t, nil, false, "compact", dir, "--keep-tokens", "2000")
	if r.Code != 0 {
		t.Fatalf("compact after undo: exit %d %s", r.Code, r.Stderr)
	}
	if r := cliRun(t, nil, false, "verify", dir, "--strict"); r.Code != 0 {
		t.Errorf("verify --strict after compact: exit %d\n%s", r.Code, r.Stdout)
	}
	grown, _ := os.ReadFile(nodes)
	if !bytes.HasPrefix(grown, before) {
		t.Errorf("the old bytes of nodes.jsonl are not a prefix of the new file")
	}
}

func TestUncompactBadInput(t *testing.T) {
	dir, first, _ := twoCompactions(t)
	meta := filepath.Join(dir, "session.json")
	before, _ := os.ReadFile(meta)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--summary", "nope"}, 2, "no such node"},
		{[]string{"--summary", "u001"}, 2, "not a summary node"},
		{[]string{"--summary", first, "--redo"}, 2, "not with --summary"},
	} {
		r := cliRun(t, nil, false, append([]string{"uncompact", dir}, c.args...)...)
		if r.Code != c.code || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, r.Code, r.Stderr, c.code, c.want)
		}
	}
	if after, _ := os.ReadFile(meta); !bytes.Equal(after, before) {
		t.Errorf("a refused uncompact changed session.json")
	}
	// Naming the first summary takes back both compactions.
	r := cliRun(t, nil, false, "uncompact", dir, "--summary", first, "--json")
	if r.Code != 0 || !strings.Contains(r.Stdout, `"active":""`) {
		t.Errorf("--summary FIRST: exit %d %s %s", r.Code, r.Stdout, r.Stderr)
	}
	file := filepath.Join(t.TempDir(), "t.jsonl")
	_ = os.WriteFile(file, []byte(`{"type":"user"}`+"\n"), 0o600)
	if r := cliRun(t, nil, false, "uncompact", file); r.Code != 6 || !strings.Contains(r.Stderr, "ctxfold import") {
		t.Errorf("a transcript file: exit %d, %q", r.Code, r.Stderr)
	}
}

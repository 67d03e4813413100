package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/store"
)

func summaryText(t *testing.T, dir, id string) string {
	t.Helper()
	s, err := store.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n, err := s.NodeByID(id)
	if err != nil {
		t.Fatal(err)
	}
	return n.Content.PlainText()
}

// Pins survive two successive compactions verbatim, and audit says so.
func TestPinSurvivesTwoCompactions(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "long")
	// n003's text is deep in the folded history: without the pin the
	// extractive summary keeps at most its error lines.
	pinned := summaryText(t, dir, "n003")
	if r := cliRun(t, nil, false, "pin", dir, "n003"); r.Code != 0 || r.Stdout != "pinned\tn003\n" {
		t.Fatalf("pin: %d %q %s", r.Code, r.Stdout, r.Stderr)
	}
	nodesBefore, _ := os.ReadFile(filepath.Join(dir, "nodes.jsonl"))
	if r := cliRun(t, nil, false, "pin", dir); r.Stdout != "n003\n" {
		t.Fatalf("pin list: %q", r.Stdout)
	}
	nodesAfter, _ := os.ReadFile(filepath.Join(dir, "nodes.jsonl"))
	if string(nodesBefore) != string(nodesAfter) {
		t.Fatal("pinning touched nodes.jsonl")
	}
	compactJSON := func() map[string]any {
		t.Helper()
		r := cliRun(t, nil, false, "compact", dir, "--keep-tokens", "2000", "--json")
		var obj map[string]any
		if err := json.Unmarshal([]byte(r.Stdout), &obj); err != nil || r.Code != 0 || obj["outcome"] != "succeeded" {
			t.Fatalf("compact: %d %v %s %s", r.Code, err, r.Stdout, r.Stderr)
		}
		return obj
	}
	first := compactJSON()
	if text := summaryText(t, dir, first["summary_id"].(string)); !strings.Contains(text, "## Pinned\n"+pinned+"\n") {
		t.Fatalf("first summary does not quote the pinned text verbatim:\n%s", text)
	}
	long := strings.Repeat("Now port the Quebec rounding fix to the CSV export as well. ", 300)
	for _, c := range [][]string{{"user", long}, {"assistant", "Ported."}, {"user", "Thanks."}, {"assistant", "Done."}, {"user", "Next?"}, {"assistant", "Nothing left."}} {
		if r := cliRun(t, nil, false, "append", dir, "--role", c[0], "--content", c[1]); r.Code != 0 {
			t.Fatalf("append: %d %s", r.Code, r.Stderr)
		}
	}
	second := compactJSON()
	if text := summaryText(t, dir, second["summary_id"].(string)); strings.Count(text, pinned) != 1 || !strings.Contains(text, "## Pinned\n"+pinned+"\n") {
		t.Fatalf("second summary does not quote the pinned text verbatim, once:\n%s", text)
	}
	r := cliRun(t, nil, false, "audit", dir, "--json")
	var obj struct {
		Summaries []struct {
			PinnedNodes []struct {
				ID   string
				Kept bool
			} `json:"pinned_nodes"`
			Pinned *struct {
				Total, Kept int
			}
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &obj); err != nil || len(obj.Summaries) != 1 {
		t.Fatalf("audit: %v %s", err, r.Stdout)
	}
	s := obj.Summaries[0]
	if len(s.PinnedNodes) != 1 || s.PinnedNodes[0].ID != "n003" || !s.PinnedNodes[0].Kept || s.Pinned == nil || s.Pinned.Total == 0 || s.Pinned.Kept != s.Pinned.Total {
		t.Errorf("audit of the pins: %s", r.Stdout)
	}
	r = cliRun(t, nil, false, "graph", dir, "--format", "json")
	if !strings.Contains(r.Stdout, `"id":"n003"`) || !strings.Contains(r.Stdout, `"pinned":true`) || strings.Count(r.Stdout, `"pinned":true`) != 1 {
		t.Errorf("graph json does not mark the one pin")
	}

	if r := cliRun(t, nil, false, "graph", dir, "--expand"); !strings.Contains(r.Stdout, "n003  assistant · pinned") {
		t.Errorf("graph tree does not mark the pin:\n%s", r.Stdout)
	}
	if r := cliRun(t, nil, false, "graph", dir, "--expand", "--format", "dot"); !strings.Contains(r.Stdout, " · pinned") {
		t.Errorf("graph dot does not mark the pin")
	}
	if r := cliRun(t, nil, false, "graph", dir, "--format", "html"); strings.Count(r.Stdout, `"pinned":true`) != 1 {
		t.Errorf("graph html does not mark the one pin")
	}

	// Unpinned, the next summary no longer quotes it.
	if r := cliRun(t, nil, false, "unpin", dir, "n003"); r.Code != 0 || r.Stdout != "unpinned\tn003\n" {
		t.Fatalf("unpin: %d %q", r.Code, r.Stdout)
	}
	if r := cliRun(t, nil, false, "pin", dir); r.Stdout != "" {
		t.Errorf("pins after unpin: %q", r.Stdout)
	}
}

func TestPinRefusesBadIDs(t *testing.T) {
	dir := sessiontest.CopyFixture(t, "long")
	events := filepath.Join(dir, "events.jsonl")
	before, _ := os.ReadFile(events)
	for _, args := range [][]string{{"pin", dir, "n003", "nope"}, {"unpin", dir}} {
		if r := cliRun(t, nil, false, args...); r.Code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, r.Code, r.Stderr)
		}
	}
	after, _ := os.ReadFile(events)
	if string(before) != string(after) {
		t.Error("a refused pin wrote an event")
	}
}

package claudecode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
)

// outOfOrder is a real Claude Code recording with its tool_result line
// moved before the assistant tool_use line it answers, as Claude Code's
// desktop app writes some turns (docs/INTEROP-claude-code.md, "A parent
// written after its child"): the result's parentUuid names a line that
// comes three lines later.
func outOfOrder(t testing.TB) (inOrder, moved string) {
	t.Helper()
	inOrder = filepath.Join("..", "..", "testdata", "interop", "claude-code", "2.1.328", "tool", "transcript", "00000000-0000-4000-8000-000000000001.jsonl")
	return inOrder, sessiontest.ResultBeforeItsCall(t, inOrder, t.TempDir())
}

// A tool result written before the assistant line it answers is linked to
// it, as if written in order: the same nodes, no "parent not found".
func TestParentWrittenAfterItsChild(t *testing.T) {
	inOrder, moved := outOfOrder(t)
	want, got := importMem(t, inOrder).convs[0], importMem(t, moved).convs[0]
	if len(got.warnings) != 0 {
		t.Errorf("warnings: %q", got.warnings)
	}
	enc := func(s *memSink) []string {
		var out []string
		for _, n := range s.nodes {
			b, _ := json.Marshal(n)
			out = append(out, string(b))
		}
		return out
	}
	if !reflect.DeepEqual(enc(got), enc(want)) || got.head != want.head {
		t.Errorf("the moved file imports as\n%s\nwant\n%s", strings.Join(enc(got), "\n"), strings.Join(enc(want), "\n"))
	}
}

// A file that starts with a tool result whose call is in no line of it
// (a tail of a session): the result waits, its parent never comes, and it
// is a root, with what follows it chained on it as written — one warning,
// not one for each line that waited behind it.
// firstResult is file's lines and the index of the first that carries a
// tool result (-1 for none).
func firstResult(t *testing.T, file string) (lines []string, at int) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines = strings.SplitAfter(string(b), "\n")
	for i, l := range lines {
		if strings.Contains(l, `"type":"tool_result"`) {
			return lines, i
		}
	}
	return lines, -1
}

func TestResultWhoseCallNeverComes(t *testing.T) {
	inOrder, _ := outOfOrder(t)
	lines, start := firstResult(t, inOrder)
	// The lines between the result and the reply that answers it (an
	// attachment) are dropped, the reply's parent made the result: the
	// reply comes while the result waits, and waits behind it.
	var rec struct {
		UUID string `json:"uuid"`
	}
	if err := json.Unmarshal([]byte(lines[start]), &rec); err != nil || rec.UUID == "" {
		t.Fatalf("the result line: %v", err)
	}
	rest := []string{lines[start]}
	reply := -1
	for i := start + 1; i < len(lines); i++ {
		if strings.Contains(lines[i], `"type":"assistant"`) {
			reply = i
			break
		}
	}
	if reply < 0 {
		t.Fatal("no reply after the result")
	}
	var mid struct {
		UUID string `json:"uuid"`
	}
	for _, l := range lines[start+1 : reply] {
		if json.Unmarshal([]byte(l), &mid) == nil && mid.UUID != "" {
			for k := reply; k < len(lines); k++ {
				lines[k] = strings.ReplaceAll(lines[k], `"parentUuid":"`+mid.UUID+`"`, `"parentUuid":"`+rec.UUID+`"`)
			}
		}
	}
	rest = append(rest, lines[reply:]...)
	tail := filepath.Join(t.TempDir(), "tail.jsonl")
	if err := os.WriteFile(tail, []byte(strings.Join(rest, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	c := importMem(t, tail).convs[0]
	roots := 0
	for _, w := range c.warnings {
		if strings.Contains(w, "not found; imported as a root") {
			roots++
		}
	}
	if roots != 1 {
		t.Fatalf("warnings %q, want one root: the result's", c.warnings)
	}
	if len(c.nodes) < 2 || c.nodes[0].Predecessor != "" || c.nodes[1].Predecessor != c.nodes[0].ID {
		t.Errorf("the nodes after the result do not chain on it: %+v", c.nodes)
	}
}

// A file read between a result and the call it answers (the desktop app
// writes the result first; a reader can come between the two writes):
// the result is imported as it is (a root, with its warning), and HEAD
// stays on the chain read so far — where it is without the result — not on
// a lone result (`estimate FILE` there showed the client's prior, a third
// of what the next request read: docs/ACCURACY.md).
func TestFileEndsBeforeTheCall(t *testing.T) {
	_, moved := outOfOrder(t)
	lines, r := firstResult(t, moved)
	if r < 1 {
		t.Fatal("no result line")
	}
	write := func(name string, ls []string) string {
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, []byte(strings.Join(ls, "")), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	before := importMem(t, write("before.jsonl", lines[:r])).convs[0]
	cut := importMem(t, write("cut.jsonl", lines[:r+1])).convs[0]
	if cut.head != before.head {
		t.Errorf("HEAD %q, want %q: the chain before the waiting result", cut.head, before.head)
	}
	if len(cut.nodes) != len(before.nodes)+1 || len(cut.warnings) == 0 || !strings.Contains(cut.warnings[0], "not found; imported as a root") {
		t.Errorf("%d nodes, warnings %q; want the %d before it and the result, a root with its warning", len(cut.nodes), cut.warnings, len(before.nodes))
	}
}

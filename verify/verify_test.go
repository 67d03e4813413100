package verify_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
	"github.com/ctxfold/ctxfold/verify"
)

const fixtures = "../fixtures"

func check(t *testing.T, dir string, opts verify.Options) (*verify.Result, []verify.Finding) {
	t.Helper()
	var got []verify.Finding
	res, err := verify.Dir(context.Background(), dir, store.OpenOptions{}, opts, func(f verify.Finding) { got = append(got, f) })
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	return res, got
}

func codes(fs []verify.Finding) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, f.Code)
	}
	slices.Sort(out)
	return out
}

// TestBrokenFixtures: each session in fixtures/broken produces exactly its
// codes, nothing else.
func TestBrokenFixtures(t *testing.T) {
	want := map[string][]string{
		"duplicate_id":                  {"duplicate_id"},
		"missing_predecessor":           {"missing_predecessor"},
		"missing_caller":                {"missing_caller"},
		"cycle":                         {"cycle"},
		"caller_cycle":                  {"caller_cycle"},
		"head_unset":                    {"head_unset"},
		"head_missing":                  {"head_missing"},
		"head_on_summary":               {"head_on_summary"},
		"active_summary_missing":        {"active_summary_missing"},
		"active_summary_not_summary":    {"active_summary_not_summary"},
		"head_spine_broken":             {"head_spine_broken", "missing_predecessor"},
		"interrupted_write":             {"interrupted_write"},
		"nodes_hash_mismatch":           {"nodes_hash_mismatch"},
		"summary_shape":                 {"summary_shape"},
		"summary_content_prefix":        {"summary_content_prefix"},
		"summary_unflagged":             {"summary_unflagged"},
		"covers_empty":                  {"covers_empty"},
		"covers_missing":                {"covers_missing"},
		"covers_summary":                {"covers_summary"},
		"covers_not_contiguous":         {"covers_not_contiguous"},
		"covers_dead_fork":              {"covers_dead_fork"},
		"splice_mismatch":               {"render_not_substituted", "splice_mismatch"},
		"covers_splits_tool_call":       {"covers_splits_tool_call", "tool_result_orphaned"},
		"covers_splits_tool_call_start": {"covers_splits_tool_call", "tool_call_unanswered"},
		"summary_not_extending":         {"summary_not_extending"},
		"active_summary_unset":          {"active_summary_unset"},
		"active_summary_not_latest":     {"active_summary_not_latest"},
		"active_summary_text_mismatch":  {"active_summary_text_mismatch"},
		"summary_on_spine":              {"summary_on_spine"},
		"tool_call_unanswered":          {"tool_call_unanswered"},
		"tool_result_orphaned":          {"tool_result_orphaned"},
		"tool_call_pending":             {"tool_call_pending"},
		"tool_node_invalid":             {"tool_node_invalid"},
		"event_malformed":               {"event_malformed"},
		"event_summary_missing":         {"event_summary_missing"},
		"event_count_mismatch":          {"event_count_mismatch"},
		"compaction_interrupted":        {"compaction_interrupted"},
		"several-clean-control":         {},
		"clean-spawned-inside-call":     {},
		"several-structure-and-tools":   {"duplicate_id", "head_spine_broken", "missing_predecessor", "tool_result_orphaned"},
		"several-summary-and-events":    {"covers_dead_fork", "event_count_mismatch", "event_summary_missing", "summary_shape"},
	}
	entries, err := os.ReadDir(filepath.Join(fixtures, "broken"))
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		seen++
		name := e.Name()
		t.Run(name, func(t *testing.T) {
			w, ok := want[name]
			if !ok {
				t.Fatalf("fixtures/broken/%s has no expectation in this table", name)
			}
			_, got := check(t, filepath.Join(fixtures, "broken", name), verify.Options{})
			if !slices.Equal(codes(got), w) {
				t.Errorf("codes = %v, want %v\n%s", codes(got), w, dump(got))
			}
			for _, f := range got {
				if f.File == "" || f.Msg == "" || f.Category == "" {
					t.Errorf("finding lacks a location, message or category: %+v", f)
				}
			}
		})
	}
	if seen != len(want) {
		t.Errorf("fixtures/broken has %d sessions, the table %d", seen, len(want))
	}
}

// TestEveryCodeHasAFixture: each code verify can report (except the
// render cross-check, which no data can trigger while render and the
// rule agree) is produced alone by fixtures/broken/<code>.
func TestEveryCodeHasAFixture(t *testing.T) {
	all := []string{verify.CodeHeadSpineBroken, verify.CodeInterruptedWrite, verify.CodeNodesHashMismatch, verify.CodeSummaryShape,
		verify.CodeSummaryContentPrefix, verify.CodeSummaryUnflagged, verify.CodeCoversEmpty, verify.CodeCoversMissing,
		verify.CodeCoversSummary, verify.CodeCoversNotContiguous, verify.CodeCoversDeadFork, verify.CodeSpliceMismatch,
		verify.CodeCoversSplitsToolCall, verify.CodeSummaryNotExtending, verify.CodeActiveSummaryUnset,
		verify.CodeActiveSummaryNotLast, verify.CodeActiveSummaryTextDiff, verify.CodeSummaryOnSpine,
		verify.CodeToolCallUnanswered, verify.CodeToolResultOrphaned, verify.CodeToolCallPending, verify.CodeToolNodeInvalid,
		verify.CodeEventMalformed, verify.CodeEventSummaryMissing, verify.CodeEventCountMismatch,
		"duplicate_id", "missing_predecessor", "missing_caller", "cycle", "caller_cycle", "head_unset", "head_missing",
		"head_on_summary", "active_summary_missing", "active_summary_not_summary"}
	for _, code := range all {
		if _, err := os.Stat(filepath.Join(fixtures, "broken", code, "session.json")); err != nil {
			t.Errorf("no fixture for %s", code)
		}
	}
	doc, err := os.ReadFile("../docs/VERIFY.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range append(all, verify.CodeRenderNotSubstituted, verify.CodeRenderMismatch) {
		if !strings.Contains(string(doc), "`"+code+"`") {
			t.Errorf("docs/VERIFY.md does not document %s", code)
		}
	}
}

func TestCleanFixtures(t *testing.T) {
	for _, name := range []string{"tools", "fork", "compacted"} {
		res, got := check(t, filepath.Join(fixtures, name), verify.Options{Strict: true})
		if len(got) != 0 || !res.OK() {
			t.Errorf("%s: want no findings, got\n%s", name, dump(got))
		}
	}
	res, _ := check(t, filepath.Join(fixtures, "compacted"), verify.Options{})
	if res.Nodes != 21 || res.Summaries != 2 || res.Tips != 2 {
		t.Errorf("compacted: result %+v, want 21 nodes, 2 summaries, 2 tips", res)
	}
}

func TestStrict(t *testing.T) {
	dir := filepath.Join(fixtures, "broken", "tool_call_pending")
	res, got := check(t, dir, verify.Options{})
	if !res.OK() || res.Warnings != 1 || got[0].Severity != verify.Warning {
		t.Fatalf("without --strict: %+v %v", res, got)
	}
	res, got = check(t, dir, verify.Options{Strict: true})
	if res.OK() || res.Errors != 1 || res.Warnings != 0 || got[0].Severity != verify.Error {
		t.Fatalf("with --strict: %+v %v", res, got)
	}
}

// session.json findings name the file as dag does (filepath.Join, so
// 'verify sessions/x/' prints no "x//session.json"), carry the line of
// their key, and sort with dag's by line: nodes.jsonl first, then
// session.json, in each category.
func TestMetaFindingsPathAndLine(t *testing.T) {
	dir := t.TempDir()
	meta := "{\n  \"format_version\": 1,\n  \"active_summary_id\": \"summary_gone\",\n  \"head\": \"a2\"\n}\n"
	nodes := `{"id":"r","predecessor":null,"role":"system","content":"x"}
{"id":"u1","predecessor":"ghost","role":"user","content":"x"}
{"id":"a2","predecessor":"u1","role":"assistant","content":"x"}
`
	if err := os.WriteFile(filepath.Join(dir, store.MetaFile), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, store.NodesFile), []byte(nodes), 0o644); err != nil {
		t.Fatal(err)
	}
	_, got := check(t, dir+"/", verify.Options{})
	metaPath := filepath.Join(dir, store.MetaFile)
	want := []string{
		filepath.Join(dir, store.NodesFile) + `:2: node "u1": predecessor "ghost" not found`,
		metaPath + `:3: node "summary_gone": the active summary does not exist`,
		metaPath + `:4: node "a2": HEAD's predecessor chain does not reach a root (a missing predecessor or a cycle above it)`,
	}
	var lines []string
	for _, f := range got {
		lines = append(lines, f.String())
	}
	if !slices.Equal(lines, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

func TestFindingText(t *testing.T) {
	_, got := check(t, filepath.Join(fixtures, "broken", "tool_call_unanswered"), verify.Options{})
	want := `../fixtures/broken/tool_call_unanswered/nodes.jsonl:3: node "a1": tool call "c1" has no result before the next turn "a2" (line 4)`
	if len(got) != 1 || got[0].String() != want || got[0].NodeID != "a1" || got[0].Line != 3 {
		t.Fatalf("got %v\nwant %s", got, want)
	}
}

func TestUnreadable(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "session.json"), []byte(`{"format_version":1,"head":"a"}`), 0o644)
	os.WriteFile(filepath.Join(dir, "nodes.jsonl"), []byte("{\"id\":\"a\",\"role\":\"user\"}\nnot json\n"), 0o644)
	_, err := verify.Dir(context.Background(), dir, store.OpenOptions{}, verify.Options{}, nil)
	var perr *transcript.ParseError
	if !errors.As(err, &perr) || perr.Line != 2 {
		t.Fatalf("err = %v, want a ParseError on line 2", err)
	}
}

func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := verify.Dir(ctx, filepath.Join(fixtures, "compacted"), store.OpenOptions{}, verify.Options{}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func dump(fs []verify.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "  %s %s: %s\n", f.Severity, f.Code, f)
	}
	return b.String()
}

func ExampleSession() {
	s, err := store.Open("../fixtures/broken/covers_splits_tool_call", store.OpenOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	res, err := verify.Session(context.Background(), s, verify.Options{}, func(f verify.Finding) {
		fmt.Printf("%s %s %s %s\n", f.Category, f.Severity, f.Code, f.NodeID)
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("ok:", res.OK())
	// Output:
	// summaries error covers_splits_tool_call summary_1
	// tools error tool_result_orphaned t1
	// ok: false
}

// A compaction killed between committing its summary and writing its
// compaction_finished: the finding names the summary no event records.
func TestCompactionInterruptedAfterCommit(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(fixtures, "broken", "compaction_interrupted")
	for _, name := range []string{"session.json", "nodes.jsonl"} {
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(`{"type":"compaction_started","at":"2026-11-30T10:00:00Z"}`+"\n"), 0o644)
	_, got := check(t, dir, verify.Options{})
	if len(got) != 1 || got[0].Code != verify.CodeCompactionInterrupted || got[0].NodeID != "summary_1" ||
		!strings.Contains(got[0].Msg, "after committing its summary") || got[0].Line != 1 {
		t.Fatalf("findings %s", dump(got))
	}
}

package compact

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/audit"
	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/summarize"
	"github.com/ctxfold/ctxfold/transcript"
)

// importExternal imports one shared real transcript (read in place) into
// a temporary session.
func importExternal(t *testing.T, rel ...string) string {
	t.Helper()
	src := sessiontest.External(t, rel...)
	dir := filepath.Join(t.TempDir(), "s")
	if _, err := importer.Import(context.Background(), importer.Options{From: importer.Auto, Files: []string{src}, Out: dir}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The QA case of issue 16: re-compacting the Claude Code session that
// Claude Code itself compacted once keeps the user's original request and
// the client's summary, under an "## Objective" heading; and the turns the
// two summaries cover keep their paths, commands and errors.
func TestRecompactMarotKeepsTheRequestAndTheImportedSummary(t *testing.T) {
	dir := importExternal(t, "claude-code", "marot-spotter", "258c7280-ae70-4798-800f-63464d01a85d.jsonl")
	o := opts(dir, summarize.Extractive{}, 0)
	res, err := Compact(context.Background(), o)
	if err != nil || res.Outcome != OutcomeSucceeded {
		t.Fatalf("compact: %v %+v", err, res)
	}
	text := sessiontest.StoredNode(t, dir, res.SummaryID).Content.PlainText()
	for _, want := range []string{"## Objective\nImplement spotter-gqc\n", "## Earlier state\nThis session is being continued from a previous conversation", "lazy_html", "Implement spotter-gqc"} {
		if !strings.Contains(text, want) {
			t.Errorf("the new summary lacks %q", want)
		}
	}
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	results, err := audit.Run(context.Background(), g, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Issue 25: every kind ≥ 95% at default settings (identifiers and
	// numbers included), and what compact reported is what audit says.
	for _, k := range audit.Kinds {
		kr := results[0].Kind(k)
		if kr.SurvivalPct < 95 {
			t.Errorf("%s survival %.1f%% (%d of %d), want ≥ 95%%; missing %v", k, kr.SurvivalPct, kr.Kept, kr.Total, kr.Missing)
		}
		if got := res.Survival.Kinds[string(k)]; got.Kept != kr.Kept || got.Total != kr.Total {
			t.Errorf("%s: compact reported %d/%d, audit says %d/%d", k, got.Kept, got.Total, kr.Kept, kr.Total)
		}
	}
	if res.Growth() > 0 && res.SummaryTokens > res.SummaryCap+res.Growth() {
		t.Errorf("growth %d, summary %d, cap %d", res.Growth(), res.SummaryTokens, res.SummaryCap)
	}
}

// The same on the Codex session Codex compacted: its replacement history
// (the client's summary) is carried whole as the earlier state.
func TestRecompactMadshnKeepsTheCodexSummary(t *testing.T) {
	dir := importExternal(t, "codex", "madshn-localpush", "rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl")
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	prev, err := g.S.Node(g.ActiveSummary())
	g.S.Close()
	if err != nil {
		t.Fatal(err)
	}
	prevText := strings.TrimSpace(strings.TrimPrefix(prev.Content.PlainText(), transcript.SummaryPrefix))
	o := opts(dir, summarize.Extractive{}, 500)
	o.Estimate.Window = 200_000 // gpt-5.3-codex is not in the model table
	res, err := Compact(context.Background(), o)
	if err != nil || res.Outcome != OutcomeSucceeded {
		t.Fatalf("compact: %v %+v", err, res)
	}
	text := sessiontest.StoredNode(t, dir, res.SummaryID).Content.PlainText()
	if !strings.Contains(text, "## Earlier state\n"+prevText+"\n") || !strings.Contains(text, "## Objective\n") {
		t.Errorf("the new summary does not carry Codex's summary whole under an objective:\n%.600s", text)
	}
}

// A real claude-code-log style session: its turns open with a slash
// command's wrapper and an isMeta expansion. Neither is the objective; the
// command the user typed is.
func TestMetaLinesNeverBecomeTheObjective(t *testing.T) {
	for _, f := range []string{"1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"} {
		dir := importExternal(t, "claude-code", "d-kimuson-claude-code-viewer", f)
		g, err := dag.Open(dir, store.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var nodes []*transcript.Node
		for _, i := range g.Spine(g.Head()) {
			n, err := g.S.Node(i)
			if err != nil {
				t.Fatal(err)
			}
			nodes = append(nodes, n)
		}
		g.S.Close()
		text, err := summarize.Extractive{}.Summarize(context.Background(), summarize.Request{Nodes: nodes, MaxTokens: 2000})
		if err != nil {
			t.Fatal(err)
		}
		obj, _, _ := strings.Cut(strings.TrimPrefix(text, "## Objective\n"), "\n")
		if !strings.HasPrefix(text, "## Objective\n") || !strings.HasPrefix(obj, "/") || strings.Contains(obj, "<") || strings.Contains(obj, "Caveat") {
			t.Errorf("%s: objective %q", f, obj)
		}
		if strings.Contains(text, "<command-") || strings.Contains(text, "Caveat: The messages below") {
			t.Errorf("%s: a meta line reached the summary:\n%s", f, text)
		}
	}
}

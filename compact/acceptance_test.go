package compact

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/audit"
	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/summarize"
)

// Issue 25's acceptance, as scripts/audit-table.sh measures it for
// docs/COMPACT.md §7: on every shared real transcript and every
// real-client recording, compacted with the extractive summarizer at
// default settings and with --keep-tokens 500, every kind of fact
// survives at ≥ 95%, compact's reported survival is audit's, and a summary
// past its cap reports the growth.
func TestEveryRealTranscriptKeeps95PercentOfEveryKind(t *testing.T) {
	sessiontest.Long(t, "the fact-survival acceptance over every real transcript")
	var files []string
	root := filepath.Dir(sessiontest.External(t, "MANIFEST.md"))
	recordings := filepath.Join(sessiontest.FixturesDir(), "..", "testdata", "interop")
	client := regexp.MustCompile(`(/transcript/[^/]+\.jsonl|/rollout-[^/]+\.jsonl|/chats/session-[^/]+\.jsonl)$`)
	for _, dir := range []string{root, recordings} {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.Contains(p, "/subagents/") {
				return err
			}
			if (dir == root && (strings.HasSuffix(p, ".jsonl") || strings.HasSuffix(p, ".json"))) || (dir == recordings && client.MatchString(p)) {
				files = append(files, p)
			}
			return nil
		})
	}
	if len(files) < 20 {
		t.Fatalf("only %d transcripts found", len(files))
	}
	compacted := 0
	for _, f := range files {
		for _, keep := range []int{0, 500} {
			out := filepath.Join(t.TempDir(), "s")
			if _, err := importer.Import(context.Background(), importer.Options{From: importer.Auto, Files: []string{f}, Out: out}); err != nil {
				continue // not a session (a sub-agent file, a chats index)
			}
			o := opts(out, summarize.Extractive{}, keep)
			o.Estimate = estimate.Options{NoCache: true, Window: 200_000}
			res, err := Compact(context.Background(), o)
			if err != nil {
				t.Errorf("%s keep %d: %v", f, keep, err)
				continue
			}
			if res.Outcome != OutcomeSucceeded {
				continue
			}
			compacted++
			checkSurvival(t, f, keep, out, res)
		}
	}
	// marot twice, madshn, the recordings with something to fold
	// (docs/COMPACT.md §7 lists them).
	if compacted < 10 {
		t.Errorf("only %d compactions had something to fold", compacted)
	}
	t.Logf("%d transcripts, %d compactions audited", len(files), compacted)
}

func checkSurvival(t *testing.T, f string, keep int, dir string, res *Result) {
	t.Helper()
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	rs, err := audit.Run(context.Background(), g, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range audit.Kinds {
		kr := rs[0].Kind(k)
		if kr.SurvivalPct < 95 {
			t.Errorf("%s keep %d: %s %d/%d; missing %v", f, keep, k, kr.Kept, kr.Total, kr.Missing)
		}
		if got := res.Survival.Kinds[string(k)]; got.Kept != kr.Kept || got.Total != kr.Total {
			t.Errorf("%s keep %d: %s reported %d/%d, audit %d/%d", f, keep, k, got.Kept, got.Total, kr.Kept, kr.Total)
		}
	}
	if res.SummaryTokens > res.SummaryCap && res.Growth() != res.SummaryTokens-res.SummaryCap {
		t.Errorf("%s keep %d: growth not reported", f, keep)
	}
	_ = os.RemoveAll(dir)
}

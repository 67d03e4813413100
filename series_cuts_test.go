package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/store"
)

// estimate.Series, which `ctxfold report` draws, gives at every recorded
// request the figure the accuracy check measures by rendering and
// counting the cut (cutSamples): same request, same recorded input, same
// calibrated prediction. The spotter session always; with CTXFOLD_LONG
// every shared real transcript and recording of the check.
func TestSeriesMatchesCuts(t *testing.T) {
	files := accuracyCutFiles(t)
	if !sessiontest.LongRun() {
		var keep []cutFile
		for _, f := range files {
			if strings.Contains(f.name, "marot-spotter") && !strings.Contains(f.name, "/subagents/") {
				keep = append(keep, f)
			}
		}
		files = keep
	}
	if len(files) == 0 {
		t.Fatal("no transcript to check")
	}
	ctx := context.Background()
	checked := 0
	for _, f := range files {
		out := filepath.Join(t.TempDir(), "s")
		rep, err := importer.Import(ctx, importer.Options{From: importer.Auto, Files: []string{f.path}, Out: out})
		if err != nil {
			t.Fatalf("%s: import: %v", f.name, err)
		}
		for _, s := range rep.Sessions {
			cuts := cutSamples(t, ctx, s.Dir, f.name)
			if len(cuts) == 0 {
				continue
			}
			series := sessionSeries(t, ctx, s.Dir)
			if len(series) != len(cuts)+1 {
				t.Fatalf("%s: %d points in the series, %d cuts (+1 for the first request)", f.name, len(series), len(cuts))
			}
			for _, c := range cuts {
				p := series[c.k-1]
				checked++
				if p.Node == c.node && p.Recorded == c.measured && p.Estimated == c.predicted && p.Calibrated {
					continue
				}
				// The one known difference: the first request after a
				// compaction that a later one superseded. The cut renders
				// the whole session's graph at the request's predecessor,
				// where the later summary is the active one and the view
				// is raw; the series uses the view the request read, with
				// the summary then in force (matchRequests), and must be
				// at least as close to the recorded input.
				if p.Node == c.node && p.Recorded == c.measured && p.AfterCompaction && abs64(int64(p.Estimated)-c.measured) <= abs64(int64(c.predicted)-c.measured) {
					t.Logf("%s request %d: series %d, cut %d (raw view), recorded %d", f.name, c.k, p.Estimated, c.predicted, c.measured)
					continue
				}
				t.Errorf("%s request %d: series %+v, cut node %s recorded %d predicted %d", f.name, c.k, p, c.node, c.measured, c.predicted)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no request compared")
	}
	t.Logf("%d requests compared", checked)
}

func sessionSeries(t *testing.T, ctx context.Context, dir string) []estimate.SeriesPoint {
	t.Helper()
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	o := estimate.Options{Model: g.S.Meta.Model, RecordedWindow: estimate.RecordedWindow(g.S.Meta), NodeDetail: true}
	if _, ok := estimate.ResolveModel(o.Model, nil); !ok && o.RecordedWindow == 0 {
		o.Window = 1000000
	}
	v, err := render.Build(g, "", false)
	if err != nil {
		t.Fatal(err)
	}
	res, err := estimate.View(ctx, v, o)
	if err != nil || res.Calibration == nil {
		t.Fatalf("estimate: %v (calibration %v)", err, res)
	}
	return res.Calibration.Series()
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

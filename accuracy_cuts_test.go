package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/store"
)

// The pooled next-request check of docs/ACCURACY.md ("Every cut, pooled"):
// every recorded request k ≥ 2 of every shared real transcript and every
// real-client recording in testdata/interop, the calibrated total of the
// view request k read (`estimate --head <its predecessor>`, calibrated on
// requests 1…k−1) against the provider's recorded input. Pooled median
// ≤ 0.15%, p90 ≤ 1%, no request off by more than 10% but the exceptions
// listed (cutExceptions, with why), and every first request after a
// compaction within 5%. CTXFOLD_ACCURACY_CUTS_TABLE=FILE writes the table,
// CTXFOLD_ACCURACY_CUTS_DUMP=FILE every pooled request's error.

// cutSample is one predicted request.
type cutSample struct {
	file, node    string
	k             int
	measured      int64
	predicted     int
	err           float64
	afterCompact  bool
	fromSubagent  bool
	basisCompacts bool
}

// cutExceptions are the requests no estimate from the transcript can
// reach, by file and node, with the reason (docs/ACCURACY.md).
var cutExceptions = map[string]string{
	"claude-code/marot-spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl#1e530b95-af80-4a6e-a749-f397fdc1b496": "" +
		"the first request after Claude Code's compaction: its SessionStart:compact hooks ran (bd prime among them; hook_progress lines, without their output) and their context, " +
		"about 3.9k tokens more than the prefix and the summary, is in the request but not in the transcript",
	"interop/codex/0.169.0/compaction/rollout-2026-01-01T00-00-00-00000000-0000-7000-8000-000000000001.jsonl#cx00000001-26": "" +
		"the first request after Codex's compaction, anchored on the client's prefix inferred from request 1, for which the fake provider reported 900,000 input tokens " +
		"([[inflate]], to push Codex into its compaction); the compaction-limit recording, whose usage counts the requests, is within 1%",
}

// cutExcluded says why a whole file's usage measures something else than
// the estimator: it is reported, not pooled.
func cutExcluded(file string) string {
	switch {
	case strings.Contains(file, "madshn-localpush"):
		return "redacted by its publisher: every text is a placeholder, the usage is the original's"
	case strings.HasPrefix(file, "interop/qwen-code/") && strings.Contains(file, "/compression/"):
		return "the fake reported 900,000 input tokens for request 1 ([[inflate]]) to push Qwen Code into its automatic compression: the recording's usage measures no content (the /compress recording covers the request after a compression)"
	case strings.HasPrefix(file, "interop/claude-code/") && strings.Contains(file, "/model-switch/"):
		return "a /model recording, an import oracle (TestOracleModelSwitch): the fake's usage is a quarter of the body's bytes, the same for " +
			"either model's tokenizer, and the client re-lays the request after the switch, which render does not follow yet (docs/INTEROP-claude-code.md, \"A model switch\")"
	case strings.HasPrefix(file, "interop/gemini-cli/"):
		return "the fake Gemini provider reports 100 tokens a message and 10 a part, not a count of the content"
	case strings.HasPrefix(file, "interop/claude-code/") && !strings.HasPrefix(file, "interop/claude-code/2.1.328/"),
		strings.HasPrefix(file, "interop/codex/") && !strings.HasPrefix(file, "interop/codex/0.169.0/"):
		return "the pinned client's scenarios recorded again with a newer client: reported, not pooled, so no scenario counts twice"
	}
	return ""
}

func TestAccuracyEveryCut(t *testing.T) {
	sessiontest.Long(t, "the next-request check at every recorded request, pooled")
	files := accuracyCutFiles(t)
	ctx := context.Background()
	var all []cutSample
	perFile := map[string][]cutSample{}
	for _, f := range files {
		out := filepath.Join(t.TempDir(), "s")
		rep, err := importer.Import(ctx, importer.Options{From: importer.Auto, Files: []string{f.path}, Out: out})
		if err != nil {
			t.Fatalf("%s: import: %v", f.name, err)
		}
		for _, s := range rep.Sessions {
			got := cutSamples(t, ctx, s.Dir, f.name)
			perFile[f.name] = append(perFile[f.name], got...)
			if cutExcluded(f.name) == "" {
				all = append(all, got...)
			}
		}
	}
	if len(all) == 0 {
		t.Fatal("no recorded requests")
	}
	if p := os.Getenv("CTXFOLD_ACCURACY_CUTS_DUMP"); p != "" {
		// Every pooled request, one a line: error, file, request, recorded, predicted, node.
		var b strings.Builder
		for _, s := range all {
			fmt.Fprintf(&b, "%.5f\t%s\t%d\t%d\t%d\t%s\n", s.err, s.file, s.k, s.measured, s.predicted, s.node)
		}
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	table := cutTable(files, perFile, all)
	t.Log("\n" + table)
	if p := os.Getenv("CTXFOLD_ACCURACY_CUTS_TABLE"); p != "" {
		if err := os.WriteFile(p, []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var errs, recorded []float64
	for _, s := range all {
		if _, ok := cutExceptions[s.file+"#"+s.node]; ok {
			continue
		}
		if looRecording(s.file) {
			recorded = append(recorded, s.err)
		} else {
			errs = append(errs, s.err)
		}
	}
	med, p90 := quantile(errs, 0.5), quantile(errs, 0.9)
	// The targets, held on the shared real transcripts; the recordings'
	// usage is the fake's unit, reported and guarded as in the
	// leave-one-out check (looRecording; docs/ACCURACY.md).
	if med > 0.0015 || p90 > 0.01 {
		t.Errorf("pooled next-request error over %d requests of the real transcripts: median %.3f%%, p90 %.3f%%; want ≤ 0.15%% and ≤ 1%%", len(errs), 100*med, 100*p90)
	}
	if med, p90 := quantile(recorded, 0.5), quantile(recorded, 0.9); med > 0.01 || p90 > 0.05 {
		t.Errorf("the recordings' next-request error over %d requests: median %.2f%%, p90 %.2f%%; the guard is ≤ 1%% and ≤ 5%%", len(recorded), 100*med, 100*p90)
	}
	for _, s := range all {
		if why, ok := cutExceptions[s.file+"#"+s.node]; ok {
			t.Logf("exception: %s request %d: %.1f%%: %s", s.file, s.k, 100*s.err, why)
			continue
		}
		if s.err > 0.10 {
			t.Errorf("%s request %d (%s): predicted %d, recorded %d (%.1f%%)", s.file, s.k, s.node, s.predicted, s.measured, 100*s.err)
		}
		if s.afterCompact && s.err > 0.05 {
			t.Errorf("%s request %d (%s), the first after a compaction: predicted %d, recorded %d (%.1f%%)", s.file, s.k, s.node, s.predicted, s.measured, 100*s.err)
		}
	}
}

type cutFile struct{ name, path string }

// accuracyCutFiles lists the shared real transcripts and the real-client
// recordings' transcripts (not the request bodies beside them).
func accuracyCutFiles(t *testing.T) []cutFile {
	var files []cutFile
	root := sessiontest.External(t)
	walk := func(root, prefix string, keep func(string) bool) {
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && keep(p) {
				rel, _ := filepath.Rel(root, p)
				files = append(files, cutFile{prefix + rel, p})
			}
			return nil
		})
	}
	walk(root, "", func(p string) bool { return strings.HasSuffix(p, ".jsonl") || strings.HasSuffix(p, ".json") })
	walk("testdata/interop", "interop/", func(p string) bool {
		base := filepath.Base(p)
		switch {
		case strings.Contains(p, "/claude-code/"):
			return strings.Contains(p, "/transcript/") && strings.HasSuffix(p, ".jsonl")
		case strings.Contains(p, "/codex/"):
			return strings.HasPrefix(base, "rollout-") && strings.HasSuffix(p, ".jsonl")
		case strings.Contains(p, "/gemini-cli/"):
			return strings.Contains(p, "/chats/") && strings.HasSuffix(p, ".jsonl")
		case strings.Contains(p, "/qwen-code/"):
			return strings.Contains(p, "/chats/") && strings.HasSuffix(p, ".jsonl")
		case strings.Contains(p, "/copilot/"):
			return base == "events.jsonl"
		}
		return false
	})
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	return files
}

// cutSamples predicts every recorded request k ≥ 2 of the session in dir.
func cutSamples(t *testing.T, ctx context.Context, dir, name string) []cutSample {
	t.Helper()
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer g.S.Close()
	o := estimate.Options{Model: g.S.Meta.Model, RecordedWindow: estimate.RecordedWindow(g.S.Meta), NodeDetail: true}
	if _, ok := estimate.ResolveModel(o.Model, nil); !ok && o.RecordedWindow == 0 {
		o.Window = 1000000 // a session that records no model: only the counts matter here
	}
	measure := func(head string, raw bool) *estimate.Result {
		v, err := render.Build(g, head, raw)
		if err != nil {
			t.Fatalf("%s: render --head %s: %v", name, head, err)
		}
		oo := o
		oo.NodeDetail = head == ""
		res, err := estimate.View(ctx, v, oo)
		if err != nil {
			t.Fatalf("%s: estimate --head %s: %v", name, head, err)
		}
		return res
	}
	full := measure("", false)
	if full.Calibration == nil {
		return nil
	}
	hist := full.Calibration.History
	// The summary in force at each node: the latest one earlier in the file.
	inForce := make([]int, g.S.Len())
	latest := -1
	for i := range g.S.Len() {
		if g.S.IsSummary(i) {
			latest = i
		}
		inForce[i] = latest
	}
	var out []cutSample
	for k := 1; k < len(hist); k++ {
		i, _ := g.Lookup(hist[k].Node)
		prev, _ := g.Lookup(hist[k-1].Node)
		p := g.Pred(i)
		if p < 0 {
			continue
		}
		// The file cut before request k holds no summary written after it:
		// the view is raw when the session's summary came later.
		sum := g.Substitute(g.Spine(p)).Summary
		res := measure(g.ID(p), sum > i)
		if res.Calibration == nil {
			t.Fatalf("%s: request %d: no calibration", name, k+1)
		}
		m := hist[k].Measured
		pred := res.Calibration.CalibratedTotal
		out = append(out, cutSample{file: name, node: hist[k].Node, k: k + 1, measured: m, predicted: pred,
			err: math.Abs(float64(pred)-float64(m)) / float64(m), afterCompact: inForce[i] != inForce[prev],
			fromSubagent: strings.Contains(name, "/subagents/")})
	}
	return out
}

func cutTable(files []cutFile, perFile map[string][]cutSample, all []cutSample) string {
	var b strings.Builder
	pct := func(x float64) string { return fmt.Sprintf("%.2f%%", 100*x) }
	stats := func(ss []cutSample) (med, p90, worst float64) {
		errs := make([]float64, len(ss))
		for i, s := range ss {
			errs[i] = s.err
			worst = math.Max(worst, s.err)
		}
		return quantile(errs, 0.5), quantile(errs, 0.9), worst
	}
	b.WriteString("| transcript | predicted requests | median | p90 | worst |\n|---|---|---|---|---|\n")
	var excluded []cutSample
	for _, f := range files {
		ss := perFile[f.name]
		if len(ss) == 0 {
			continue
		}
		med, p90, worst := stats(ss)
		name := f.name
		if why := cutExcluded(f.name); why != "" {
			name += " (not pooled: " + why + ")"
			excluded = append(excluded, ss...)
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s |\n", name, len(ss), pct(med), pct(p90), pct(worst))
	}
	var pooled []cutSample
	for _, s := range all {
		if _, ok := cutExceptions[s.file+"#"+s.node]; !ok {
			pooled = append(pooled, s)
		}
	}
	med, p90, worst := stats(pooled)
	fmt.Fprintf(&b, "| **pooled** (without the exceptions below) | %d | %s | %s | %s |\n", len(pooled), pct(med), pct(p90), pct(worst))
	var real, recorded []cutSample
	for _, s := range pooled {
		if strings.HasPrefix(s.file, "interop/") {
			recorded = append(recorded, s)
		} else {
			real = append(real, s)
		}
	}
	med, p90, worst = stats(real)
	fmt.Fprintf(&b, "| of which the shared real transcripts | %d | %s | %s | %s |\n", len(real), pct(med), pct(p90), pct(worst))
	med, p90, worst = stats(recorded)
	fmt.Fprintf(&b, "| of which the real-client recordings (fake providers' usage) | %d | %s | %s | %s |\n", len(recorded), pct(med), pct(p90), pct(worst))
	med, p90, worst = stats(all)
	fmt.Fprintf(&b, "| pooled with the exceptions | %d | %s | %s | %s |\n", len(all), pct(med), pct(p90), pct(worst))
	med, p90, worst = stats(append(append([]cutSample(nil), all...), excluded...))
	fmt.Fprintf(&b, "| pooled with the exceptions and the files not pooled | %d | %s | %s | %s |\n", len(all)+len(excluded), pct(med), pct(p90), pct(worst))
	b.WriteString("\n| first request after a compaction | request | recorded | predicted | error |\n|---|---|---|---|---|\n")
	for _, s := range append(all, excluded...) {
		if s.afterCompact {
			fmt.Fprintf(&b, "| %s | %d | %d | %d | %s |\n", s.file, s.k, s.measured, s.predicted, pct(s.err))
		}
	}
	b.WriteString("\n| request off by more than 10% | request | recorded | predicted | error |\n|---|---|---|---|---|\n")
	for _, s := range all {
		if s.err > 0.10 {
			fmt.Fprintf(&b, "| %s | %d | %d | %d | %s |\n", s.file, s.k, s.measured, s.predicted, pct(s.err))
		}
	}
	b.WriteString("\n| exception | request | why |\n|---|---|---|\n")
	for _, s := range all {
		if why, ok := cutExceptions[s.file+"#"+s.node]; ok {
			fmt.Fprintf(&b, "| %s | %d | %s |\n", s.file, s.k, why)
		}
	}
	return b.String()
}

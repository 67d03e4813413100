package main

import (
	"bytes"
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
	"github.com/ctxfold/ctxfold/live"
	"github.com/ctxfold/ctxfold/projectprefix"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// The leave-one-out check of docs/ACCURACY.md ("Leave one session out",
// issue 41): every recorded request of every real transcript the
// repository tests with — the shared real transcripts and the real-client
// recordings in testdata/interop — predicted as `estimate` would at the
// cut just before its reply (estimate.Series, which TestSeriesMatchesCuts
// ties to the cut), the first request included, with a calibration that
// never saw the session: the session's own earlier requests, and nothing
// fitted on it. Per session: median, p90, worst and the first three
// requests; pooled: median and p90 of the requests after the first.
//
// Targets (issue 41): per session median ≤ 1%, p90 ≤ 5%, each of the first
// three requests within 5%; pooled median ≤ 0.15%, p90 ≤ 1%. A session's
// miss is either an exception (looExcluded: its usage measures something
// else than the view) or a known miss (looKnownMisses: not met, with why);
// the test fails on any other miss, so a regression cannot hide.
//
// CTXFOLD_ACCURACY_LOO_TABLE=FILE writes the table (scripts/accuracy-loo.sh).
// CTXFOLD_ACCURACY_HELDOUT=DIR adds every transcript under DIR as a
// held-out session ("heldout/…"): reported in the table and pooled apart,
// fitted on nothing (the prior slope is the shared transcripts'), held to
// no target (public transcripts outside the repository, read in place;
// docs/ACCURACY.md names the ones measured).

// looSession is one session's left-out figures.
type looSession struct {
	name string
	errs []float64 // per recorded request, in spine order (request 1 first)
	// first are the first three requests' errors (fewer in a shorter session).
	first []float64
	// prior says how request 1 was predicted (estimate.Series).
	prior string
	// hist is the recorded requests; firstPred request 1's prediction
	// (looFirst); slope the prior slope estimate gives the session's model
	// (estimate.PriorSlope), which the check replaces by the slope fitted
	// on the other sessions (looSlopes).
	hist      []estimate.MatchedRequest
	firstPred int
	slope     float64
	used      float64 // the prior slope the check used
	rate      float64 // the prior framing rate the check used (looFramingRates)
	sigs      looSignatures
}

func TestAccuracyLeaveOneOut(t *testing.T) {
	sessiontest.Long(t, "the leave-one-out accuracy check over every real transcript and recording")
	ctx := context.Background()
	var sessions []looSession
	for _, f := range append(looFiles(t), looHeldOut(t)...) {
		out := filepath.Join(t.TempDir(), "s")
		rep, err := importer.Import(ctx, importer.Options{From: importer.Auto, Files: []string{f.path}, Out: out})
		if err != nil && looHeld(f.name) {
			t.Logf("%s: not measured: %v", f.name, err) // a held-out file with no message (a title alone)
			continue
		}
		if err != nil {
			t.Fatalf("%s: import: %v", f.name, err)
		}
		for _, s := range rep.Sessions {
			if ls, ok := looOf(t, ctx, s.Dir, f.name, f.path, len(rep.Sessions) == 1); ok {
				sessions = append(sessions, ls)
			}
		}
	}
	if len(sessions) == 0 {
		t.Fatal("no session with recorded usage")
	}
	slopes, all := looSlopes(sessions)
	if got := all[estimate.ClaudeProxySlope]; math.Abs(got-estimate.ClaudeProxySlope) > 0.0005 {
		t.Errorf("the pooled slope of the shared Claude Code transcripts is %.4f: estimate.ClaudeProxySlope is %.4f", got, estimate.ClaudeProxySlope)
	}
	rates, allRates := looFramingRates(sessions)
	for slope, want := range map[float64]float64{estimate.ClaudeProxySlope: estimate.ClaudeFramingRate, 1: estimate.OtherFramingRate} {
		if math.Abs(allRates[slope]-want) > 0.0005 {
			t.Errorf("the pooled framing rate of the shared real transcripts (prior slope %v) is %.4f: the constant is %.4f", slope, allRates[slope], want)
		}
	}
	// Claude Opus 4.7's tokenizer: pooled over held-out sessions only
	// (no shared transcript is of such a model), reported.
	if got, ok := all[estimate.ClaudeV47ProxySlope]; ok {
		t.Logf("held-out sessions of Claude Opus 4.7's tokenizer, pooled: slope %.4f (estimate.ClaudeV47ProxySlope %.4f), framing rate %.4f (estimate.ClaudeV47FramingRate %.4f)",
			got, estimate.ClaudeV47ProxySlope, allRates[estimate.ClaudeV47ProxySlope], estimate.ClaudeV47FramingRate)
	}
	looLogSignatures(t, sessions)
	for k := range sessions {
		looPredict(&sessions[k], slopes[sessions[k].name], rates[sessions[k].name])
	}
	table, pooled := looTable(sessions)
	t.Log("\n" + table)
	if p := os.Getenv("CTXFOLD_ACCURACY_LOO_TABLE"); p != "" {
		if err := os.WriteFile(p, []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range sessions {
		if looExcluded(s.name) != "" || looHeld(s.name) || looRecording(s.name) {
			continue
		}
		misses, why := looMisses(s), looKnownMisses[s.name]
		switch {
		case len(misses) > 0 && why == "":
			t.Errorf("%s: %s", s.name, strings.Join(misses, "; "))
		case len(misses) > 0:
			t.Logf("known miss (not met): %s: %s: %s", s.name, strings.Join(misses, "; "), why)
			// A listed miss is request 1's — what the setup added and the
			// transcript lacks (issue 41's exceptions) — and nothing else:
			// with request 1 exact, the session meets every target.
			if rest := looMisses(looWithExactFirst(s)); len(rest) > 0 {
				t.Errorf("%s: listed for request 1, but with request 1 exact it still misses: %s", s.name, strings.Join(rest, "; "))
			}
		case why != "":
			t.Errorf("%s meets every target: take it off looKnownMisses", s.name)
		}
	}
	// The shared Claude Code transcripts' request 1 is predicted with the
	// prior of the version that wrote them, in the setup they show: the
	// default-mode recordings of those versions (scripts/record-priors.sh).
	for _, s := range sessions {
		if strings.HasPrefix(s.name, "claude-code/") && looExcluded(s.name) == "" && !strings.HasPrefix(s.prior, estimate.MethodProject+":") &&
			(!strings.Contains(s.prior, " default; ") || strings.Contains(s.prior, "version")) {
			t.Errorf("%s: request 1 from %q, want the project's earlier session or the default-mode prior of its own client version", s.name, s.prior)
		}
	}
	if pooled.median > 0.0015 || pooled.p90 > 0.01 {
		t.Errorf("pooled next-request error over %d requests: median %.3f%%, p90 %.3f%%; want ≤ 0.15%% and ≤ 1%%", pooled.n, 100*pooled.median, 100*pooled.p90)
	}
	// The recordings' usage is the fake's unit, held to no token target;
	// a render or import regression still shows in it (looRecordingGuard).
	if rec := looRecordingStats(sessions); rec.median > 0.01 || rec.p90 > 0.05 {
		t.Errorf("the recordings' next-request error over %d requests: median %.2f%%, p90 %.2f%%; the guard is ≤ 1%% and ≤ 5%%", rec.n, 100*rec.median, 100*rec.p90)
	}
}

// looMisses lists the targets s misses. A recording's request 1 is not
// held (looFakeFirst): its targets are held on the requests after it.
func looMisses(s looSession) []string {
	var out []string
	errs, first, from := s.errs, s.first, 1
	if strings.HasPrefix(s.name, "interop/") {
		errs, first, from = errs[1:], first[1:], 2
		if len(errs) == 0 {
			return nil
		}
	}
	med, p90 := quantile(append([]float64(nil), errs...), 0.5), quantile(append([]float64(nil), errs...), 0.9)
	if med > 0.01 {
		out = append(out, fmt.Sprintf("median %.2f%% > 1%%", 100*med))
	}
	if p90 > 0.05 {
		out = append(out, fmt.Sprintf("p90 %.2f%% > 5%%", 100*p90))
	}
	for k, e := range first {
		if e > 0.05 {
			out = append(out, fmt.Sprintf("request %d off by %.2f%% > 5%%", k+from, 100*e))
		}
	}
	return out
}

// looWithExactFirst is s with request 1 predicted exactly.
func looWithExactFirst(s looSession) looSession {
	s.errs = append([]float64{0}, s.errs[1:]...)
	s.first = append([]float64{0}, s.first[1:]...)
	return s
}

// looExcluded says why a session's usage measures something else than the
// view it answered: reported, neither pooled nor held to the targets.
func looExcluded(name string) string {
	if why := cutExcluded(name); why != "" && !looDuplicate(name) {
		return why
	}
	switch {
	case strings.HasPrefix(name, "gemini-cli/jazzyalex-agent-sessions/"):
		return "a SYNTHETIC schema fixture (MANIFEST.md): its usage is made up"
	case strings.Contains(name, "/subagents/agent-acompact-"):
		return "Claude Code's compaction summariser: its one request read the main chain's whole history, of which the file holds a few lines"
	case strings.HasPrefix(name, "interop/pi/") && strings.Contains(name, "/compaction"),
		strings.HasPrefix(name, "interop/codex/") && strings.Contains(name, "/compaction/"):
		return "the fake reported 900,000 input tokens ([[inflate]]) to push the client into its compaction: those requests' usage measures no content"
	}
	return ""
}

// looDuplicate says the session is a pinned client's scenario recorded
// again with a newer client: held to the targets, not pooled, so no
// scenario counts twice.
func looDuplicate(name string) bool {
	return strings.Contains(cutExcluded(name), "recorded again with a newer client")
}

// looFakeFirst is why a recording's request 1 is reported, not held.
const looFakeFirst = "the fake providers' usage is a quarter of the request body's bytes (JSON keys and escapes included), not a count of tokens: " +
	"no token count meets it before a request has been recorded (from request 2 the offset carries the difference)"

// looKnownMisses are the sessions that miss a target today, with why:
// NOT met (docs/ACCURACY.md, "Leave one session out"). The test fails on
// a miss not listed here, and on a listed session that meets every target.
var looKnownMisses = map[string]string{
	"claude-code/d-kimuson-claude-code-viewer/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl": "request 1 (14.75%; with 7 requests also the p90): " +
		"the project's first session (5c0375b4 started four days later: no earlier session to learn from), so Claude Code 1.0.98's default-mode prior (12,885); " +
		"this one read 15,553 for a 374-token view: " + looUserPrefix,
	"claude-code/d-kimuson-claude-code-viewer/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl": "request 1 (13.92%): predicted from the first request of the project's earlier session (1af7fc5e, four days before: 15,179 beside its view); " +
		"this one read 18,768: " + looUserPrefix + ", and it changed between the two days",
	"claude-code/marot-spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl": "request 1 (36.15%): the prior is Claude Code 2.1.39's default mode (16,514: 17 default tools); " +
		"the request read 25,882, about 9,500 beyond it: three SessionStart hooks ran (the file's progress lines name them, `bd prime` and a plugin's among them) and a plugin was installed; " +
		looUserPrefix,
	"claude-code/marot-spotter/258c7280-ae70-4798-800f-63464d01a85d/subagents/agent-a881341.jsonl": "request 1 (15.91%): the prior is Claude Code 2.1.39's default-mode sub-agent (10,098: its 11 tools); " +
		"the request read 12,121, about 1,900 beyond it: " + looUserPrefix + "; with 3 requests, request 3 (2.20%) is its median: " +
		"its step adds 17,110 tokens (as o200k counts them) that Claude's tokenizer counted at 1.18× o200k, where the one step before it was 1.12×: the proxy's rate depends on the content; " +
		"the median of three is the middle one (requests 2 and 3: 0.49%, 2.20%), so with request 1 within 1% it would be at most 1%: the median's miss is request 1's",
	"codex/AcidicSoil-codex-session-view/rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl": "request 1 (69.93%): the prior is Codex 0.58.0's default mode (2,907: its instructions and 7 tools, the same with the rollout's model gpt-5.1-codex); " +
		"the request read 10,128 for a view of about 140 tokens: the other 7,100 are nothing the client sends by default nor the rollout records — likely MCP tools: " +
		"the ghost snapshot lists the project's untracked .browser-echo-mcp.json, a browser MCP server's configuration, and Codex 0.58.0 records no tool list",
}

const (
	looUserPrefix = "what the user's setup added and the transcript never records — CLAUDE.md, the project's git status in the system prompt, MCP tools, hook output " +
		"(docs/ACCURACY.md, \"The prior\"; the status line's remembered prefix holds it)"
)

// looHeldOut lists the transcripts under CTXFOLD_ACCURACY_HELDOUT.
func looHeldOut(t *testing.T) []cutFile {
	root := os.Getenv("CTXFOLD_ACCURACY_HELDOUT")
	if root == "" {
		return nil
	}
	var files []cutFile
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			rel, _ := filepath.Rel(root, p)
			files = append(files, cutFile{"heldout/" + filepath.ToSlash(rel), p})
		}
		return err
	})
	if err != nil || len(files) == 0 {
		t.Fatalf("CTXFOLD_ACCURACY_HELDOUT=%s: no transcript (%v)", root, err)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	return files
}

// looWorstLater is the index of the worst error after request 1, 0 for
// a session of one request.
func looWorstLater(errs []float64) int {
	w := 0
	for k := 1; k < len(errs); k++ {
		if w == 0 || errs[k] > errs[w] {
			w = k
		}
	}
	return w
}

// looHeld says the session is a held-out one (CTXFOLD_ACCURACY_HELDOUT).
func looHeld(name string) bool { return strings.HasPrefix(name, "heldout/") }

// looRecording says name is a real client's recording against a fake
// provider (testdata/interop), whose usage is a quarter of the request
// body's bytes (looFakeFirst): reported, held to no token target. The
// calibration's priors come from real providers' usage ("The prior framing
// rate": a real Claude tool call's framing is about twelve counted framing
// tokens, the fake's two to five), so the fake's figures measure the unit.
func looRecording(name string) bool { return strings.HasPrefix(name, "interop/") }

// looRecordingStats is the recordings' requests after the first, pooled:
// the guard that a render or import regression (content lost, doubled)
// still fails the check though no token target holds them.
func looRecordingStats(sessions []looSession) looStats {
	var errs []float64
	for _, s := range sessions {
		if looRecording(s.name) && looExcluded(s.name) == "" && !looDuplicate(s.name) {
			errs = append(errs, s.errs[1:]...)
		}
	}
	return looStatsOf(errs)
}

// looFiles is every transcript the accuracy checks read: the cut check's
// files (accuracyCutFiles) and the other clients' recordings.
func looFiles(t *testing.T) []cutFile {
	files := accuracyCutFiles(t)
	more, _ := filepath.Glob("testdata/interop/pi/*/*/session.jsonl")
	droid, _ := filepath.Glob("testdata/interop/droid/*/*/*-*-*-*-*.jsonl")
	more = append(more, droid...)
	for _, p := range more {
		files = append(files, cutFile{"interop/" + strings.TrimPrefix(p, "testdata/interop/"), p})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	return files
}

// looOf predicts every recorded request of the session in dir, imported
// from path (alone: the file's only session); false when it recorded no
// usage.
func looOf(t *testing.T, ctx context.Context, dir, name, path string, alone bool) (looSession, bool) {
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
	v, err := render.Build(g, "", false)
	if err != nil {
		t.Fatalf("%s: render: %v", name, err)
	}
	res, err := estimate.View(ctx, v, o)
	if err != nil {
		t.Fatalf("%s: estimate: %v", name, err)
	}
	if res.Calibration == nil || len(res.Calibration.History) == 0 {
		return looSession{}, false
	}
	ls := looSession{name: name, hist: res.Calibration.History, slope: res.Calibration.PriorSlope}
	nodes, err := v.LoadNodes()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	ls.sigs = looSignaturesOf(t, nodes)
	ls.firstPred, ls.prior = looFirst(t, ctx, g, o, looTarget{name: name, path: path, dir: dir, alone: alone}, estimate.Series(ls.hist)[0])
	return ls, true
}

// looPredict fills ls's errors: request 1 from looFirst, each later one
// from the requests before it, with slope as the prior slope (1 for a
// model estimate gives none) and rate as the prior framing rate.
func looPredict(ls *looSession, slope, rate float64) {
	if ls.slope == 0 || ls.slope == 1 {
		slope = 1
	} else if slope == 0 {
		slope = ls.slope // nothing else pools with it: the product's prior
	}
	ls.used, ls.rate = slope, rate
	series := estimate.SeriesWithPrior(ls.hist, -1, estimate.Priors{Slope: slope, FramingRate: rate})
	series[0].Estimated = ls.firstPred
	for k, p := range series {
		e := math.Abs(float64(p.Estimated)-float64(p.Recorded)) / float64(p.Recorded)
		ls.errs = append(ls.errs, e)
		if k < 3 {
			ls.first = append(ls.first, e)
		}
	}
}

// looSlopes is, for every session whose model has a prior slope, the
// slope pooled over the other sessions of its group (looGroup: the
// sessions that pool one prior): the least-squares slope through the
// origin of each step's recorded growth (less the hidden output it
// carried, estimate.WithoutCarried) on its estimated growth, steps across
// a compaction left out, as the fit does; a held-out session leaves out
// its whole project (looProject). all is the slope pooled over all of a
// group, by the group's prior slope (estimate.ClaudeProxySlope's figure
// and, with held-out sessions of Claude Opus 4.7's tokenizer,
// estimate.ClaudeV47ProxySlope's).
func looSlopes(sessions []looSession) (map[string]float64, map[float64]float64) {
	type sums struct{ xy, xx float64 }
	type key struct {
		group   float64
		project string
	}
	own := map[key]sums{} // a group's sums by looProject
	tot := map[float64]sums{}
	for _, s := range sessions {
		if s.slope == 0 || s.slope == 1 || !looPools(s) {
			continue
		}
		adj, _ := estimate.WithoutCarried(s.hist)
		sm := own[key{s.slope, looProject(s.name)}]
		t := tot[s.slope]
		for k := 1; k < len(adj); k++ {
			a, b := adj[k-1], adj[k]
			if a.Segment != b.Segment {
				continue
			}
			dx, dy := float64(b.Estimated-a.Estimated), float64(b.Measured-a.Measured)
			sm.xy, t.xy = sm.xy+dx*dy, t.xy+dx*dy
			sm.xx, t.xx = sm.xx+dx*dx, t.xx+dx*dx
		}
		own[key{s.slope, looProject(s.name)}], tot[s.slope] = sm, t
	}
	for g, t := range tot {
		if t.xx == 0 {
			delete(tot, g) // no step to pool
		}
	}
	out := map[string]float64{}
	for _, s := range sessions {
		if g := looGroup(s, tot); g != 0 {
			o, t := own[key{g, looProject(s.name)}], tot[g]
			if d := t.xx - o.xx; d > 0 {
				out[s.name] = (t.xy - o.xy) / d
			}
		}
	}
	all := map[float64]float64{}
	for g, t := range tot {
		if t.xx > 0 {
			all[g] = t.xy / t.xx
		}
	}
	return out, all
}

// looPools says s is among the sessions its group's prior is pooled over:
// a shared real transcript (not a recording, not an exception), or a
// held-out one of Claude Opus 4.7's tokenizer, which no shared transcript
// is of (estimate.ClaudeV47ProxySlope).
func looPools(s looSession) bool {
	if strings.HasPrefix(s.name, "interop/") || looExcluded(s.name) != "" {
		return false
	}
	return !looHeld(s.name) || s.slope == estimate.ClaudeV47ProxySlope
}

// looGroup is the prior slope of the sessions s is predicted with the
// pooled figures of: its own model's; 0 when that group pools nothing
// (Claude Opus 4.7's tokenizer without held-out sessions: estimate's own
// prior, fitted on none of the sessions here, stands: looPredict) or s
// has no prior slope.
func looGroup[T any](s looSession, tot map[float64]T) float64 {
	if s.slope == 0 || s.slope == 1 {
		return 0
	}
	if _, ok := tot[s.slope]; ok {
		return s.slope
	}
	if s.slope == estimate.ClaudeV47ProxySlope {
		return 0
	}
	return estimate.ClaudeProxySlope
}

// looProject is what a session's pooled figures leave out: the session
// itself, or a held-out session's whole project (its first folder under
// the held-out set's owner: heldout/OWNER/PROJECT/…), whose sessions
// share a setup and a code base.
func looProject(name string) string {
	if !looHeld(name) {
		return name
	}
	if parts := strings.SplitN(name, "/", 4); len(parts) == 4 {
		return strings.Join(parts[:3], "/")
	}
	return name
}

// looFramingRates is, for every session, the framing rate pooled over the
// other sessions of its group (looSlopes; Codex's for a model with no
// prior slope): the weighted least-squares rate (each step weighing
// 1/|Δestimated|, as estimate's framing fit) of each step's recorded
// growth beyond its prior slope's share (estimate.PriorSlope of its model)
// on its framing's growth, the recorded input less the hidden output it
// carried (estimate.WithoutCarried), steps across a compaction left out.
// all is the rate pooled over all of a group, by the group's prior slope
// (1 for the models without one: estimate.PriorFramingRate's figures).
func looFramingRates(sessions []looSession) (map[string]float64, map[float64]float64) {
	type sums struct{ fr, ff float64 }
	type key struct {
		group   float64
		project string
	}
	own := map[key]sums{} // a group's sums by looProject
	tot := map[float64]sums{}
	group := func(s looSession) float64 { return max(1, s.slope) }
	for _, s := range sessions {
		if !looPools(s) {
			continue
		}
		slope := group(s)
		adj, _ := estimate.WithoutCarried(s.hist)
		sm := own[key{slope, looProject(s.name)}]
		t := tot[slope]
		for k := 1; k < len(adj); k++ {
			a, b := adj[k-1], adj[k]
			de := float64(b.Estimated - a.Estimated)
			if a.Segment != b.Segment || de == 0 {
				continue
			}
			w, df := 1/math.Abs(de), float64(b.Framing-a.Framing)
			fr := w * df * (float64(b.Measured-a.Measured) - slope*de)
			sm.fr, t.fr = sm.fr+fr, t.fr+fr
			sm.ff, t.ff = sm.ff+w*df*df, t.ff+w*df*df
		}
		own[key{slope, looProject(s.name)}], tot[slope] = sm, t
	}
	for g, t := range tot {
		if t.ff == 0 {
			delete(tot, g) // no step to pool
		}
	}
	out := map[string]float64{}
	for _, s := range sessions {
		g := group(s)
		if _, ok := tot[g]; !ok && g == estimate.ClaudeV47ProxySlope {
			out[s.name] = estimate.ClaudeV47FramingRate // estimate's own, as for the slope
			continue
		} else if !ok {
			g = estimate.ClaudeProxySlope
		}
		o, t := own[key{g, looProject(s.name)}], tot[g]
		if d := t.ff - o.ff; d > 0 {
			out[s.name] = max(0, (t.fr-o.fr)/d)
		}
	}
	all := map[float64]float64{}
	for g, t := range tot {
		if t.ff > 0 {
			all[g] = max(0, t.fr/t.ff)
		}
	}
	return out, all
}

// looTarget is the session looFirst predicts request 1 of.
type looTarget struct {
	name, path, dir string
	alone           bool // the file's only session
}

// looFirst predicts request 1 as estimate does at the cut before it: the
// raw view plus what the project's newest earlier session's first request
// carried beside its transcript (projectprefix, the files beside it), else
// what the prior adds, with the prior looked up in the table less the
// session's own recording (looPrior). For a shared transcript, whose
// prior is the whole table's, the figure must be the one `estimate` gives
// on the file cut just before that reply (looAtCut).
func looFirst(t *testing.T, ctx context.Context, g *dag.Graph, o estimate.Options, tg looTarget, first estimate.SeriesPoint) (int, string) {
	t.Helper()
	name := tg.name
	i, ok := g.Lookup(first.Node)
	if !ok || g.Pred(i) < 0 {
		return first.Estimated, "none (no view before it)"
	}
	v, err := render.Build(g, g.ID(g.Pred(i)), true)
	if err != nil {
		t.Fatalf("%s: render: %v", name, err)
	}
	o.NodeDetail = true
	res, err := estimate.View(ctx, v, o)
	if err != nil {
		t.Fatalf("%s: estimate: %v", name, err)
	}
	if res.Total != first.Raw {
		t.Errorf("%s: the cut before request 1 counts %d, the series %d", name, res.Total, first.Raw)
	}
	got, method := res.Total, "none (raw)"
	if p, ok := looPrior(g, v.Indexes, name); ok {
		unrecorded := p.Unrecorded(res.Provider, leadingSystem(res.Nodes), res.Categories[estimate.CatTools] > 0)
		got, method = res.Total+unrecorded, fmt.Sprintf("%s: +%d", p.Method, unrecorded)
	}
	target := projectprefix.Target{File: tg.path, Session: tg.dir, Format: estimate.ImportedFrom(g.S.Meta)}
	if l, ok := projectprefix.Find(ctx, target, projectprefix.Options{Session: estimate.SessionOptions{Estimate: o}, TempDir: t.TempDir()}); ok {
		got, method = res.Total+l.Tokens, l.Method()
	}
	if !strings.HasPrefix(name, "interop/") && tg.alone {
		if cut, ok := looAtCut(t, ctx, tg.path, o); ok && cut != got {
			t.Errorf("%s: estimate on the file cut before request 1 gives %d, the check %d (%s)", name, cut, got, method)
		}
	}
	return got, method
}

// looAtCut is what `estimate FILE` gives on path cut just before request
// 1's reply — the longest prefix of its lines whose import holds no
// assistant node — read through a cache as the command reads it, with the
// project's earlier sessions beside path (projectprefix): the calibrated
// total, or the raw one with no calibration. false when path has no such
// cut.
func looAtCut(t *testing.T, ctx context.Context, path string, o estimate.Options) (int, bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	open := func(n int) (*live.Entry, func()) {
		dir := t.TempDir()
		file := filepath.Join(dir, filepath.Base(path))
		if err := os.WriteFile(file, bytes.Join(lines[:n], nil), 0o644); err != nil {
			t.Fatal(err)
		}
		e, err := live.Open(ctx, file, live.Options{CacheDir: filepath.Join(dir, "cache"), MaxBytes: -1})
		if err != nil {
			return nil, func() {}
		}
		return e, e.Close
	}
	replied := func(n int) bool {
		e, done := open(n)
		defer done()
		if e == nil {
			return false
		}
		s, err := store.Open(e.Session, store.OpenOptions{})
		if err != nil {
			return false
		}
		defer s.Close()
		for k := range s.Len() {
			if s.RoleAt(k) == transcript.RoleAssistant {
				return true
			}
		}
		return false
	}
	// The smallest n whose prefix holds a reply: doubling, then bisection.
	lo, hi := 0, 1
	for hi < len(lines) && !replied(hi) {
		lo, hi = hi, min(2*hi, len(lines))
	}
	for lo+1 < hi {
		if mid := (lo + hi) / 2; replied(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	if lo == 0 {
		return 0, false
	}
	e, done := open(lo)
	defer done()
	if e == nil {
		return 0, false
	}
	so := estimate.SessionOptions{Estimate: o}
	so.Estimate.NodeDetail = false
	r := estimate.Session(ctx, e.Session, so)
	if r.Err != nil {
		t.Fatalf("%s cut at line %d: %v", path, lo, r.Err)
	}
	projectprefix.Apply(ctx, projectprefix.Target{File: path, Session: e.Session, Format: e.Format}, r.Result,
		projectprefix.Options{Session: so, TempDir: t.TempDir()})
	if c := r.Result.Calibration; c != nil {
		return c.CalibratedTotal, true
	}
	return r.Result.Total, true
}

// looPrior is the prior the session's first request is predicted with,
// looked up as estimate does (the client the import names, the version,
// mode and setup the view's first nodes give: estimate.PriorFor) in the
// table less the entries of the session's own recording: a recording
// never predicts itself.
func looPrior(g *dag.Graph, view []int, name string) (estimate.Prior, bool) {
	client := estimate.ImportedFrom(g.S.Meta)
	own := ""
	if rest, ok := strings.CutPrefix(name, "interop/"); ok {
		parts := strings.SplitN(rest, "/", 4)
		if len(parts) == 4 {
			own = "testdata/interop/" + strings.Join(parts[:3], "/") + "/"
		}
	}
	var table []estimate.PriorEntry
	for _, e := range estimate.PriorTable() {
		if own == "" || !strings.HasPrefix(e.Source, own) {
			table = append(table, e)
		}
	}
	var lead []*transcript.Node
	for _, i := range view[:min(len(view), 8)] {
		n, err := g.S.Node(i)
		if err != nil {
			break
		}
		lead = append(lead, n)
	}
	// The calls before request 1: none (what the file cut there shows).
	return estimate.PriorFor(table, estimate.PriorClient(client, lead), lead, nil)
}

// leadingSystem is the tokens of the view's system messages before its
// first other message: what the transcript records of the request's
// system prompt.
func leadingSystem(nodes []estimate.NodeCount) int {
	n := 0
	for _, c := range nodes {
		if c.Role != "system" {
			break
		}
		n += c.Tokens
	}
	return n
}

type looStats struct {
	n                  int
	median, p90, worst float64
}

func looStatsOf(errs []float64) looStats {
	s := looStats{n: len(errs)}
	for _, e := range errs {
		s.worst = math.Max(s.worst, e)
	}
	s.median, s.p90 = quantile(append([]float64(nil), errs...), 0.5), quantile(append([]float64(nil), errs...), 0.9)
	return s
}

// looTable is the Markdown table; pooled is over the held sessions'
// requests after the first (the next-request figure of "Every cut").
func looTable(sessions []looSession) (string, looStats) {
	var b strings.Builder
	pct := func(x float64) string { return fmt.Sprintf("%.2f%%", 100*x) }
	b.WriteString("| session | requests | median | p90 | worst | worst of 2… (request) | requests 1, 2, 3 | request 1 from | targets |\n|---|---|---|---|---|---|---|---|---|\n")
	var next []float64
	for _, s := range sessions {
		st := looStatsOf(s.errs)
		var first []string
		for _, e := range s.first {
			first = append(first, pct(e))
		}
		verdict := "met"
		if why := looExcluded(s.name); why != "" {
			verdict = "not held: " + why
		} else if m := looMisses(s); len(m) > 0 && looHeld(s.name) {
			verdict = "held out, reported: " + strings.Join(m, "; ")
		} else if len(m) > 0 {
			verdict = "**not met**: " + strings.Join(m, "; ")
		}
		if looRecording(s.name) && looExcluded(s.name) == "" {
			verdict = "reported (the fake's unit)"
			if m := looMisses(s); len(m) > 0 {
				verdict += ": " + strings.Join(m, "; ")
			}
		}
		if looExcluded(s.name) == "" && !looDuplicate(s.name) && !looHeld(s.name) && !looRecording(s.name) {
			next = append(next, s.errs[1:]...)
		}
		prior := s.prior
		if s.used != 1 {
			prior += fmt.Sprintf("; prior slope %.3f", s.used)
		}
		if s.rate != 0 {
			prior += fmt.Sprintf("; prior framing rate %.2f", s.rate)
		}
		later := "–"
		if w := looWorstLater(s.errs); w > 0 {
			later = fmt.Sprintf("%s (%d)", pct(s.errs[w]), w+1)
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", s.name, st.n, pct(st.median), pct(st.p90), pct(st.worst), later, strings.Join(first, ", "), prior, verdict)
	}
	pooled := looStatsOf(next)
	row := func(label string, st looStats) {
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | | | | |\n", label, st.n, pct(st.median), pct(st.p90), pct(st.worst))
	}
	row("**pooled**, requests 2… (the shared real transcripts: held)", pooled)
	var recNext, realFirst, recFirst, heldNext, heldFirst []float64
	for _, s := range sessions {
		if looExcluded(s.name) != "" || looDuplicate(s.name) {
			continue
		}
		if looHeld(s.name) {
			heldNext, heldFirst = append(heldNext, s.errs[1:]...), append(heldFirst, s.errs[0])
			continue
		}
		if looRecording(s.name) {
			recNext, recFirst = append(recNext, s.errs[1:]...), append(recFirst, s.errs[0])
		} else {
			realFirst = append(realFirst, s.errs[0])
		}
	}
	row("the real-client recordings, requests 2… (the fake's unit: reported; guard ≤ 1%, ≤ 5%)", looStatsOf(recNext))
	row("request 1, shared real transcripts (held)", looStatsOf(realFirst))
	row("request 1, real-client recordings (the fake's unit: reported)", looStatsOf(recFirst))
	if len(heldNext)+len(heldFirst) > 0 {
		row("held-out transcripts (CTXFOLD_ACCURACY_HELDOUT), requests 2…", looStatsOf(heldNext))
		row("held-out transcripts, request 1", looStatsOf(heldFirst))
	}
	return b.String(), pooled
}

package timeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/audit"
	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// interop is a committed real-client recording's transcript.
func interop(scenario string) string {
	return filepath.Join("..", "..", "testdata", "interop", "claude-code", "2.1.328", scenario, "transcript", "00000000-0000-4000-8000-000000000001.jsonl")
}

// importFile imports a transcript into a fresh session directory.
func importFile(t testing.TB, path string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "s")
	rep, err := importer.Import(context.Background(), importer.Options{From: importer.Auto, Files: []string{path}, Out: out})
	if err != nil {
		t.Fatalf("import %s: %v", path, err)
	}
	if len(rep.Sessions) == 0 {
		t.Fatalf("import %s: no session", path)
	}
	return rep.Sessions[0].Dir
}

func build(t testing.TB, dir string) *Data {
	t.Helper()
	d, err := Build(context.Background(), dir, Options{})
	if err != nil {
		t.Fatalf("report %s: %v", dir, err)
	}
	return d
}

// history is the recorded requests a full estimate of HEAD's view
// matches, counted apart from Build (its own render and count).
// history is the session's recorded requests predicted as estimate does
// at each cut (the calibration's Series, with its prior slope).
func history(t testing.TB, dir string) []estimate.SeriesPoint {
	t.Helper()
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	v, err := render.Build(g, "", false)
	if err != nil {
		t.Fatal(err)
	}
	res, err := estimate.View(context.Background(), v, estimate.Options{Model: g.S.Meta.Model, RecordedWindow: estimate.RecordedWindow(g.S.Meta), NodeDetail: true, NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Calibration == nil {
		return nil
	}
	return res.Calibration.Series()
}

func auditAll(t testing.TB, dir string) []*audit.Result {
	t.Helper()
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	rs, err := audit.Run(context.Background(), g, audit.Options{All: true})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// The compaction recording: a request per matched request of HEAD's
// spine with the series' figures, and Claude Code's compaction placed
// between the requests around it with audit's figures.
func TestBuildCompaction(t *testing.T) {
	dir := importFile(t, interop("compact"))
	d := build(t, dir)
	series := history(t, dir)
	var main []Request
	for _, r := range d.Requests {
		if !r.Subagent {
			main = append(main, r)
		}
	}
	if len(series) < 2 || len(main) != len(series) {
		t.Fatalf("%d main requests, %d matched (want at least 2, equal)", len(main), len(series))
	}
	for k, r := range main {
		p := series[k]
		if r.Index != k || r.Node != p.Node || r.Recorded != p.Recorded || r.Time == "" {
			t.Errorf("request %d: %+v, series %+v", k, r, p)
		}
		if k == 0 && r.Estimated != nil || k > 0 && (r.Estimated == nil || *r.Estimated != p.Estimated) {
			t.Errorf("request %d: estimated %v, series %d", k, r.Estimated, p.Estimated)
		}
	}
	audits := auditAll(t, dir)
	if len(d.Compactions) != len(audits) || len(audits) == 0 {
		t.Fatalf("%d compactions, audit --all has %d", len(d.Compactions), len(audits))
	}
	for k, c := range d.Compactions {
		a := audits[k]
		if c.Summary != a.SummaryID || c.Facts != a.Total || c.Kept != a.Kept || c.Source != "claude-code" {
			t.Errorf("compaction %d: %+v, audit %s %d/%d", k, c, a.SummaryID, a.Kept, a.Total)
		}
		if c.AfterRequest < 0 || c.AfterRequest+1 >= len(main) || c.Before != main[c.AfterRequest].Recorded ||
			c.After != main[c.AfterRequest+1].Recorded || c.AfterBasis != "recorded" || !main[c.AfterRequest+1].AfterCompaction {
			t.Errorf("compaction %d placed after request %d: before %d after %d (%s)", k, c.AfterRequest, c.Before, c.After, c.AfterBasis)
		}
	}
}

// A sub-agent's requests are reported apart: recorded, no estimate.
func TestBuildSubagent(t *testing.T) {
	dir := importFile(t, interop("subagent"))
	d := build(t, dir)
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	want := 0
	// A node is a sub-agent's when its chain reaches a node with a caller.
	spawned := func(i int) bool {
		for ; i >= 0; i = g.Pred(i) {
			if g.Caller(i) >= 0 {
				return true
			}
		}
		return false
	}
	for i := range g.Len() {
		n, err := g.S.Node(i)
		if err != nil {
			t.Fatal(err)
		}
		if n.Role == transcript.RoleAssistant && n.Usage != nil && n.Usage.InputTokens > 0 && spawned(i) {
			want++
		}
	}
	got := 0
	for _, r := range d.Requests {
		if r.Subagent {
			got++
			if r.Estimated != nil || r.Recorded <= 0 {
				t.Errorf("sub-agent request %+v", r)
			}
		}
	}
	if want == 0 || got != want {
		t.Fatalf("%d sub-agent requests, want %d (and some)", got, want)
	}
}

var dataRe = regexp.MustCompile(`(?s)<script type="application/json" id="ctxfold-data">(.*?)</script>`)

// The page embeds exactly the object --json prints, draws a mark per
// request and a marker per compaction.
func TestPageEmbedsData(t *testing.T) {
	d := build(t, importFile(t, interop("compact")))
	var page, js bytes.Buffer
	if err := WriteHTML(&page, d); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, d); err != nil {
		t.Fatal(err)
	}
	m := dataRe.FindSubmatch(page.Bytes())
	if m == nil {
		t.Fatal("no ctxfold-data script")
	}
	var fromPage, fromJSON any
	if err := json.Unmarshal(m[1], &fromPage); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js.Bytes(), &fromJSON); err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(fromPage)
	b, _ := json.Marshal(fromJSON)
	if !bytes.Equal(a, b) {
		t.Errorf("embedded data differs from --json:\n%s\n%s", a, b)
	}
	s := page.String()
	if n := strings.Count(s, `<g class="mark`); n != len(d.Requests) {
		t.Errorf("%d marks, %d requests", n, len(d.Requests))
	}
	if n := strings.Count(s, `<g class="compaction`); n != len(d.Compactions) {
		t.Errorf("%d compaction markers, %d compactions", n, len(d.Compactions))
	}
	if strings.Contains(s, " src=") || strings.Contains(s, "<link") || strings.Contains(s, "@import") {
		t.Error("the page loads something")
	}
}

// Past MaxMarks requests, every k-th is drawn and the page says so; the
// data keeps them all.
func TestDownsample(t *testing.T) {
	d := &Data{Session: "s", Categories: map[string]int{}}
	for k := range 3*MaxMarks + 7 {
		e := 1000 + k
		d.Requests = append(d.Requests, Request{Index: k, Node: "n", Recorded: int64(1000 + k), Estimated: &e, Calibrated: true, fileIdx: k})
	}
	var page bytes.Buffer
	if err := WriteHTML(&page, d); err != nil {
		t.Fatal(err)
	}
	s := page.String()
	marks := strings.Count(s, `<g class="mark`)
	if marks > MaxMarks || marks < MaxMarks/2 || !strings.Contains(s, `id="downsampled"`) {
		t.Errorf("%d marks of %d requests, note %v", marks, len(d.Requests), strings.Contains(s, `id="downsampled"`))
	}
	if got := strings.Count(string(dataRe.FindSubmatch(page.Bytes())[1]), `"index"`); got != len(d.Requests) {
		t.Errorf("embedded %d requests, want %d", got, len(d.Requests))
	}
}

// Bad input: an empty session is an EmptyError and no page.
func TestEmptySession(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	if _, err := store.Init(dir, "", store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := Build(context.Background(), dir, Options{})
	var empty *EmptyError
	if !errors.As(err, &empty) {
		t.Fatalf("got %v, want EmptyError", err)
	}
}

// -o replaces an HTML page, never another file or a symlink.
func TestWriteFileRefuses(t *testing.T) {
	d := &Data{Session: "s", Categories: map[string]int{}}
	tmp := t.TempDir()
	page := filepath.Join(tmp, "old.html")
	if err := os.WriteFile(page, []byte("<!DOCTYPE html>\n<p>old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(page, d); err != nil {
		t.Fatalf("an HTML page should be replaced: %v", err)
	}
	if b, _ := os.ReadFile(page); !bytes.Contains(b, []byte("ctxfold-data")) {
		t.Error("the page was not written")
	}
	other := filepath.Join(tmp, "t.jsonl")
	if err := os.WriteFile(other, []byte(`{"type":"user"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(tmp, "link.html")
	if err := os.Symlink(page, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{other, link, tmp} {
		var ow *OverwriteError
		if err := WriteFile(p, d); !errors.As(err, &ow) {
			t.Errorf("%s: got %v, want OverwriteError", p, err)
		}
	}
	if b, _ := os.ReadFile(other); string(b) != `{"type":"user"}`+"\n" {
		t.Error("the transcript was changed")
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Error("the symlink was replaced")
	}
}

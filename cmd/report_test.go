package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReportFlags(t *testing.T) {
	file := transcriptFile(t)
	cache := t.TempDir()
	runFlagCases(t, newReportCmd, []flagCase[reportOptions]{
		{name: "a transcript file", args: []string{"report", file}, env: map[string]string{"XDG_CACHE_HOME": cache}, check: func(t *testing.T, o *reportOptions) {
			same(t, "File", o.File, file)
			same(t, "Timeline.File", o.Timeline.File, file)
			same(t, "Dir is a cache session", strings.HasPrefix(o.Dir, cache), true)
		}},
		{name: "defaults", args: []string{"report", "s"}, check: func(t *testing.T, o *reportOptions) {
			same(t, "Dir, File, Output, Head", []string{o.Dir, o.File, o.Output, o.Timeline.Head}, []string{"s", "", "", ""})
			same(t, "JSON", o.JSON, false)
		}},
		{name: "every flag", args: []string{"report", "s", "-o", "r.html", "--head", "n1", "--model", "gpt-4o", "--window", "100"},
			check: func(t *testing.T, o *reportOptions) {
				same(t, "Output, Head", []string{o.Output, o.Timeline.Head}, []string{"r.html", "n1"})
				same(t, "Estimate.Model, Window", []any{o.Timeline.Estimate.Model, o.Timeline.Estimate.Window}, []any{"gpt-4o", 100})
			}},
		{name: "json", args: []string{"report", "s", "--json"}, check: func(t *testing.T, o *reportOptions) {
			same(t, "JSON", o.JSON, true)
		}},
		{name: "json and -o", args: []string{"report", "s", "--json", "-o", "r.html"}, refused: "--json prints the data; -o writes the page"},
	})
}

// The command end to end: a page from a transcript file, --json the
// object it embeds, bad input a clear error and no page.
func TestReportRuns(t *testing.T) {
	file := transcriptFile(t)
	env := map[string]string{"XDG_CACHE_HOME": t.TempDir()}
	out := filepath.Join(t.TempDir(), "r.html")
	if r := cliRun(t, env, false, "report", file, "-o", out); r.Code != 0 {
		t.Fatalf("report: exit %d: %s", r.Code, r.Stderr)
	}
	page, err := os.ReadFile(out)
	if err != nil || !strings.HasPrefix(string(page), "<!DOCTYPE html>") || !strings.Contains(string(page), `id="ctxfold-data"`) {
		t.Fatalf("page: %v %.200s", err, page)
	}
	r := cliRun(t, env, false, "report", file, "--json")
	var d struct {
		Requests []struct {
			Index    int    `json:"index"`
			Recorded int64  `json:"recorded"`
			Time     string `json:"time"`
		} `json:"requests"`
		Compactions []json.RawMessage `json:"compactions"`
	}
	if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &d) != nil || len(d.Requests) < 2 || len(d.Compactions) != 1 {
		t.Fatalf("--json: exit %d, %d requests, %d compactions: %s", r.Code, len(d.Requests), len(d.Compactions), r.Stderr)
	}
	// Not a transcript: an error naming the file, exit 2, no page.
	bad := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(bad, []byte("just some notes\n"), 0o644)
	badOut := filepath.Join(t.TempDir(), "bad.html")
	if r := cliRun(t, env, false, "report", bad, "-o", badOut); r.Code != ExitUsage || !strings.Contains(r.Stderr, "notes.txt") {
		t.Errorf("not a transcript: exit %d, stderr %q", r.Code, r.Stderr)
	}
	if _, err := os.Stat(badOut); err == nil {
		t.Error("a page was written for bad input")
	}
	// -o onto the transcript itself: refused, the file untouched.
	before, _ := os.ReadFile(file)
	if r := cliRun(t, env, false, "report", file, "-o", file); r.Code != ExitUsage || !strings.Contains(r.Stderr, "not an HTML page") {
		t.Errorf("-o onto the transcript: exit %d, stderr %q", r.Code, r.Stderr)
	}
	if after, _ := os.ReadFile(file); string(after) != string(before) {
		t.Error("the transcript was changed")
	}
}

// ctxfold's own compaction is on the page beside the client's: placed
// after the last request, its after figure the calibrated total of the
// view that now substitutes it.
func TestReportOwnCompaction(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	if r := cliRun(t, nil, false, "import", transcriptFile(t), "-o", dir); r.Code != 0 {
		t.Fatalf("import: %s", r.Stderr)
	}
	if r := cliRun(t, nil, false, "compact", dir, "--keep-tokens", "100"); r.Code != 0 {
		t.Fatalf("compact: %s", r.Stderr)
	}
	r := cliRun(t, nil, false, "report", dir, "--json")
	var d struct {
		Calibrated  int               `json:"calibrated"`
		Requests    []json.RawMessage `json:"requests"`
		Compactions []struct {
			Source       string `json:"source"`
			Status       string `json:"status"`
			AfterRequest int    `json:"after_request"`
			Before       int64  `json:"before"`
			After        int64  `json:"after"`
			AfterBasis   string `json:"after_basis"`
		} `json:"compactions"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &d); err != nil || r.Code != 0 {
		t.Fatalf("report --json: exit %d, %v: %s", r.Code, err, r.Stderr)
	}
	if len(d.Compactions) != 2 {
		t.Fatalf("%d compactions, want the client's and ctxfold's", len(d.Compactions))
	}
	c := d.Compactions[1]
	if c.Source != "ctxfold" || c.Status != "active" || c.AfterRequest != len(d.Requests)-1 || c.AfterBasis != "estimated" ||
		c.After != int64(d.Calibrated) || c.After >= c.Before {
		t.Errorf("ctxfold's compaction: %+v (calibrated now %d, %d requests)", c, d.Calibrated, len(d.Requests))
	}
}

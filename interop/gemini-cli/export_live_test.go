package geminicli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/internal/fake/gemini"

	"github.com/ctxfold/ctxfold/internal/hooktest"
)

// geminiLive is one Gemini CLI session against the fake provider, in a
// fresh HOME and project.
type geminiLive struct {
	t                  *testing.T
	client, bin        string
	tmp, home, project string
	srv                *gemini.Server
	env                []string
}

func newGeminiLive(t *testing.T) *geminiLive {
	t.Helper()
	if os.Getenv("CTXFOLD_INTEROP_LIVE") != "1" {
		t.Skip("set CTXFOLD_INTEROP_LIVE=1 to drive the real Gemini CLI")
	}
	g := &geminiLive{t: t, client: hooktest.ClientBin(t, "CTXFOLD_GEMINI_BIN", "gemini-cli-0.61.0", "gemini", "interop/gemini-cli/record.sh")}
	g.bin = hooktest.Build(t)
	g.tmp, _ = filepath.EvalSymlinks(t.TempDir())
	g.home, g.project = filepath.Join(g.tmp, "home"), filepath.Join(g.tmp, "project")
	for _, d := range []string{filepath.Join(g.home, ".gemini"), g.project} {
		_ = os.MkdirAll(d, 0o755)
	}
	// Session retention off: at start-up the CLI deletes a session one of
	// whose files holds no conversation, and a resumed run of 0.61
	// sometimes leaves such a second file (its header only) beside the
	// session it resumed, so the next start deletes that session whole —
	// here the original the test compares afterwards.
	settings := `{"security":{"auth":{"selectedType":"gemini-api-key"}},"general":{"sessionRetention":{"enabled":false}}}`
	if err := os.WriteFile(filepath.Join(g.home, ".gemini", "settings.json"), []byte(settings+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, err := gemini.Start(gemini.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	g.srv = srv
	g.env = append(os.Environ(), "HOME="+g.home, "GOOGLE_GEMINI_BASE_URL="+srv.URL(), "GEMINI_API_KEY=fake-interop-key",
		"GEMINI_CLI_TRUST_WORKSPACE=true", "NO_COLOR=1", "XDG_CACHE_HOME="+filepath.Join(g.tmp, "cache"), "GEMINI_CLI_HOME=")
	return g
}

// run sends one prompt (resume: "" for a new session, else --resume's
// argument) and returns the contents of the main-model request that
// carried it.
func (g *geminiLive) run(prompt, resume string) string {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{"--yolo", "-p", prompt}
	if resume != "" {
		args = append(args, "--resume", resume)
	}
	before := len(g.srv.Requests())
	cmd := exec.CommandContext(ctx, g.client, args...)
	cmd.Dir, cmd.Env, cmd.WaitDelay = g.project, g.env, 5*time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		g.t.Fatalf("gemini %q: %v\n%s", prompt, err, out)
	}
	for _, q := range g.srv.Requests()[before:] {
		var b struct {
			Contents json.RawMessage `json:"contents"`
		}
		if q.Kind != "json" && json.Unmarshal(q.Body, &b) == nil && bytes.Contains(b.Contents, []byte(hooktest.JSONText(prompt))) {
			return string(b.Contents)
		}
	}
	g.t.Fatalf("no main-model request carried %q", prompt)
	return ""
}

// ctxfold runs the built ctxfold with the session's HOME.
func (g *geminiLive) ctxfold(args ...string) []byte {
	g.t.Helper()
	cmd := exec.Command(g.bin, args...)
	cmd.Env, cmd.Dir = g.env, g.project
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		g.t.Fatalf("ctxfold %v: %v\n%s%s", args, err, out, stderr)
	}
	return out
}

// sessionFile is the session file the CLI wrote the conversation to: a
// resumed run sometimes starts a second file with its header only
// (docs/INTEROP-gemini-cli.md), so the largest.
func (g *geminiLive) sessionFile() string {
	g.t.Helper()
	m, _ := filepath.Glob(filepath.Join(g.home, ".gemini", "tmp", "*", "chats", "session-*.jsonl"))
	best, size := "", int64(-1)
	for _, f := range m {
		if fi, err := os.Stat(f); err == nil && fi.Size() > size {
			best, size = f, fi.Size()
		}
	}
	if best == "" {
		g.t.Fatal("Gemini CLI wrote no session file")
	}
	return best
}

// contentTexts are the request's contents, each as its JSON text.
func contentTexts(t *testing.T, contents string) []string {
	t.Helper()
	var cs []json.RawMessage
	if err := json.Unmarshal([]byte(contents), &cs); err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = string(c)
	}
	return out
}

// TestLiveExportResume is issue 39's `export --to gemini` acceptance with
// the real Gemini CLI 0.61: a session it recorded is imported, compacted by
// ctxfold, exported where the CLI looks for the project, and resumed with
// `gemini --resume ID`. The request the CLI sends holds ctxfold's summary
// (as a <state_snapshot>) and the kept tail and none of the covered turns
// outside the summary; a plain resume of the original sends them all.
func TestLiveExportResume(t *testing.T) {
	g := newGeminiLive(t)
	covered := []string{"Covered turn alpha-7751.", "Covered turn bravo-7752. RUN: echo covered-output-7753; seq 1 300", "Covered turn charlie-7754."}
	kept := "Kept turn delta-7755."
	for i, p := range append(covered, kept) {
		resume := "latest"
		if i == 0 {
			resume = ""
		}
		g.run(p, resume)
	}
	file := g.sessionFile()
	s := filepath.Join(g.tmp, "s")
	g.ctxfold("import", file, "-o", s)
	var c struct {
		SummaryID string `json:"summary_id"`
	}
	if err := json.Unmarshal(g.ctxfold("compact", s, "--keep-tokens", "1", "--json", "--window", "1000000"), &c); err != nil || c.SummaryID == "" {
		t.Fatalf("compact: %v %+v", err, c)
	}
	var e struct {
		SessionID string `json:"session_id"`
		Summary   string `json:"summary"`
	}
	if err := json.Unmarshal(g.ctxfold("export", s, "--to", "gemini", "--cwd", g.project, "--json"), &e); err != nil || e.Summary != c.SummaryID {
		t.Fatalf("export: %v %+v", err, e)
	}
	summary := ""
	for _, line := range bytes.Split(g.ctxfold("render", s, "--format", "jsonl"), []byte("\n")) {
		var n struct {
			ID      string          `json:"id"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(line, &n) == nil && n.ID == c.SummaryID {
			_ = json.Unmarshal(n.Content, &summary)
		}
	}
	if summary == "" {
		t.Fatalf("the view carries no summary %s", c.SummaryID)
	}
	plain := g.run("Next question echo-7756.", "latest")
	req := g.run("Next question echo-7756.", e.SessionID)
	summaryAt := -1
	for i, ct := range contentTexts(t, req) {
		if summaryAt < 0 && strings.Contains(ct, "<state_snapshot>") {
			summaryAt = i
			continue
		}
		for _, gone := range []string{"alpha-7751", "covered-output-7753", "charlie-7754"} {
			if strings.Contains(ct, gone) {
				t.Errorf("content %d of the resumed request carries the covered turn text %q", i, gone)
			}
		}
	}
	if summaryAt < 0 || !strings.Contains(req, hooktest.JSONText(kept)) {
		t.Fatalf("the resumed request lacks the snapshot (at %d) or the kept tail:\n%.2000s", summaryAt, req)
	}
	if line := firstFactLine(summary); !strings.Contains(req, hooktest.JSONText(line)) {
		t.Errorf("the resumed request does not carry the summary's line %q", line)
	}
	for _, want := range covered {
		if !strings.Contains(plain, hooktest.JSONText(strings.Fields(want)[2])) {
			t.Errorf("the plain resume of the original lacks %q: the comparison means nothing", want)
		}
	}
	t.Logf("resumed export: %d bytes of contents, the snapshot at %d; plain resume %d bytes", len(req), summaryAt, len(plain))
}

// firstFactLine is the summary's first line that is neither a heading nor
// short: one the snapshot carries verbatim.
func firstFactLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); len(l) > 20 && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "[") {
			return l
		}
	}
	return s
}

// geminiPlantTurns plant hooktest.Planted; the last makes the fake report
// an inflated prompt count, so Gemini CLI compresses before its next
// request, with the fake's snapshot ("fake summary of …"), which keeps
// none of them. The long output of seq is what a summary saves.
var geminiPlantTurns = []string{
	geminiTurns[0], "Count to six hundred. RUN: seq 1 600", geminiTurns[2], geminiTurns[3],
	"Keep going. " + gemini.InflateMarker + " RUN: echo checkpoint-soon",
}

// TestLiveUncompactResume is issue 39's acceptance with the real Gemini
// CLI 0.61: after its own compression dropped the planted facts, `ctxfold
// uncompact FILE --export gemini` hands the whole history back as a new
// session beside the original; resumed with `gemini --resume ID`, the
// request carries every planted fact and not the client's snapshot. With
// `--recompact --keep-tokens 200` it carries ctxfold's snapshot instead
// of the client's and every fact audit says ctxfold's keeps. The original
// is byte-identical afterwards.
func TestLiveUncompactResume(t *testing.T) {
	g := newGeminiLive(t)
	for i, p := range geminiPlantTurns {
		resume := "latest"
		if i == 0 {
			resume = ""
		}
		g.run(p, resume)
	}
	compressed := g.run(geminiNext, "latest")
	if !strings.Contains(compressed, "fake summary of") {
		t.Fatal("the request after the prompt carries no snapshot of the client's: did Gemini CLI compress?")
	}
	before := hooktest.Measure("client", hooktest.Planted, []byte(compressed), len(compressed), nil)
	file := g.sessionFile()
	original, _ := os.ReadFile(file)
	resume := func(args ...string) (string, uncompactOut) {
		t.Helper()
		var out uncompactOut
		b := g.ctxfold(append([]string{"uncompact", file, "--export", "gemini", "--json", "--window", "1000000", "--no-calibrate"}, args...)...)
		if err := json.Unmarshal(b, &out); err != nil || out.SessionID == "" || filepath.Dir(out.Output) != filepath.Dir(file) {
			t.Fatalf("uncompact %v: %v\n%s", args, err, b)
		}
		return g.run("After the undo echo-7761 "+strings.Join(args, " "), out.SessionID), out
	}
	whole, _ := resume()
	r := hooktest.Measure("uncompacted", hooktest.Planted, []byte(whole), len(whole), func(f hooktest.Fact) { t.Errorf("uncompacted: lost %s %q", f.Kind, f.Text) })
	if strings.Contains(whole, "fake summary of") || strings.Contains(whole, "<state_snapshot>") {
		t.Errorf("the uncompacted resume still sends a snapshot")
	}
	re, out := resume("--recompact", "--keep-tokens", "200")
	if strings.Contains(re, "fake summary of") || !strings.Contains(re, "<state_snapshot>") {
		t.Errorf("the recompacted resume does not send ctxfold's snapshot in place of the client's")
	}
	// ctxfold's summary keeps what audit finds; the planted strings are
	// matched verbatim here, so a fact the summary keeps reworded counts
	// as lost: logged, and the count must beat the client's.
	rr := hooktest.Measure("recompacted", hooktest.Planted, []byte(re), len(re), func(f hooktest.Fact) { t.Logf("recompacted: lost %s %q", f.Kind, f.Text) })
	if rr.KeptCount <= before.KeptCount {
		t.Errorf("the recompacted resume carries %d planted facts, no more than after the client's compression (%d)", rr.KeptCount, before.KeptCount)
	}
	if len(re) >= len(whole) {
		t.Errorf("the recompacted resume (%d bytes of contents) is not smaller than the whole history (%d)", len(re), len(whole))
	}
	if now, _ := os.ReadFile(file); !bytes.Equal(now, original) {
		t.Errorf("the original session file changed")
	}
	t.Logf("planted facts in the request: after the client's compression %d/%d (%d bytes of contents); uncompacted %d/%d (%d bytes); recompacted %d/%d (%d bytes; %d of the %d facts audit found dropped kept)",
		before.KeptCount, before.Planted, len(compressed), r.KeptCount, r.Planted, len(whole), rr.KeptCount, rr.Planted, len(re),
		out.Recompact.Kept, out.Recompact.Dropped)
}

// uncompactOut is the part of uncompact FILE --export --json the test reads.
type uncompactOut struct {
	SessionID string `json:"session_id"`
	Output    string `json:"output"`
	Recompact struct {
		Dropped int `json:"client_dropped"`
		Kept    int `json:"kept_of_client_dropped"`
	} `json:"recompact"`
}

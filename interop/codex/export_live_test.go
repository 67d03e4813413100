package codex_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/compact"
	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/export"
	"github.com/ctxfold/ctxfold/internal/fake/openai"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/summarize"
	"github.com/ctxfold/ctxfold/transcript"
	"github.com/ctxfold/ctxfold/transcript/importer"
)

// TestLiveExportResume is issue "export"'s acceptance with the real client:
// a session Codex recorded is imported, compacted offline by ctxfold,
// exported where Codex looks, and resumed with `codex exec resume ID …`
// against the fake provider. The request Codex then sends holds ctxfold's
// summary and the kept tail and none of the covered turns outside the
// summary; Codex appends its reply to the exported rollout, and a re-import
// shows the reply after the kept tail.
func TestLiveExportResume(t *testing.T) {
	if os.Getenv("CTXFOLD_INTEROP_LIVE") != "1" {
		t.Skip("set CTXFOLD_INTEROP_LIVE=1 to drive the real Codex CLI " + Version)
	}
	home, _ := os.UserHomeDir()
	bin := filepath.Join(home, ".cache", "ctxfold-interop", "codex-"+Version, "node_modules", ".bin", "codex")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("client %s: %v (run interop/codex/record.sh once to install it)", bin, err)
	}
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	chome, work := filepath.Join(tmp, "home"), filepath.Join(tmp, "work")
	codexHome := filepath.Join(chome, ".codex")
	for _, d := range []string{codexHome, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	srv, err := openai.New("")
	if err != nil {
		t.Fatal(err)
	}
	l, err := openai.Listen(0)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ctx, l)
	config := `model = "gpt-5.5"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"

[model_providers.fake]
name = "fake"
base_url = "http://` + l.Addr().String() + `/v1"
wire_api = "responses"
env_key = "FAKE_OPENAI_KEY"
`
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(c, bin, append([]string{"exec", "--skip-git-repo-check"}, args...)...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "HOME="+chome, "CODEX_HOME="+codexHome, "FAKE_OPENAI_KEY=dummy", "NO_COLOR=1")
		cmd.Stdin = nil
		cmd.WaitDelay = 5 * time.Second
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("codex %v: %v\n%s", args, err, out)
		}
	}
	run("Covered turn alpha-8831.")
	run("resume", "--last", "Covered turn bravo-8832 [[shell: echo covered-output-8833]]")
	run("resume", "--last", "Covered turn charlie-8834.")
	run("resume", "--last", "Kept turn delta-8835.")
	rollouts, _ := filepath.Glob(filepath.Join(codexHome, "sessions", "*", "*", "*", "rollout-*.jsonl"))
	if len(rollouts) != 1 {
		t.Fatalf("rollouts %v", rollouts)
	}
	session := filepath.Join(t.TempDir(), "s")
	if _, err := importer.Import(ctx, importer.Options{From: importer.Auto, Files: rollouts, Out: session}); err != nil {
		t.Fatal(err)
	}
	res, err := compact.Compact(ctx, compact.Options{Dir: session, Summarizer: summarize.Extractive{}, KeepTokens: 1,
		Estimate: estimate.Options{NoCache: true, Model: "gpt-5", Window: 400000}})
	if err != nil || res.Outcome != compact.OutcomeSucceeded {
		t.Fatalf("compact: %v %+v", err, res)
	}
	summary := strings.TrimPrefix(sessiontest.StoredNode(t, session, res.SummaryID).Content.PlainText(), transcript.SummaryPrefix)

	const resumed = "019d0000-0000-7000-8000-0000000000e1"
	g, err := dag.Open(session, transcript.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	path := export.CodexPath(codexHome, resumed, time.Now())
	err = export.WriteFile(path, false, func(w io.Writer) error {
		_, err := export.Export(ctx, g, w, export.Codex, export.Options{SessionID: resumed, CWD: work})
		return err
	})
	g.S.Close()
	if err != nil {
		t.Fatal(err)
	}
	before := len(srv.Requests())
	run("resume", resumed, "Next question echo-8836.")
	var req string
	for _, r := range srv.Requests()[before:] {
		if strings.HasSuffix(r.Path, "/responses") && bytes.Contains(r.Body, []byte("echo-8836")) {
			req = string(r.Body)
		}
	}
	if req == "" {
		t.Fatal("Codex sent no request with the next question")
	}
	var body struct{ Input []json.RawMessage }
	if err := json.Unmarshal([]byte(req), &body); err != nil {
		t.Fatal(err)
	}
	summaryAt := -1
	for i, it := range body.Input {
		if summaryAt < 0 && strings.Contains(string(it), jsonText(firstLine(summary))) {
			summaryAt = i
			continue
		}
		for _, gone := range []string{"alpha-8831", "covered-output-8833", "charlie-8834"} {
			if strings.Contains(string(it), gone) {
				t.Errorf("input item %d of the resumed request carries the covered turn text %q", i, gone)
			}
		}
	}
	if summaryAt < 0 || !strings.Contains(req, "Kept turn delta-8835.") {
		t.Fatalf("the resumed request lacks the summary (at %d) or the kept tail", summaryAt)
	}
	t.Logf("the resumed request: %d input items, the summary at %d", len(body.Input), summaryAt)
	back := filepath.Join(t.TempDir(), "back")
	if _, err := importer.Import(ctx, importer.Options{From: importer.Auto, Files: []string{path}, Out: back}); err != nil {
		t.Fatal(err)
	}
	view := sessiontest.Rendered(t, back, render.FormatText)
	k, q := strings.Index(view, "Kept turn delta-8835."), strings.Index(view, "Next question echo-8836.")
	if k < 0 || q < k || !strings.Contains(view[q:], "assistant") {
		t.Fatalf("the re-imported view does not show the new question and its reply after the kept tail:\n%s", view)
	}
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "#") {
			return l
		}
	}
	return s
}

func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

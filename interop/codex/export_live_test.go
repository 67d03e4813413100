package codex_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/compact"
	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/export"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/internal/fake/openai"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/summarize"
	"github.com/ctxfold/ctxfold/transcript"

	"github.com/ctxfold/ctxfold/internal/hooktest"
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
	bin := codexBin(t)
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
	// The uncompacted session exported as it is, resumed below.
	const resumedRaw = "019d0000-0000-7000-8000-0000000000e2"
	exportCodex(ctx, t, session, codexHome, work, resumedRaw)
	res, err := compact.Compact(ctx, compact.Options{Dir: session, Summarizer: summarize.Extractive{}, KeepTokens: 1,
		Estimate: estimate.Options{NoCache: true, Model: "gpt-5", Window: 400000}})
	if err != nil || res.Outcome != compact.OutcomeSucceeded {
		t.Fatalf("compact: %v %+v", err, res)
	}
	summary := strings.TrimPrefix(sessiontest.StoredNode(t, session, res.SummaryID).Content.PlainText(), transcript.SummaryPrefix)

	const resumed = "019d0000-0000-7000-8000-0000000000e1"
	path := exportCodex(ctx, t, session, codexHome, work, resumed)
	// The reference: the same question on a plain resume of the original,
	// which sends every covered turn again.
	original := strings.TrimSuffix(filepath.Base(rollouts[0]), ".jsonl")
	original = original[len(original)-36:]
	plain := lastRequest(t, srv, func() { run("resume", original, "Next question echo-8836.") }, "echo-8836")
	req := lastRequest(t, srv, func() { run("resume", resumed, "Next question echo-8836.") }, "echo-8836")
	var body struct{ Input []json.RawMessage }
	if err := json.Unmarshal([]byte(req), &body); err != nil {
		t.Fatal(err)
	}
	summaryAt := -1
	for i, it := range body.Input {
		if summaryAt < 0 && strings.Contains(string(it), hooktest.JSONText(firstLine(summary))) {
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
	compareWithPlainResume(t, plain, req, summaryAt, "alpha-8831")
	raw := lastRequest(t, srv, func() { run("resume", resumedRaw, "Next question echo-8836.") }, "echo-8836")
	if got, want := countItems(inputItems(t, raw)), countItems(inputItems(t, plain)); !reflect.DeepEqual(got, want) {
		t.Errorf("the uncompacted export's resume sends other input items than a plain resume (%d and %d bytes)", len(raw), len(plain))
		for it, n := range got {
			if want[it] != n {
				t.Logf("sent %d times (plain resume: %d): %.120s", n, want[it], it)
			}
		}
	}
	t.Logf("the uncompacted export's resume: %d bytes (the plain resume %d)", len(raw), len(plain))
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

// exportCodex exports the session's HEAD where Codex looks for session
// id, and returns the path.
func exportCodex(ctx context.Context, t *testing.T, session, codexHome, work, id string) string {
	t.Helper()
	g, err := dag.Open(session, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	path := export.CodexPath(codexHome, id, time.Now())
	err = export.WriteFile(path, false, func(w io.Writer) error {
		_, err := export.Export(ctx, g, w, export.Codex, export.Options{SessionID: id, CWD: work})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// dropEmptyAnnotations removes the empty annotations Codex adds to the
// output_text parts it recorded itself.
func dropEmptyAnnotations(item map[string]any) {
	parts, _ := item["content"].([]any)
	for _, p := range parts {
		if m, ok := p.(map[string]any); ok {
			if a, ok := m["annotations"].([]any); ok && len(a) == 0 {
				delete(m, "annotations")
			}
		}
	}
}

func countItems(list []string) map[string]int {
	n := map[string]int{}
	for _, s := range list {
		n[s]++
	}
	return n
}

// lastRequest runs a client command and returns the last Responses request
// it sent that carries marker.
func lastRequest(t *testing.T, srv *openai.Server, run func(), marker string) string {
	t.Helper()
	before := len(srv.Requests())
	run()
	var req string
	for _, r := range srv.Requests()[before:] {
		if strings.HasSuffix(r.Path, "/responses") && bytes.Contains(r.Body, []byte(marker)) {
			req = string(r.Body)
		}
	}
	if req == "" {
		t.Fatalf("Codex sent no request with %q", marker)
	}
	return req
}

// compareWithPlainResume checks the resumed export's request against a
// plain resume of the original with the same question (issue 29 item 1).
// The plain resume sends a prefix before the first covered turn
// (firstCovered): the base instructions, then the context Codex builds
// itself (skills, environment). The resumed export must send the same base
// instructions first, then the summary; every item of that prefix exactly
// once (Codex adds its own context again to a rollout that records no
// world state, as an export does, just before the new question); no
// developer message twice (compared by its first line: a copy may differ
// in its plan paragraphs); and fewer bytes than the uncompacted request.
func compareWithPlainResume(t *testing.T, plain, exported string, summaryAt int, firstCovered string) {
	t.Helper()
	p, e := inputItems(t, plain), inputItems(t, exported)
	var prefix []string
	for _, it := range p {
		if strings.Contains(it, firstCovered) {
			break
		}
		prefix = append(prefix, it)
	}
	t.Logf("plain resume: %d bytes, %d input items (%d before the first covered turn); resumed export: %d bytes, %d input items, the summary at %d",
		len(plain), len(p), len(prefix), len(exported), len(e), summaryAt)
	for i, it := range e {
		t.Logf("resumed export, item %d: %.100s", i, it)
	}
	if len(prefix) == 0 || summaryAt != 1 || e[0] != prefix[0] {
		t.Errorf("the resumed export does not send the plain resume's base instructions and then the summary (summary at %d)", summaryAt)
	}
	for _, it := range prefix {
		if n := count(e, it); n != 1 {
			t.Errorf("the plain resume's prefix item %.100s is sent %d times", it, n)
		}
	}
	firstLines := map[string]int{}
	for i, it := range e {
		if !strings.Contains(it, `"role":"developer"`) {
			continue
		}
		first := strings.SplitN(it, `\n`, 2)[0]
		if j, dup := firstLines[first]; dup {
			t.Errorf("developer messages %d and %d are copies of one instruction block (%.100s)", j, i, first)
		}
		firstLines[first] = i
	}
	if len(exported) >= len(plain) {
		t.Errorf("the resumed export's request (%d bytes) is not smaller than the uncompacted plain resume's (%d)", len(exported), len(plain))
	}
}

// inputItems are a request's input items, re-encoded with sorted keys and
// without Codex's item bookkeeping (id, status).
func inputItems(t *testing.T, req string) []string {
	t.Helper()
	var body struct{ Input []map[string]any }
	if err := json.Unmarshal([]byte(req), &body); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range body.Input {
		delete(it, "id")
		delete(it, "status")
		dropEmptyAnnotations(it)
		b, _ := json.Marshal(it)
		out = append(out, string(b))
	}
	return out
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

package claudecodeinterop

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

	"github.com/ctxfold/ctxfold/internal/fake/anthropic"

	"github.com/ctxfold/ctxfold/internal/hooktest"
)

// clientSummary is a line of the fake's answer to Claude Code's /compact:
// a summary that keeps none of the planted facts.
const clientSummary = "the user exercised a scripted fake provider"

// TestLiveUncompactResume is issue 39's acceptance with the real client:
// a session plants facts (hooktest.Planted), the client's own /compact
// drops every one of them, and `ctxfold uncompact FILE --export
// claude-code` hands the whole history back as a new session. Resumed with
// `claude --resume ID`, the request carries every planted fact verbatim
// and not the client's summary; with `--recompact --keep-tokens 200` it
// carries every planted fact and ctxfold's summary instead of the
// client's, and is smaller than the whole history. The original
// transcript is byte-identical afterwards.
func TestLiveUncompactResume(t *testing.T) {
	client := liveClient(t)
	bin := hooktest.Build(t)
	tmp, _ := filepath.EvalSymlinks(t.TempDir())
	home, work, reqs := filepath.Join(tmp, "home"), filepath.Join(tmp, "work"), filepath.Join(tmp, "requests")
	for _, d := range []string{home, work} {
		_ = os.MkdirAll(d, 0o755)
	}
	srv, err := anthropic.Start(anthropic.Options{RecordDir: reqs})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg := Config{Client: client, StepTimeout: 2 * time.Minute, Log: testLog{t}}
	steps := []Step{printStep(hookTurns[0], "--session-id", sessA)}
	for _, p := range hookTurns[1:] {
		steps = append(steps, printStep(p, "--resume", sessA))
	}
	steps = append(steps, printStep("/compact", "--resume", sessA), printStep(nextPrompt, "--resume", sessA))
	for i, st := range steps {
		if err := runStep(ctx, cfg, srv.URL, home, work, st); err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
	}
	compacted := messagesOnly(t, mainRequest(t, reqs, 0, hooktest.JSONText(nextPrompt)))
	if !strings.Contains(compacted, clientSummary) {
		t.Fatal("the request after /compact does not carry the client's summary: did it compact?")
	}
	before := hooktest.Measure("client", hooktest.Planted, []byte(compacted), len(compacted), nil)
	file := filepath.Join(home, ".claude", "projects", slug(work), sessA+".jsonl")
	original, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	resume := func(args ...string) (msgs string, out uncompactOut) {
		t.Helper()
		cmd := exec.CommandContext(ctx, bin, append([]string{"uncompact", file, "--export", "claude-code", "--json"}, args...)...)
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "XDG_CACHE_HOME=" + filepath.Join(tmp, "cache")}
		b, err := cmd.Output()
		if err != nil || json.Unmarshal(b, &out) != nil || out.SessionID == "" {
			t.Fatalf("uncompact %v: %v\n%s", args, err, b)
		}
		from := countFiles(t, reqs)
		question := "After the undo echo-7741 " + strings.Join(args, " ")
		if err := runStep(ctx, cfg, srv.URL, home, work, printStep(question, "--resume", out.SessionID)); err != nil {
			t.Fatalf("the client did not resume %s: %v", out.SessionID, err)
		}
		return messagesOnly(t, mainRequest(t, reqs, from, hooktest.JSONText(question))), out
	}
	whole, _ := resume()
	r := hooktest.Measure("uncompacted", hooktest.Planted, []byte(whole), len(whole), func(f hooktest.Fact) { t.Errorf("uncompacted: lost %s %q", f.Kind, f.Text) })
	if strings.Contains(whole, clientSummary) {
		t.Errorf("the uncompacted resume still sends the client's summary")
	}
	re, out := resume("--recompact", "--keep-tokens", "200")
	rr := hooktest.Measure("recompacted", hooktest.Planted, []byte(re), len(re), func(f hooktest.Fact) { t.Errorf("recompacted: lost %s %q", f.Kind, f.Text) })
	if strings.Contains(re, clientSummary) || !strings.Contains(re, out.summaryLine(t)) {
		t.Errorf("the recompacted resume does not send ctxfold's summary in place of the client's")
	}
	if len(re) >= len(whole) {
		t.Errorf("the recompacted resume (%d bytes of messages) is not smaller than the whole history (%d)", len(re), len(whole))
	}
	if now, _ := os.ReadFile(file); !bytes.Equal(now, original) {
		t.Errorf("the original transcript changed")
	}
	t.Logf("planted facts in the request: after the client's /compact %d/%d (%d bytes of messages); uncompacted %d/%d (%d bytes); recompacted %d/%d (%d bytes; %d of the %d facts audit found dropped kept)",
		before.KeptCount, before.Planted, len(compacted), r.KeptCount, r.Planted, len(whole), rr.KeptCount, rr.Planted, len(re),
		out.Recompact.Kept, out.Recompact.Dropped)
}

// uncompactOut is the part of uncompact FILE --export --json the test reads.
type uncompactOut struct {
	SessionID string `json:"session_id"`
	Output    string `json:"output"`
	Recompact struct {
		SummaryID string `json:"summary_id"`
		Dropped   int    `json:"client_dropped"`
		Kept      int    `json:"kept_of_client_dropped"`
	} `json:"recompact"`
}

// summaryLine is the first line of the summary the export wrote (its
// isCompactSummary line), as JSON text.
func (o uncompactOut) summaryLine(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(o.Output)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		var l struct {
			IsCompactSummary bool `json:"isCompactSummary"`
			Message          struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &l) == nil && l.IsCompactSummary {
			var s string
			if json.Unmarshal(l.Message.Content, &s) != nil {
				s = string(l.Message.Content)
			}
			first, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
			return hooktest.JSONText(first)
		}
	}
	t.Fatalf("%s holds no summary line", o.Output)
	return ""
}

package cmd

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/report"
)

// Issue 44 item 7: Ctrl-C while an exec or openai summarizer runs exits
// 130, as an interrupted extractive compaction or import does, not 3; the
// compaction_failed event still says "cancelled".
func TestCompactInterruptedWhileSummarizing(t *testing.T) {
	stop := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // a model that never answers
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	defer hang.Close()
	defer close(stop)
	for name, args := range map[string][]string{
		"exec":   {"--summarizer", "exec", "--summarizer-cmd", "sleep 30"},
		"openai": {"--summarizer", "openai", "--base-url", hang.URL, "--summary-model", "m"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := sessiontest.CopyFixture(t, "tools")
			ios, _, _, errOut := report.Test()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			time.AfterFunc(500*time.Millisecond, cancel)
			xdg := t.TempDir()
			f := &Factory{IO: ios, Now: func() time.Time { return coreNow }, Getenv: func(k string) string {
				switch k {
				case "XDG_CONFIG_HOME":
					return xdg
				case "CTXFOLD_API_KEY":
					return "k"
				}
				return ""
			}}
			start := time.Now()
			code := Run(ctx, f, append([]string{"compact", dir, "--keep-tokens", "300"}, args...))
			if code != ExitInterrupted || !strings.Contains(errOut.String(), "interrupted") {
				t.Fatalf("exit %d, stderr %q", code, errOut.String())
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %s to stop", d)
			}
			lines := strings.Split(strings.TrimSpace(readSessionFile(t, dir, "events.jsonl")), "\n")
			if last := lines[len(lines)-1]; !strings.Contains(last, `"compaction_failed"`) || !strings.Contains(last, `"error":"cancelled"`) {
				t.Errorf("last event %s", last)
			}
		})
	}
}

package cmd

import (
	"net"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
)

// Issue 44 item 13: the openai summarizer retrying a refused connection
// says so on stderr, attempt by attempt, instead of waiting in silence.
func TestOpenAIRetriesAreTold(t *testing.T) {
	// A port that refuses: listen, note the address, close.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String() + "/v1"
	l.Close()
	dir := sessiontest.CopyFixture(t, "tools")
	// --dry-run does not call the openai summarizer; render --fit does,
	// with a short deadline (the retries wait 1 s, 2 s, …).
	r := cliRun(t, map[string]string{"CTXFOLD_API_KEY": "k"}, false, "render", dir, "--fit", "--window", "1200", "--no-calibrate",
		"--summarizer", "openai", "--base-url", url, "--summary-model", "m", "--summary-deadline", "2500ms", "--format", "ids")
	if !strings.Contains(r.Stderr, "ctxfold: warning: openai summarizer: attempt 1 of 5 failed (") || !strings.Contains(r.Stderr, "connection refused") ||
		!strings.Contains(r.Stderr, "retrying in 1s") {
		t.Errorf("exit %d, stderr %q", r.Code, r.Stderr)
	}
}

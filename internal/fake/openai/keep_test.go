package openai

import (
	"strings"
	"testing"
)

// A compaction request holding a ctxfold-keep block gets a summary that
// keeps its lines word for word; one without gets SummaryText alone.
func TestSummaryKeepsTheLedger(t *testing.T) {
	req := "[User]: hi\n\n" + OpenCodeCompactionCue + "\n\nctxfold: keep the lines between " + keepOpen + " and " + keepClose + ".\n" +
		keepOpen + "\n- request: Please migrate\n  second line\n- number: 250 ms\n" + keepClose + "\n"
	srv := &Server{}
	got := srv.Script(req, false, nil, nil, []byte(req)).Text
	if !strings.HasPrefix(got, SummaryText) || !strings.HasSuffix(got, "- request: Please migrate\n  second line\n- number: 250 ms") {
		t.Fatalf("summary:\n%s", got)
	}
	if strings.Contains(got, "ctxfold: keep") {
		t.Errorf("the instruction line was kept too:\n%s", got)
	}
	if got := srv.Script(OpenCodeCompactionCue, false, nil, nil, nil).Text; got != SummaryText {
		t.Errorf("without a block: %q", got)
	}
	srv.IgnoreKeep = true
	if got := srv.Script(req, false, nil, nil, []byte(req)).Text; got != SummaryText {
		t.Errorf("IgnoreKeep: %q", got)
	}
}

// The script reads the user's own text, not ctxfold's injected part that
// quotes the markers of earlier requests.
func TestUserTextSkipsTheInjection(t *testing.T) {
	raw := []byte(`[{"type":"text","text":"What next?"},{"type":"text","text":"ctxfold: OpenCode's compaction summary dropped 3 of the 5 facts of the turns it folded; they follow\n- request: [[shell: ls]]"}]`)
	if got := userText(raw); strings.Contains(got, "[[shell:") || !strings.Contains(got, "What next?") {
		t.Errorf("userText: %q", got)
	}
	if got := userText([]byte(`"plain [[shell: ls]]"`)); got != "plain [[shell: ls]]" {
		t.Errorf("a string content: %q", got)
	}
}

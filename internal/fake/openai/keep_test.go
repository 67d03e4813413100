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
}

package opencode_test

// A real public `opencode export` of OpenCode 1.15.5 with two automatic
// compactions, excerpted (provenance and what was replaced:
// fixtures/import/opencode/README.md), and the status line OpenCode's
// export command prints before the document, which saved files keep.

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/format/opencode"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/transcript"
)

const publicExport = "../../fixtures/import/opencode/public-k1-export-1.15.5.json"

// TestPublicExport: the excerpt, which starts with "Exporting session:
// ses_…" as the file committed upstream does, is detected and imports
// with both compactions as summary nodes covering the turns before their
// tail_start_id, and nothing skipped but the summarizer's reasoning.
func TestPublicExport(t *testing.T) {
	head, err := os.ReadFile(publicExport)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(head), "Exporting session: ses_") || !opencode.Detect(head) {
		t.Fatal("the export, after its status line, is not detected")
	}
	tg, err := importFile(t, publicExport, opencode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := tg.Convs[0]
	if c.Name != "ses_1be58628dffeUlqtrOC0XgUH2I" || c.Model != "minimax-m2.7:cloud" || len(c.Warnings) != 0 {
		t.Fatalf("name %q model %q warnings %q", c.Name, c.Model, c.Warnings)
	}
	pos := map[string]int{}
	var sums []transcript.Node
	for i, n := range c.Nodes {
		pos[n.ID] = i
		if n.IsSummary() {
			sums = append(sums, n)
		}
	}
	tails := []string{"msg_e431ef81b001GjV6FnxMb1oCoV", "msg_e4c9b12e4001qn3GtNybXK2IpE"}
	if len(sums) != 2 {
		t.Fatalf("%d summary nodes, want the export's 2 compactions", len(sums))
	}
	for k, s := range sums {
		var tail string
		json.Unmarshal(s.Metadata["opencode_tail_start_id"], &tail)
		if tail != tails[k] {
			t.Errorf("summary %d: tail %q, want %q", k, tail, tails[k])
		}
		// It covers every real node before its tail, the first
		// summary's turns again for the second (it re-summarises them).
		real := 0
		for _, n := range c.Nodes[:pos[tail]] {
			if !n.IsSummary() {
				real++
			}
		}
		if got := len(s.CoversIDs()); got != real || got == 0 {
			t.Errorf("summary %d covers %d nodes, %d real nodes precede its tail", k, got, real)
		}
		var sent []map[string]any
		if err := json.Unmarshal(s.Metadata[transcript.MetaOpenAIMessages], &sent); err != nil || len(sent) != 2 ||
			sent[0]["content"] != "What did we do so far?" || !strings.HasPrefix(sent[1]["content"].(string), "## Goal") {
			t.Errorf("summary %d as OpenCode sends it: %v %v", k, sent, err)
		}
	}
	// Every record is a node or merged, but the summarizer's reasoning,
	// which OpenCode never sends.
	for k, v := range c.Counts {
		if k[1] == transcript.OutcomeSkipped && (k[0] != "part/reasoning" || v != 2) {
			t.Errorf("%s: %d skipped (%s)", k[0], v, c.Reasons[k])
		}
	}
	if c.Counts[[2]string{"part/compaction", transcript.OutcomeMerged}] != 2 {
		t.Errorf("counts %v", c.Counts)
	}
}

// TestExportStatusLine: the status line before the document, as OpenCode
// wrote it (with a newline, or none as in anomalyco/opencode#12130, or
// "latest"), is skipped; an error in the document still names the file's
// own line; a status line before something else is no export.
func TestExportStatusLine(t *testing.T) {
	doc := "{\n \"info\": {\"id\": \"ses_1\"},\n \"messages\": [{\"info\": {\"id\": \"msg_1\", \"role\": \"user\"}, \"parts\": [{\"type\": \"text\", \"text\": \"hi\"}]}]}\n"
	for _, lead := range []string{"Exporting session: ses_1\n", "Exporting session: ses_1", "Exporting session: latest\r\n", "\xef\xbb\xbf"} {
		path := filepath.Join(t.TempDir(), "export.json")
		os.WriteFile(path, []byte(lead+doc), 0o644)
		head, _ := os.ReadFile(path)
		if !opencode.Detect(head) {
			t.Errorf("%q: not detected", lead)
		}
		tg, err := importFile(t, path, opencode.Options{})
		if err != nil || len(tg.Convs) != 1 || len(tg.Convs[0].Nodes) != 1 {
			t.Errorf("%q: %v", lead, err)
		}
	}
	path := filepath.Join(t.TempDir(), "export.json")
	os.WriteFile(path, []byte("Exporting session: ses_1\n{\"info\": {\"id\": \"ses_1\"},\n\"messages\": [\n{\"parts\": []}]}"), 0o644)
	_, err := importFile(t, path, opencode.Options{})
	var pe *transcript.ParseError
	if !errors.As(err, &pe) || pe.Line != 4 || !strings.Contains(err.Error(), "no info") {
		t.Errorf("got %v, want the error at line 4 of the file", err)
	}
	for _, head := range []string{"Exporting session: ses_1\n[]", "Exporting session: ses_1\nExporting session: ses_1\n{\"info\": {\"id\": \"ses_1\"}, \"messages\": []}"} {
		if opencode.Detect([]byte(head)) {
			t.Errorf("%q detected as an export", head)
		}
	}
}

// TestPublicExportWhole: the whole export the excerpt comes from, when
// the shared real transcripts hold it (a byte-exact copy of blob 3458a47b,
// fixtures/import/opencode/README.md): every one of its 619 messages is a
// node or merged into one, both compactions are summary nodes, and only
// the summarizer's reasoning is skipped.
func TestPublicExportWhole(t *testing.T) {
	file := sessiontest.External(t, "opencode", "klan1-k1.lib-bootstrap", "session-export.json")
	tg, err := importFile(t, file, opencode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := tg.Convs[0]
	sums := 0
	for _, n := range c.Nodes {
		if n.IsSummary() {
			sums++
		}
	}
	msgs := 0
	for k, v := range c.Counts {
		if strings.HasPrefix(k[0], "message/") {
			msgs += v
		}
		if k[1] == transcript.OutcomeSkipped && (k[0] != "part/reasoning" || v != 2) {
			t.Errorf("%s: %d skipped (%s)", k[0], v, c.Reasons[k])
		}
	}
	if sums != 2 || msgs != 619 || len(c.Nodes) != 1106 || len(c.Warnings) != 0 {
		t.Errorf("%d summaries, %d messages, %d nodes, warnings %q", sums, msgs, len(c.Nodes), c.Warnings)
	}
}

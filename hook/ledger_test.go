package hook

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/estimate"
)

// runLedger runs PreCompact for file in the dialect of client.
func runLedger(t *testing.T, client, file, cache string) *Result {
	t.Helper()
	event := "session_before_compact"
	if client == "Claude Code" {
		event = "PreCompact"
	}
	b, _ := json.Marshal(map[string]string{"hook_event_name": event, "transcript_path": file})
	in, err := ParseAs(DialectOf(client), b)
	if err != nil {
		t.Fatal(err)
	}
	if in.Event != EventPreCompact {
		t.Fatalf("%s read as %q", event, in.Event)
	}
	res, err := Run(context.Background(), in, Options{CacheDir: cache, Client: client})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// ledgerText is the additionalContext of a hook's output.
func ledgerText(t *testing.T, out []byte) string {
	t.Helper()
	var o struct {
		HookSpecificOutput struct{ AdditionalContext string } `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(out, &o); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	return o.HookSpecificOutput.AdditionalContext
}

// Before a compaction, a ledger dialect's PreCompact prints the facts of
// the turns about to be folded between the keep lines; a dialect without
// the ledger prints nothing.
func TestLedgerBeforeCompaction(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.jsonl")
	pre, _ := cut(t, `"subtype":"compact_boundary"`)
	if err := os.WriteFile(file, pre, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := runLedger(t, "Claude Code", file, filepath.Join(dir, "c1")); r.Output != nil {
		t.Fatalf("Claude Code's PreCompact printed: %s", r.Output)
	}
	r := runLedger(t, "pi", file, filepath.Join(dir, "c2"))
	text := ledgerText(t, r.Output)
	lines := strings.Split(text, "\n")
	open, close := -1, -1
	for i, l := range lines {
		switch l {
		case KeepOpen:
			open = i
		case KeepClose:
			close = i
		}
	}
	if open < 1 || close != len(lines)-1 || close-open < 3 {
		t.Fatalf("no keep block (open %d, close %d):\n%s", open, close, text)
	}
	if !strings.Contains(lines[0], "Keep every line") {
		t.Errorf("no instruction before the block: %q", lines[0])
	}
	body := strings.Join(lines[open+1:close], "\n")
	for _, want := range []string{"- request: Before compaction, turn one.", "- request: Before compaction, turn two. [[bash:echo kept-by-compaction]]"} {
		if !strings.Contains(body, want) {
			t.Errorf("ledger lacks %q:\n%s", want, body)
		}
	}
	if r.Ledger == nil || r.Ledger.Shown != r.Ledger.Facts || r.Ledger.Tokens == 0 {
		t.Errorf("figures: %+v", r.Ledger)
	}
	if n, _ := estimate.Text(estimate.O200kBase, text); n != r.Ledger.Tokens {
		t.Errorf("tokens %d, counted %d", r.Ledger.Tokens, n)
	}
}

// After a compaction, the ledger holds only the turns after the summary.
func TestLedgerOnlyAfterTheSummary(t *testing.T) {
	dir := t.TempDir()
	_, full := cut(t, `"subtype":"compact_boundary"`)
	file := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(file, full, 0o644); err != nil {
		t.Fatal(err)
	}
	text := ledgerText(t, runLedger(t, "pi", file, filepath.Join(dir, "c")).Output)
	if !strings.Contains(text, "After compaction, turn three.") || !strings.Contains(text, "After compaction, turn four.") {
		t.Errorf("the turns after the summary are missing:\n%s", text)
	}
	if strings.Contains(text, "Before compaction") {
		t.Errorf("the ledger lists folded turns again:\n%s", text)
	}
}

// ComposeLedger keeps to the budget: what does not fit is left out, the
// block stays whole.
func TestComposeLedgerBudget(t *testing.T) {
	items := []Item{{Label: "request", Text: strings.Repeat("long request ", 200)}, {Label: "path", Text: "a/b.go"}, {Label: "number", Text: "250 ms"}}
	c, err := ComposeLedger(items, estimate.O200kBase, 120)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(c.Text, "long request") || !strings.Contains(c.Text, "- path: a/b.go\n- number: 250 ms\n"+KeepClose) || c.Shown != 2 {
		t.Fatalf("budget 120: shown %d\n%s", c.Shown, c.Text)
	}
	if c.Tokens > 120 {
		t.Errorf("%d tokens over the budget of 120", c.Tokens)
	}
	if c, _ := ComposeLedger(items, estimate.O200kBase, 10); c.Text != "" {
		t.Errorf("nothing fits, yet: %q", c.Text)
	}
}

// The plugin clients' event names map onto ctxfold's.
func TestPluginEvents(t *testing.T) {
	for client, evs := range map[string][3]string{
		"OpenCode": {"experimental.session.compacting", "session.compacted", "chat.message"},
		"Kilo":     {"experimental.session.compacting", "session.compacted", "chat.message"},
		"pi":       {"session_before_compact", "session_compact", "before_agent_start"},
	} {
		for i, want := range []string{EventPreCompact, EventPostCompact, EventUserPromptSubmit} {
			in, err := ParseAs(DialectOf(client), []byte(`{"hook_event_name":"`+evs[i]+`","session_id":"s"}`))
			if err != nil || in.Event != want || in.ClientEvent != evs[i] {
				t.Errorf("%s %s: %q %v", client, evs[i], in.Event, err)
			}
		}
		if !DialectOf(client).Ledger {
			t.Errorf("%s: no ledger", client)
		}
	}
	// Kilo's plugin also runs the hook on the first request after its
	// compaction (setup/opencode_plugin.js).
	in, err := ParseAs(DialectOf("Kilo"), []byte(`{"hook_event_name":"experimental.chat.messages.transform","session_id":"s"}`))
	if err != nil || in.Event != EventUserPromptSubmit {
		t.Errorf("Kilo experimental.chat.messages.transform: %q %v", in.Event, err)
	}
}

package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/estimate"
)

// recorded is Claude Code 2.1.328's own transcript of two turns, /compact
// and two more turns (testdata/interop, docs/INTEROP-claude-code.md).
var recorded = filepath.Join("..", "testdata", "interop", "claude-code", "2.1.328", "compact", "transcript",
	"00000000-0000-4000-8000-000000000001.jsonl")

// cut returns the recording up to (without) the line holding marker, and
// the whole recording: what the transcript held when PreCompact ran, and
// after the client wrote its compaction record.
func cut(t *testing.T, marker string) (pre, full []byte) {
	t.Helper()
	full, err := os.ReadFile(recorded)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(full, []byte(marker))
	if i < 0 {
		t.Fatalf("%s: no %q", recorded, marker)
	}
	return full[:bytes.LastIndexByte(full[:i], '\n')+1], full
}

func run(t *testing.T, event, source, file, cache string) *Result {
	t.Helper()
	return runAs(t, event, source, file, cache)
}

// runAs runs the hook for an event as a client spells it.
func runAs(t *testing.T, event, source, file, cache string) *Result {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"hook_event_name": event, "source": source, "transcript_path": file,
		"session_id": "00000000-0000-4000-8000-000000000001"})
	in, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), in, Options{CacheDir: cache, Client: "Claude Code"})
	if err != nil {
		t.Fatalf("%s: %v", event, err)
	}
	return res
}

// The order Claude Code 2.1.328 really runs them in (recorded in
// docs/HOOKS.md): PreCompact, SessionStart compact and PostCompact before
// its compaction record is written; the next prompt's UserPromptSubmit
// after. Only that one injects, once.
func TestCompactionInjectsDroppedFactsOnce(t *testing.T) {
	dir := t.TempDir()
	file, cache := filepath.Join(dir, "s.jsonl"), filepath.Join(dir, "cache")
	pre, full := cut(t, `"subtype":"compact_boundary"`)
	if err := os.WriteFile(file, pre, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run(t, EventUserPromptSubmit, "", file, cache); r.Output != nil || r.Update != "" {
		t.Fatalf("a prompt with no compaction pending read the transcript or printed: %+v", r)
	}
	for _, ev := range [][2]string{{EventPreCompact, ""}, {EventSessionStart, "compact"}, {EventPostCompact, ""}} {
		r := run(t, ev[0], ev[1], file, cache)
		if r.Output != nil {
			t.Fatalf("%s printed before the compaction record exists: %s", ev[0], r.Output)
		}
		if ev[0] == EventPreCompact && r.Update != "fresh" {
			t.Fatalf("PreCompact did not import the transcript: update %q", r.Update)
		}
	}
	if err := os.WriteFile(file, full, 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, EventUserPromptSubmit, "", file, cache)
	if r.Injected == nil || r.Output == nil {
		t.Fatalf("no injection after the compaction record appeared: %+v", r)
	}
	event, ctx := hookContext(t, r.Output)
	if event != EventUserPromptSubmit {
		t.Fatalf("hookEventName %q", event)
	}
	// The fake's summary keeps nothing of the turns: the user's requests
	// and the command that ran must come back, requests first.
	for _, want := range []string{"Before compaction, turn one.", "echo kept-by-compaction", "search_history"} {
		if !strings.Contains(ctx, want) {
			t.Errorf("injected context lacks %q:\n%s", want, ctx)
		}
	}
	if lines := strings.Split(ctx, "\n"); len(lines) < 2 || !strings.HasPrefix(lines[1], "- request [") {
		t.Errorf("requests do not come first:\n%s", ctx)
	}
	if r.Injected.Missing == 0 || r.Injected.Shown == 0 || r.Injected.Tokens > r.Injected.Budget {
		t.Errorf("figures: %+v", r.Injected)
	}
	if again := run(t, EventUserPromptSubmit, "", file, cache); again.Output != nil {
		t.Fatalf("the same compaction was injected twice: %s", again.Output)
	}
	if again := run(t, EventSessionStart, "compact", file, cache); again.Output != nil {
		t.Fatalf("a repeated SessionStart injected the same compaction again: %s", again.Output)
	}
}

// Gemini CLI 0.61: PreCompress before (every) compression attempt, then on
// the next prompt BeforeAgent, which injects, naming its own event.
func TestGeminiEventsInject(t *testing.T) {
	dir := t.TempDir()
	file, cache := filepath.Join(dir, "s.jsonl"), filepath.Join(dir, "cache")
	pre, full := cut(t, `"subtype":"compact_boundary"`)
	_ = os.WriteFile(file, pre, 0o644)
	if r := runAs(t, "PreCompress", "", file, cache); r.Output != nil || r.Update != "fresh" {
		t.Fatalf("PreCompress: %+v", r)
	}
	_ = os.WriteFile(file, full, 0o644)
	r := runAs(t, "BeforeAgent", "", file, cache)
	if event, ctx := hookContext(t, r.Output); event != "BeforeAgent" || !strings.Contains(ctx, "Before compaction, turn one.") {
		t.Fatalf("BeforeAgent after the compression: %s", r.Output)
	}
	if again := runAs(t, "BeforeAgent", "", file, cache); again.Output != nil {
		t.Fatalf("injected twice: %s", again.Output)
	}
}

// A client that has written its record by the time SessionStart compact
// runs gets the facts there.
func TestSessionStartInjectsWhenTheRecordIsThere(t *testing.T) {
	dir := t.TempDir()
	file, cache := filepath.Join(dir, "s.jsonl"), filepath.Join(dir, "cache")
	pre, full := cut(t, `"subtype":"compact_boundary"`)
	_ = os.WriteFile(file, pre, 0o644)
	run(t, EventPreCompact, "", file, cache)
	_ = os.WriteFile(file, full, 0o644)
	if r := run(t, EventSessionStart, "startup", file, cache); r.Output != nil {
		t.Fatalf("SessionStart startup injected: %s", r.Output)
	}
	if r := run(t, EventSessionStart, "compact", file, cache); r.Output == nil {
		t.Fatal("SessionStart compact with the record present injected nothing")
	}
}

func TestComposeRespectsBudgetAndOrder(t *testing.T) {
	items := []Item{
		{Label: "request", Text: "Please migrate the cache to /srv/data/cache.db and never touch prod.", NodeIDs: []string{"n1"}},
		{Label: "path", Text: "/srv/data/cache.db", NodeIDs: []string{"n1"}},
		{Label: "error", Text: "panic: runtime error: index out of range [3] with length 3", NodeIDs: []string{"n4"}},
		{Label: "command", Text: "go test ./store/... -run TestMigrate", NodeIDs: []string{"n5"}},
		{Label: "number", Text: "350 ms", NodeIDs: []string{"n6"}},
	}
	full, err := Compose(items, ComposeOptions{Encoding: estimate.O200kBase, Budget: 10_000, Total: 9, Missing: 5})
	if err != nil {
		t.Fatal(err)
	}
	if full.Shown != 5 || strings.Count(full.Text, "/srv/data/cache.db") != 1 {
		t.Fatalf("want every item, the path once (inside the request):\n%s", full.Text)
	}
	if !strings.Contains(full.Text, "they follow") {
		t.Errorf("header does not say all follow:\n%s", full.Text)
	}
	n, _ := estimate.Text(estimate.O200kBase, full.Text)
	if n != full.Tokens {
		t.Errorf("Tokens %d, estimate counts %d", full.Tokens, n)
	}
	small, err := Compose(items, ComposeOptions{Encoding: estimate.O200kBase, Budget: full.Tokens - 5, Total: 9, Missing: 5})
	if err != nil {
		t.Fatal(err)
	}
	if small.Tokens > full.Tokens-5 || small.Shown >= full.Shown || !strings.Contains(small.Text, "never touch prod") {
		t.Fatalf("a smaller budget must drop the last items, keep the request and stay within it (%d tokens):\n%s", small.Tokens, small.Text)
	}
	if !strings.Contains(small.Text, "the most important follow") {
		t.Errorf("header of a cut list:\n%s", small.Text)
	}
	many := make([]string, 5000)
	for i := range many {
		many[i] = fmt.Sprintf("node-%d", i)
	}
	rep, err := Compose([]Item{{Label: "path", Text: "internal/x.go", NodeIDs: many}}, ComposeOptions{Encoding: estimate.O200kBase, Budget: 200, Total: 1, Missing: 1})
	if err != nil || rep.Shown != 1 || !strings.Contains(rep.Text, "[node-0,node-1,node-2,+4997 more]") {
		t.Fatalf("a fact repeated in 5000 nodes must still fit a small budget: %+v %v", rep, err)
	}
	if none, _ := Compose(nil, ComposeOptions{Encoding: estimate.O200kBase, Budget: 100}); none.Text != "" {
		t.Fatal("nothing dropped must compose nothing")
	}
}

func TestParseRejectsBadInput(t *testing.T) {
	for _, in := range []string{"", "   ", "{", "[1,2]", `{"transcript_path":"x"}`, strings.Repeat("x", MaxInput+1)} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%.20q) accepted", in)
		}
	}
	for _, name := range []string{"pre_compact", "PreCompress"} {
		in, err := Parse([]byte(`{"hook_event_name":"` + name + `","transcript_path":"x"}`))
		if err != nil || in.Event != EventPreCompact {
			t.Fatalf("%s: %+v %v", name, in, err)
		}
	}
}

func TestUnknownEventDoesNothing(t *testing.T) {
	res, err := Run(context.Background(), Input{Event: "Stop", TranscriptPath: "/nonexistent"}, Options{CacheDir: t.TempDir()})
	if err != nil || res.Output != nil {
		t.Fatalf("%+v %v", res, err)
	}
}

// What Claude Code, Codex and Gemini CLI really sent to their hooks in the acceptance
// runs (interop/claude-code/hooks.sh, interop/codex TestLiveHooks): every
// input parses, in the order the hook relies on — Claude Code runs
// PreCompact, SessionStart compact and PostCompact before it writes its
// record (the next prompt's UserPromptSubmit injects); Codex runs
// PreCompact, PostCompact, then SessionStart compact with the record written.
func TestRecordedHookInputs(t *testing.T) {
	want := map[string]string{
		"claude-code/2.1.328": "PreCompact/,SessionStart/compact,PostCompact/,UserPromptSubmit/",
		"codex/0.169.0":       "PreCompact/,PostCompact/,SessionStart/compact",
		// Gemini CLI 0.61: PreCompress before every model call (the last
		// two around the compression), BeforeAgent on the next prompt.
		"gemini-cli/0.61.0": "PreCompact/,PreCompact/,SessionStart/resume,UserPromptSubmit/",
	}
	for dir, order := range want {
		files, _ := filepath.Glob(filepath.Join("..", "testdata", "hook", dir, "hook-inputs", "*.json"))
		if len(files) == 0 {
			t.Fatalf("%s: no recorded hook inputs", dir)
		}
		var got []string
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			in, err := Parse(b)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if in.TranscriptPath == "" || in.SessionID == "" {
				t.Fatalf("%s: %+v", f, in)
			}
			got = append(got, in.Event+"/"+in.Source)
		}
		if !strings.Contains(strings.Join(got, ","), order) {
			t.Errorf("%s: recorded order %v, want %s in it", dir, got, order)
		}
	}
}

// A client named by --client gets its dialect; a name no row knows gets
// Claude Code's (the hook never breaks a client over its name).
func TestDialectOf(t *testing.T) {
	for name, want := range map[string]string{"Claude Code": "Claude Code", "claude-code": "Claude Code", "codex": "Codex", "GEMINI": "Gemini", "no such client": "Claude Code"} {
		if got := DialectOf(name).Name; got != want {
			t.Errorf("DialectOf(%q) = %q, want %q", name, got, want)
		}
	}
	d := Dialect{Name: "x", Events: map[string]string{"beforeFold": EventPreCompact}}
	in, err := ParseAs(d, []byte(`{"hook_event_name":"beforeFold","transcript_path":"t.jsonl"}`))
	if err != nil || in.Event != EventPreCompact || in.ClientEvent != "beforeFold" {
		t.Errorf("ParseAs: %+v, %v", in, err)
	}
	out, err := d.output(in, "facts")
	if err != nil || string(out) != `{"hookSpecificOutput":{"additionalContext":"facts","hookEventName":"beforeFold"}}` {
		t.Errorf("output %s, %v", out, err)
	}
}

// hookContext is the event and the additionalContext of a hook's
// hookSpecificOutput; it fails the test when output is none or not one.
func hookContext(t *testing.T, output []byte) (event, context string) {
	t.Helper()
	var out struct {
		HSO struct {
			Event   string `json:"hookEventName"`
			Context string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if output == nil || json.Unmarshal(output, &out) != nil {
		t.Fatalf("not a hookSpecificOutput: %s", output)
	}
	return out.HSO.Event, out.HSO.Context
}

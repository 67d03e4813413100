package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/format/input"
)

// copilotRecorded is GitHub Copilot CLI 1.0.102's own events.jsonl of a
// tool turn, a second turn, /compact and one more turn
// (docs/INTEROP-copilot.md).
var copilotRecorded = filepath.Join("..", "testdata", "interop", "copilot", "1.0.102", "compact", "events.jsonl")

// copilotInput is a hook input as Copilot CLI 1.0.102 sends it to a hook
// configured under a PascalCase event name (testdata/hook/copilot): no
// transcript_path but for PreCompact.
func copilotInput(t *testing.T, event, transcript string) Input {
	t.Helper()
	v := map[string]any{"hook_event_name": event, "session_id": "s-1", "timestamp": "2026-12-06T17:30:02.785Z", "cwd": "/w"}
	switch event {
	case "PreCompact":
		v["transcript_path"], v["trigger"], v["custom_instructions"] = transcript, "manual", ""
	case "UserPromptSubmit":
		v["prompt"] = "Third turn."
	}
	b, _ := json.Marshal(v)
	in, err := ParseAs(DialectOf("copilot"), b)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// Copilot CLI's prompt hook names no transcript: the Copilot dialect finds
// the session's events.jsonl under COPILOT_HOME from session_id, and
// prints the dropped facts as a top-level additionalContext (the only
// output field of its prompt hook that reaches the model).
func TestCopilotHookFindsTheSessionAndInjects(t *testing.T) {
	home := t.TempDir()
	file := filepath.Join(home, "session-state", "s-1", "events.jsonl")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	full, err := os.ReadFile(copilotRecorded)
	if err != nil {
		t.Fatal(err)
	}
	// A failing command's error only the tool's output holds: Copilot's
	// summary keeps the user's messages, not what tools printed.
	full = bytes.Replace(full, []byte(`"content":"before compaction\n<shellId: 0 completed with exit code 0>"`),
		[]byte(`"content":"ls: cannot access x: No such file or directory\n<shellId: 0 completed with exit code 2>"`), 1)
	i := bytes.Index(full, []byte(`"type":"session.compaction_start"`))
	pre := full[:bytes.LastIndexByte(full[:i], '\n')+1]
	if err := os.WriteFile(file, pre, 0o644); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(home, "cache")
	env := map[string]string{"COPILOT_HOME": home, "HOME": "/nonexistent"}
	opts := Options{CacheDir: cache, Client: "Copilot", Env: input.Env{Getenv: func(k string) string { return env[k] }}}
	if _, err := Run(context.Background(), copilotInput(t, "PreCompact", file), opts); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, full, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), copilotInput(t, "UserPromptSubmit", ""), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Transcript != file {
		t.Errorf("result names transcript %q, want %q", res.Transcript, file)
	}
	var out map[string]string
	if err := json.Unmarshal(res.Output, &out); err != nil || len(out) != 1 {
		t.Fatalf("output %s: want one top-level additionalContext (%v)", res.Output, err)
	}
	if ctx := out["additionalContext"]; !strings.Contains(ctx, "No such file or directory") {
		t.Fatalf("the error the summary dropped is not injected:\n%s", ctx)
	}
	// Without the environment the session is not found: an error, which
	// the command logs, never a guess.
	if _, err := Run(context.Background(), copilotInput(t, "UserPromptSubmit", ""), Options{CacheDir: cache, Client: "Copilot"}); err == nil {
		t.Fatal("a Copilot prompt hook without COPILOT_HOME or HOME found a transcript")
	}
}

func TestCopilotTranscript(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, c := range []struct {
		id   string
		env  map[string]string
		want string
	}{
		{"abc", map[string]string{"HOME": "/h"}, "/h/.copilot/session-state/abc/events.jsonl"},
		{"abc", map[string]string{"HOME": "/h", "COPILOT_HOME": "/c"}, "/c/session-state/abc/events.jsonl"},
		{"abc", map[string]string{"HOME": "/h", "COPILOT_HOME": "rel"}, "/h/.copilot/session-state/abc/events.jsonl"},
		{"../x", map[string]string{"HOME": "/h"}, ""},
		{"..", map[string]string{"HOME": "/h"}, ""},
		{"", map[string]string{"HOME": "/h"}, ""},
		{"abc", map[string]string{}, ""},
	} {
		if got := copilotTranscript(Input{SessionID: c.id}, env(c.env)); got != c.want {
			t.Errorf("%q %v: %q, want %q", c.id, c.env, got, c.want)
		}
	}
}

// What Copilot CLI 1.0.102 sent to hooks configured under its camelCase
// names (recorded by hand, docs/HOOKS.md): no event name.
func TestCopilotCamelCaseInputs(t *testing.T) {
	d := DialectOf("Copilot")
	for _, c := range []struct{ in, event, transcript string }{
		{`{"sessionId":"s-1","timestamp":1796578226192,"cwd":"/w","transcriptPath":"/h/.copilot/session-state/s-1/events.jsonl","trigger":"manual","customInstructions":""}`,
			EventPreCompact, "/h/.copilot/session-state/s-1/events.jsonl"},
		{`{"sessionId":"s-1","timestamp":1796578202785,"cwd":"/w","prompt":"First turn."}`, EventUserPromptSubmit, ""},
		{`{"hook_event_name":"UserPromptSubmit","session_id":"s-1","timestamp":"2026-12-06T17:30:02.785Z","cwd":"/w","prompt":"x"}`, EventUserPromptSubmit, ""},
	} {
		in, err := ParseAs(d, []byte(c.in))
		if err != nil || in.Event != c.event || in.SessionID != "s-1" || in.TranscriptPath != c.transcript {
			t.Errorf("%s: %+v, %v", c.in, in, err)
		}
	}
	// userPromptTransformed and sessionStart are no events of ctxfold's.
	for _, other := range []string{
		`{"sessionId":"s-1","timestamp":1,"cwd":"/w","prompt":"x","transformedPrompt":"<current_datetime>…</current_datetime>\n\nx"}`,
		`{"sessionId":"s-1","timestamp":1,"cwd":"/w","source":"new","initialPrompt":"x"}`,
	} {
		if in, err := ParseAs(d, []byte(other)); err == nil {
			t.Errorf("%s: parsed as %q", other, in.Event)
		}
	}
}

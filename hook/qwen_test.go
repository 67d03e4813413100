package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// qwenRecorded is Qwen Code 0.24.4's own session of a turn with a shell
// call, /compress and one more turn (testdata/interop/qwen-code,
// docs/INTEROP-qwen.md).
var qwenRecorded = filepath.Join("..", "testdata", "interop", "qwen-code", "0.24.4", "compress", "chats",
	"00000000-0000-4000-8000-000000000001.jsonl")

// runQwen runs the hook on the JSON Qwen Code sends (its recorded fields),
// through the dialect --client 'Qwen Code' picks.
func runQwen(t *testing.T, event, file, cache string) *Result {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"session_id": "00000000-0000-4000-8000-000000000001", "transcript_path": file,
		"cwd": "/interop/project", "hook_event_name": event, "timestamp": "2026-01-01T00:00:00.000Z", "permission_mode": "yolo",
		"trigger": "manual", "prompt": ""})
	d := DialectOf("Qwen Code")
	in, err := ParseAs(d, b)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), in, Options{CacheDir: cache, Client: d.Name})
	if err != nil {
		t.Fatalf("%s: %v", event, err)
	}
	return res
}

// Qwen Code's /compress: PreCompact before its compression request,
// PostCompact after it (setup installs no SessionStart hook, docs/HOOKS.md);
// the chat_compression record is imported as a summary and the next
// prompt's UserPromptSubmit — also the tool loop's, whose prompt is empty
// — injects what it dropped, once, in Claude Code's output shape.
func TestQwenCompressInjectsOnPrompt(t *testing.T) {
	full, err := os.ReadFile(qwenRecorded)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(full, []byte(`"subtype":"chat_compression"`))
	if i < 0 {
		t.Fatalf("%s: no chat_compression record", qwenRecorded)
	}
	dir := t.TempDir()
	file, cache := filepath.Join(dir, "00000000-0000-4000-8000-000000000001.jsonl"), filepath.Join(dir, "cache")
	_ = os.WriteFile(file, full[:bytes.LastIndexByte(full[:i], '\n')+1], 0o644)
	if r := runQwen(t, "PreCompact", file, cache); r.Output != nil || r.Update != "fresh" {
		t.Fatalf("PreCompact: %+v", r)
	}
	_ = os.WriteFile(file, full, 0o644)
	if r := runQwen(t, "PostCompact", file, cache); r.Output != nil {
		t.Fatalf("PostCompact printed: %s", r.Output)
	}
	r := runQwen(t, "UserPromptSubmit", file, cache)
	event, ctx := hookContext(t, r.Output)
	if event != "UserPromptSubmit" {
		t.Fatalf("UserPromptSubmit after /compress: %s", r.Output)
	}
	for _, want := range []string{"Qwen Code's compaction summary dropped", "First turn. [[shell: ls -1]]"} {
		if !strings.Contains(ctx, want) {
			t.Errorf("injected context lacks %q:\n%s", want, ctx)
		}
	}
	if again := runQwen(t, "UserPromptSubmit", file, cache); again.Output != nil {
		t.Fatalf("injected twice: %s", again.Output)
	}
}

// What Qwen Code 0.24.4 sent to its hooks in the acceptance run
// (interop/qwen-code/hooks.sh): every input parses in its dialect, in the
// order the hook relies on — PreCompact, PostCompact, SessionStart
// compact, then the next prompt's UserPromptSubmit.
func TestQwenRecordedHookInputs(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "hook", "qwen-code", "0.24.4", "hook-inputs", "*.json"))
	if len(files) == 0 {
		t.Fatal("no recorded hook inputs")
	}
	var got []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		in, err := ParseAs(DialectOf("Qwen Code"), b)
		if err != nil || in.TranscriptPath == "" || in.SessionID == "" {
			t.Fatalf("%s: %+v, %v", f, in, err)
		}
		got = append(got, in.Event+"/"+in.Source)
	}
	if order := "PreCompact/,PostCompact/,SessionStart/compact,SessionStart/resume,UserPromptSubmit/"; !strings.Contains(strings.Join(got, ","), order) {
		t.Errorf("recorded order %v, want %s in it", got, order)
	}
	if d := DialectOf("qwen-code"); d.Name != "Qwen Code" {
		t.Errorf("DialectOf(qwen-code) = %q", d.Name)
	}
}

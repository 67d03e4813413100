package hook

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzHookInput: whatever a client sends on stdin, Parse answers an input
// or an error, never panics; an input it accepts names an event and runs
// (against a small real transcript, wherever transcript_path pointed)
// without panicking, within its time bound, printing nothing or one JSON
// object.
func FuzzHookInput(f *testing.F) {
	for _, s := range []string{
		`{"hook_event_name":"PreCompact","transcript_path":"t.jsonl","trigger":"auto"}`,
		`{"hook_event_name":"SessionStart","source":"compact","transcript_path":"t.jsonl"}`,
		`{"hook_event_name":"UserPromptSubmit","prompt":"hi","transcript_path":"t.jsonl"}`,
		`{"hook_event_name":"before_agent","transcript_path":"t.jsonl"}`,
		`{"hook_event_name":"PreCompress"}`,
		`[1,2]`, ``, `{"hook_event_name":7}`,
	} {
		f.Add([]byte(s))
	}
	pre, _ := os.ReadFile(recorded)
	dir := f.TempDir()
	file, cache := filepath.Join(dir, "s.jsonl"), filepath.Join(dir, "cache")
	if err := os.WriteFile(file, pre, 0o644); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := Parse(b)
		if err != nil {
			return
		}
		if in.Event == "" {
			t.Fatalf("accepted an input with no event: %q", b)
		}
		if in.TranscriptPath != "" {
			in.TranscriptPath = file // never another file of the machine
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		res, err := Run(ctx, in, Options{CacheDir: cache})
		if err != nil || res.Output == nil {
			return
		}
		var out map[string]any
		if json.Unmarshal(res.Output, &out) != nil {
			t.Fatalf("output is not one JSON object: %q", res.Output)
		}
	})
}

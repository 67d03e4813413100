package importer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/importer"
)

// writeRollout writes a synthetic Codex rollout of about size bytes: user
// turn, reasoning with encrypted content, a call, its token count and its
// 2 KB output, repeated.
func writeRollout(b *testing.B, size int) string {
	path := filepath.Join(b.TempDir(), "rollout.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	blob := strings.Repeat("x", 2000)
	enc := json.NewEncoder(f)
	enc.Encode(map[string]any{"timestamp": "t", "type": "session_meta", "payload": map[string]any{"id": "0199aaaa-bbbb-7ccc-8ddd-00000000b16b"}})
	item := func(p map[string]any) {
		enc.Encode(map[string]any{"timestamp": "t", "type": "response_item", "payload": p})
	}
	written := 0
	for i := 1; written < size; i++ {
		item(map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": fmt.Sprintf("step %d %s", i, blob[:200])}}})
		item(map[string]any{"type": "reasoning", "summary": []any{map[string]any{"type": "summary_text", "text": "thinking"}}, "encrypted_content": blob})
		item(map[string]any{"type": "function_call", "name": "shell", "arguments": `{"cmd":"ls"}`, "call_id": fmt.Sprintf("c%d", i)})
		enc.Encode(map[string]any{"timestamp": "t", "type": "event_msg", "payload": map[string]any{"type": "token_count",
			"info": map[string]any{"total_token_usage": map[string]any{"input_tokens": i * 1000}, "last_token_usage": map[string]any{"input_tokens": 1000, "output_tokens": 10}}}})
		item(map[string]any{"type": "function_call_output", "call_id": fmt.Sprintf("c%d", i), "output": blob})
		written += 5000
	}
	return path
}

// BenchmarkImportCodex measures the registry end to end (parse, validate,
// chunked appends, rename) on a 20 MB rollout.
func BenchmarkImportCodex(b *testing.B) {
	const size = 20 << 20
	file := writeRollout(b, size)
	st, _ := os.Stat(file)
	b.SetBytes(st.Size())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out := filepath.Join(b.TempDir(), "s")
		if _, err := importer.Import(context.Background(), importer.Options{From: importer.Codex, Files: []string{file}, Out: out}); err != nil {
			b.Fatal(err)
		}
	}
}

// Command droid-gen writes a generated Factory Droid session file of about
// -mb megabytes for the import benchmark (docs/BENCHMARKS.md): a
// session_start, then turns of a user message, an assistant message with an
// Execute call, its tool_result and an assistant reply, each message naming
// the one before it as parentId, with bookkeeping records between turns.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

func main() {
	mb := flag.Int("mb", 100, "approximate size in megabytes")
	out := flag.String("o", "", "output file (required)")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "droid-gen: -o FILE is required")
		os.Exit(2)
	}
	if err := run(*out, int64(*mb)<<20); err != nil {
		fmt.Fprintln(os.Stderr, "droid-gen:", err)
		os.Exit(1)
	}
}

func run(path string, size int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var n int64
	emit := func(v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		n += int64(len(b)) + 1
		w.Write(b)
		return w.WriteByte('\n')
	}
	emit(map[string]any{"type": "session_start", "id": "0b5e0000-0000-4000-8000-00000000bench", "title": "bench", "owner": "unknown", "version": 2, "cwd": "/work/app"})
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	prose := strings.Repeat("The build reads the configuration, checks every module and reports what changed. ", 12)
	output := strings.Repeat("ok  \tgithub.com/example/app/internal/module\t0.123s\n", 30)
	parent := ""
	msg := func(id, role string, content any) {
		rec := map[string]any{"type": "message", "id": id, "timestamp": base.Add(time.Duration(n) * time.Microsecond).Format(time.RFC3339Nano),
			"message": map[string]any{"role": role, "content": content}}
		if parent != "" {
			rec["parentId"] = parent
		}
		if role == "assistant" {
			rec["message"].(map[string]any)["modelId"] = "gpt-5.6-sol"
		}
		emit(rec)
		parent = id
	}
	for turn := 0; n < size; turn++ {
		call := fmt.Sprintf("call_%d", turn)
		msg(fmt.Sprintf("u%d", turn), "user", []any{map[string]any{"type": "text", "text": fmt.Sprintf("Turn %d: %s", turn, prose)}})
		msg(fmt.Sprintf("a%d", turn), "assistant", []any{map[string]any{"type": "text", "text": prose[:200]},
			map[string]any{"type": "tool_use", "id": call, "name": "Execute", "input": map[string]any{"command": "go test ./...", "summary": "Run the test suite", "riskLevel": "low", "riskLevelReason": "It only runs tests."}}})
		msg(fmt.Sprintf("r%d", turn), "user", []any{map[string]any{"type": "tool_result", "tool_use_id": call, "is_error": false, "content": output}})
		msg(fmt.Sprintf("b%d", turn), "assistant", []any{map[string]any{"type": "text", "text": prose}})
		emit(map[string]any{"type": "agent_turn_outcome", "turnId": fmt.Sprintf("u%d", turn), "reason": "completed", "resultKind": "text"})
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

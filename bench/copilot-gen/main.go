// Command copilot-gen writes a large GitHub Copilot CLI events.jsonl for
// the import benchmark (docs/BENCHMARKS.md, "import"): a session.start and
// a system prompt, then turns in the client's shape — user.message, a
// usage record, an assistant.message calling bash, the tool's start and
// completion (a few KB of output), a usage record and the reply, the
// turn's bookkeeping — with a compaction every 5,000 turns. Ids are derived
// from the turn's number, so runs are reproducible.
//
//	go run ./bench/copilot-gen -mb 100 -o /tmp/copilot-big.jsonl
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
)

func main() {
	mb := flag.Int("mb", 100, "size of the file to write, in MB (10^6 bytes)")
	out := flag.String("o", "", "the file to write")
	flag.Parse()
	if err := run(*out, *mb); err != nil {
		fmt.Fprintln(os.Stderr, "copilot-gen:", err)
		os.Exit(1)
	}
}

type writer struct {
	w      *bufio.Writer
	n      int64
	seq    int
	parent string
	err    error
}

// event writes one line, chained after the one before.
func (w *writer) event(typ string, data any) {
	w.seq++
	id := fmt.Sprintf("00000000-0000-4000-8000-%012d", w.seq)
	var parent any
	if w.parent != "" {
		parent = w.parent
	}
	b, err := json.Marshal(map[string]any{"type": typ, "data": data, "id": id, "timestamp": "2026-01-01T00:00:00.000Z", "parentId": parent})
	if err != nil && w.err == nil {
		w.err = err
	}
	w.parent = id
	k, err := w.w.Write(append(b, '\n'))
	w.n += int64(k)
	if err != nil && w.err == nil {
		w.err = err
	}
}

func usage(call string, in int) map[string]any {
	return map[string]any{"usage": map[string]any{"model": "gpt-4.1", "inputTokens": in, "outputTokens": 20, "cacheReadTokens": in / 2,
		"cacheWriteTokens": 0, "maxPromptTokens": 128000, "apiCallId": call}}
}

func run(out string, mb int) error {
	if out == "" {
		return errors.New("-o FILE is required")
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	w := &writer{w: bufio.NewWriterSize(f, 1<<20)}
	w.event("session.start", map[string]any{"sessionId": "00000000-0000-4000-8000-000000000000", "version": 1, "producer": "copilot-agent",
		"copilotVersion": "1.0.102", "startTime": "2026-01-01T00:00:00.000Z", "selectedModel": "gpt-4.1", "context": map[string]any{"cwd": "/work"}})
	output := strings.Repeat("a line of a command's output, long enough to look like one\n", 40)
	for turn := 0; w.n < int64(mb)*1e6 && w.err == nil; turn++ {
		w.event("user.message", map[string]any{"content": fmt.Sprintf("Turn %d: run the tests.", turn),
			"transformedContent": fmt.Sprintf("<current_datetime>2026-01-01T00:00:00.000+00:00</current_datetime>\n\nTurn %d: run the tests.", turn)})
		if turn == 0 {
			w.event("system.message", map[string]any{"role": "system", "content": strings.Repeat("You are the GitHub Copilot CLI. ", 600)})
		}
		w.event("assistant.turn_start", map[string]any{"turnId": "0"})
		call := fmt.Sprintf("call-%d", turn)
		w.event("session.usage_record", usage(call+"a", 10000+turn))
		w.event("assistant.message", map[string]any{"messageId": call, "content": "", "apiCallId": call + "a",
			"toolRequests": []any{map[string]any{"toolCallId": call, "name": "bash", "arguments": map[string]any{"command": "go test ./...", "description": "Run the tests"}, "type": "function"}}})
		w.event("tool.execution_start", map[string]any{"toolCallId": call, "toolName": "bash", "arguments": map[string]any{"command": "go test ./..."}})
		w.event("tool.execution_complete", map[string]any{"toolCallId": call, "success": true, "result": map[string]any{"content": output, "detailedContent": output}})
		w.event("assistant.turn_end", map[string]any{"turnId": "0"})
		w.event("session.usage_record", usage(call+"b", 10500+turn))
		w.event("assistant.message", map[string]any{"messageId": call + "r", "content": "The tests pass.", "apiCallId": call + "b", "toolRequests": []any{}})
		if turn%5000 == 4999 {
			attempt := fmt.Sprintf("compaction-%d", turn)
			w.event("session.compaction_start", map[string]any{"compactionAttemptId": attempt, "trigger": "threshold"})
			w.event("session.compaction_complete", map[string]any{"success": true, "outcome": "applied", "compactionAttemptId": attempt,
				"summaryContent": "<overview>The user ran the tests many times.</overview>"})
		}
	}
	if w.err != nil {
		return w.err
	}
	return w.w.Flush()
}

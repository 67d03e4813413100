package claudecodeinterop

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// A sub-agent's thinking, counted at its start (docs/INTEROP-claude-code.md):
// the subagent-thinking recordings (interop/claude-code/record.sh
// subagent-thinking) have a sub-agent reply with an omitted thinking — a
// 6,000-byte signature — and a Bash call, whose final usage (1,520 output
// tokens in the fake's unit) comes 1.5 s after its last block. Claude Code
// 2.1.222 writes the reply's lines with the stream's first count (1);
// 2.1.328 (pinned) and 2.1.332 (newest) with the final one. `estimate FILE` carries the thinking either
// way: by its signature when the count cannot be final (0.340 tokens a
// byte: 2,040), else the output less what the reply shows.
func TestOracleSubagentThinkingCountedAtStart(t *testing.T) {
	for _, c := range []struct {
		version  string
		recorded int64 // the output count on the reply's lines
		bySig    bool
	}{
		{"2.1.222", 1, true},
		{"2.1.328", 1520, false}, // the pinned client
		{"2.1.332", 1520, false}, // the newest
	} {
		t.Run(c.version, func(t *testing.T) {
			file := filepath.Join(fixtureRootOf(c.version), "subagent-thinking", "transcript",
				"00000000-0000-4000-8000-000000000001", "subagents", "agent-a0000000000000001.jsonl")
			var res struct {
				Calibration struct {
					History []struct {
						Hidden int64 `json:"hidden"`
					} `json:"history"`
				} `json:"calibration"`
			}
			out := mustRun(t, "estimate", file, "--json", "--nodes")
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			h := res.Calibration.History
			if len(h) != 2 {
				t.Fatalf("%d recorded requests, want the sub-agent's 2", len(h))
			}
			if got := recordedOutput(t, file); got != c.recorded {
				t.Errorf("the reply's lines record %d output tokens, want %d", got, c.recorded)
			}
			if bySig := h[0].Hidden == 2040; bySig != c.bySig || h[0].Hidden < c.recorded/2 {
				t.Errorf("the reply's thinking carried as %d (signature's: %v, want %v; recorded output %d)", h[0].Hidden, bySig, c.bySig, c.recorded)
			}
		})
	}
}

// recordedOutput is the output count on the first assistant line of file.
func recordedOutput(t *testing.T, file string) int64 {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		var rec struct {
			Type    string `json:"type"`
			Message struct {
				Usage struct {
					Output int64 `json:"output_tokens"`
				} `json:"usage"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.Type == "assistant" {
			return rec.Message.Usage.Output
		}
	}
	t.Fatalf("%s: no assistant line", file)
	return 0
}

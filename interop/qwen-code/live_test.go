package qwencode_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestLive re-records every scenario with the pinned client (installed by
// record.sh under $HOME/.cache when missing; CTXFOLD_QWEN_BIN names a
// newer one), runs the oracle on the new recording and compares its
// structure with the committed one (request kinds and message roles, the
// imported nodes' roles, calls and summaries); byte differences left after
// normalisation are logged. It needs npm; set CTXFOLD_INTEROP_LIVE=1.
func TestLive(t *testing.T) {
	if os.Getenv("CTXFOLD_INTEROP_LIVE") == "" {
		t.Skip("set CTXFOLD_INTEROP_LIVE=1 to re-record with the real Qwen Code")
	}
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	rec := exec.CommandContext(ctx, "bash", "record.sh")
	rec.Env = append(os.Environ(), "OUT="+out)
	var log bytes.Buffer
	rec.Stdout, rec.Stderr = &log, &log
	start := time.Now()
	if err := rec.Run(); err != nil {
		t.Fatalf("record.sh: %v\n%s", err, log.String())
	}
	t.Logf("recorded in %s:\n%s", time.Since(start).Round(time.Second), log.String())
	for _, sc := range scenarios {
		t.Run(sc, func(t *testing.T) {
			fresh, committed := filepath.Join(out, sc), filepath.Join(recordings, sc)
			checkScenario(t, fresh, compressed[sc])
			if os.Getenv("CTXFOLD_QWEN_BIN") != "" {
				return // a newer client: its own structure, checked by the oracle alone
			}
			a, b := shape(t, committed), shape(t, fresh)
			if a != b {
				t.Errorf("structure changed:\ncommitted:\n%s\nnow:\n%s", a, b)
			}
			x, _ := os.ReadFile(filepath.Join(committed, "requests.jsonl"))
			y, _ := os.ReadFile(filepath.Join(fresh, "requests.jsonl"))
			if !bytes.Equal(x, y) {
				t.Logf("requests.jsonl differs from the committed file after normalisation")
			}
		})
	}
}

// shape is a scenario's structure: one line per request (its kind and
// message roles) and per imported node (role, name, calls, summary). The
// sub-agent's requests follow the main agent's, each in its own order: the
// agent tool runs the sub-agent in the background, so which of its first
// request and the main agent's next one reaches the fake first is a race
// (a fresh-clone CI run saw both orders).
func shape(t *testing.T, dir string) string {
	t.Helper()
	var b, sub strings.Builder
	for _, r := range readRequests(t, dir) {
		var roles []string
		for _, m := range r.Body.Messages {
			var x struct{ Role string }
			json.Unmarshal(m, &x)
			roles = append(roles, x.Role)
		}
		w := &b
		if r.Kind == "subagent" {
			w = &sub
		}
		fmt.Fprintf(w, "request %s %s\n", r.Kind, strings.Join(roles, ","))
	}
	b.WriteString(sub.String())
	sess := filepath.Join(t.TempDir(), "s")
	if _, errOut, code := ctxfold(t, "import", chatFile(t, dir), "-o", sess); code != 0 {
		t.Fatalf("import: %s", errOut)
	}
	data, err := os.ReadFile(filepath.Join(sess, "nodes.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var n struct {
			Role, Name string
			ToolCalls  []struct{ Name string } `json:"tool_calls"`
			Metadata   struct{ Compaction bool }
		}
		json.Unmarshal(line, &n)
		lines = append(lines, fmt.Sprintf("node %s %s calls=%v summary=%v", n.Role, n.Name, n.ToolCalls, n.Metadata.Compaction))
	}
	sort.Strings(lines)
	b.WriteString(strings.Join(lines, "\n"))
	return b.String()
}

package geminicli_test

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
// record.sh under $HOME/.cache when missing), runs the oracle on the new
// recording and compares it with the committed one: the structure must be
// the same (record kinds, message types, part kinds, request kinds and
// models); byte differences left after normalisation are logged. It needs
// npm and node; set CTXFOLD_INTEROP_LIVE=1.
func TestLive(t *testing.T) {
	if os.Getenv("CTXFOLD_INTEROP_LIVE") == "" {
		t.Skip("set CTXFOLD_INTEROP_LIVE=1 to re-record with the real Gemini CLI")
	}
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
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
	checkNoInstallPath(t, out)
	for _, sc := range scenarios {
		t.Run(sc, func(t *testing.T) {
			fresh, committed := filepath.Join(out, sc), filepath.Join(recordings, sc)
			oracle(t, fresh)
			a, b := shape(t, committed), shape(t, fresh)
			if a != b {
				t.Errorf("structure changed:\ncommitted:\n%s\nnow:\n%s", a, b)
			}
			for _, rel := range files(t, committed) {
				x, _ := os.ReadFile(filepath.Join(committed, rel))
				y, err := os.ReadFile(filepath.Join(fresh, rel))
				if err != nil || !bytes.Equal(x, y) {
					t.Logf("%s differs from the committed file after normalisation", rel)
				}
			}
		})
	}
}

func files(t *testing.T, dir string) []string {
	var out []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// shape is a scenario's structure: one line per request and per node of
// its import, the kinds of things, not their text. The session file itself
// is not compared record by record: where a resumed run writes its startup
// header (into the resumed file or a second one) depends on timing, and the
// import is the same either way.
func shape(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	data, err := os.ReadFile(filepath.Join(dir, "requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var v any
		json.Unmarshal(line, &v)
		fmt.Fprintf(&b, "request %s\n", skeleton(v, ""))
	}
	sess := filepath.Join(t.TempDir(), "s")
	if _, errOut, code := ctxfold(t, "import", sessionFile(t, dir), "-o", sess); code != 0 {
		t.Fatalf("import: %s", errOut)
	}
	data, err = os.ReadFile(filepath.Join(sess, "nodes.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	index := map[string]int{}
	for i, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var n struct {
			ID, Role, Name string
			Predecessor    *string
			ToolCalls      []struct{ Name string } `json:"tool_calls"`
			Metadata       map[string]any
		}
		json.Unmarshal(line, &n)
		index[n.ID] = i
		pred := -1
		if n.Predecessor != nil {
			pred = index[*n.Predecessor]
		}
		fmt.Fprintf(&b, "node %d after %d: %s %s calls=%v rewound=%v\n", i, pred, n.Role, n.Name, n.ToolCalls, n.Metadata["gemini_rewound"])
	}
	return b.String()
}

// skeleton keeps object keys, the values of "type", "role", "kind",
// "model" and "name", and the skeletons of array elements; other values
// become their JSON type.
func skeleton(v any, key string) string {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + ":" + skeleton(x[k], k)
		}
		return "{" + strings.Join(parts, ",") + "}"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = skeleton(e, key)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case string:
		switch key {
		case "type", "role", "kind", "model", "name":
			return x
		}
		return "s"
	case float64:
		return "n"
	case bool:
		return "b"
	}
	return "null"
}

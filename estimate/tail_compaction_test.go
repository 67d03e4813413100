package estimate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/live"
)

// TestTailStartsAtCompaction: a compaction whose boundary is the tail's
// first conversation line — the tail starting at a snapshot just before
// it, at the boundary itself, or at the summary after it — is counted
// once, as the whole file counts it, and the calibrated figure is the
// whole file's. (The boundary has nothing before it in such a tail.)
func TestTailStartsAtCompaction(t *testing.T) {
	data, err := os.ReadFile(generatedSession(t))
	if err != nil {
		t.Fatal(err)
	}
	// The last 2 MiB are whole file enough (its first line is a root) and
	// quicker to import than the whole generated session.
	lines := bytes.SplitAfter(lastBytes(data, 2<<20), []byte("\n"))
	lines = lines[:len(lines)-1] // the empty remainder
	at := turnStartWithRequestsAfter(t, lines, 90)
	var first map[string]any
	if err := json.Unmarshal(lines[at], &first); err != nil {
		t.Fatal(err)
	}
	const boundaryID, summaryID = "c0a1b2c3-0000-4000-8000-00000000b0d1", "c0a1b2c3-0000-4000-8000-00000000c0d1"
	boundary := mustJSON(t, map[string]any{"parentUuid": nil, "logicalParentUuid": first["parentUuid"], "isSidechain": false,
		"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted", "isMeta": false,
		"timestamp": first["timestamp"], "uuid": boundaryID, "level": "info", "sessionId": first["sessionId"],
		"compactMetadata": map[string]any{"trigger": "auto", "preTokens": 150000}})
	summary := mustJSON(t, map[string]any{"parentUuid": boundaryID, "isSidechain": false, "type": "user",
		"message":          map[string]any{"role": "user", "content": "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation: the user asked for a viewer of Claude Code sessions, and it was built."},
		"isCompactSummary": true, "isVisibleInTranscriptOnly": true, "uuid": summaryID, "timestamp": first["timestamp"], "sessionId": first["sessionId"]})
	snapshot := []byte(`{"type":"file-history-snapshot","messageId":"c0a1b2c3-0000-4000-8000-00000000d0d1","snapshot":{"trackedFileBackups":{}},"isSnapshotUpdate":false}` + "\n")
	first["parentUuid"] = summaryID
	var file bytes.Buffer
	for _, l := range lines[:at] {
		file.Write(l)
	}
	starts := map[string]int{}
	for _, p := range []struct {
		name string
		line []byte
	}{{"a snapshot before the boundary", snapshot}, {"the boundary", boundary}, {"the summary", summary}, {"", mustJSON(t, first)}} {
		starts[p.name] = file.Len()
		file.Write(p.line)
	}
	for _, l := range lines[at+1:] {
		file.Write(l)
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	out, want := wholeStatus(t, path, t.TempDir(), file.Bytes())
	ctx := context.Background()
	if out.Summaries != 1 {
		t.Fatalf("the whole file holds %d compactions; want 1", out.Summaries)
	}
	for _, name := range []string{"a snapshot before the boundary", "the boundary", "the summary"} {
		from := starts[name]
		a, err := estimate.FromTail(ctx, path, estimate.TailOptions{Live: live.Options{CacheDir: t.TempDir()}, MinBytes: int64(file.Len() - from)})
		if err != nil {
			t.Errorf("the tail starting at %s: %v", name, err)
			continue
		}
		got, start := estimate.TailStatus(a, 0), a.Entry.Start
		a.Entry.Close()
		if start != int64(from) {
			t.Errorf("the tail starting at %s starts at %d; want %d", name, start, from)
		}
		if got != want || a.Compactions != out.Summaries {
			t.Errorf("the tail starting at %s:\n tail %+v compactions %d\n full %+v compactions %d", name, got, a.Compactions, want, out.Summaries)
		}
	}
}

// turnStartWithRequestsAfter is the index of a main-chain line starting a
// turn (the person's text) with about n recorded requests after it.
func turnStartWithRequestsAfter(t *testing.T, lines [][]byte, n int) int {
	t.Helper()
	after := 0
	seen := map[string]bool{}
	for i := len(lines) - 1; i >= 0; i-- {
		var r lineRecord
		if json.Unmarshal(lines[i], &r) != nil || r.IsSidechain {
			continue
		}
		if r.Type == "assistant" && len(r.Message.Usage) > 0 && !seen[r.Message.ID] {
			seen[r.Message.ID] = true
			after++
		}
		if r.Type == "user" && after >= n && len(r.Message.Content) > 0 && r.Message.Content[0] == '"' {
			return i
		}
	}
	t.Fatalf("no turn with %d requests after it", n)
	return 0
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// TestTailWholeFileCompactions: a tail that is the whole file counts its
// compactions as the whole file's session does — here none, the file's
// only boundary having nothing before it (the importer skips it).
func TestTailWholeFileCompactions(t *testing.T) {
	src := filepath.Join("..", "testdata", "interop", "claude-code", "2.1.328", "chat", "transcript", "00000000-0000-4000-8000-000000000001.jsonl")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	boundary := mustJSON(t, map[string]any{"parentUuid": nil, "logicalParentUuid": "c0a1b2c3-0000-4000-8000-00000000e0d1", "isSidechain": false,
		"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted", "isMeta": false,
		"timestamp": "2026-01-01T00:00:00.000Z", "uuid": "c0a1b2c3-0000-4000-8000-00000000f0d1", "level": "info",
		"compactMetadata": map[string]any{"trigger": "auto", "preTokens": 1000}})
	path := filepath.Join(t.TempDir(), "s.jsonl")
	out, _ := wholeStatus(t, path, t.TempDir(), append(boundary, data...))
	a, err := estimate.FromTail(context.Background(), path, estimate.TailOptions{Live: live.Options{CacheDir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Entry.Close()
	if a.Entry.Start != 0 || a.Compactions != out.Summaries {
		t.Errorf("the tail from byte %d counts %d compactions; the whole file %d", a.Entry.Start, a.Compactions, out.Summaries)
	}
}

// TestTailCutBoundary: a compaction boundary still being written (the
// file ends inside its line) is no compaction yet, from the tail as for
// the whole file.
func TestTailCutBoundary(t *testing.T) {
	data, err := os.ReadFile(generatedSession(t))
	if err != nil {
		t.Fatal(err)
	}
	data = lastBytes(data, 2<<20)
	boundary := mustJSON(t, map[string]any{"parentUuid": nil, "isSidechain": false, "type": "system", "subtype": "compact_boundary",
		"content": "Conversation compacted", "uuid": "c0a1b2c3-0000-4000-8000-00000000a0d1", "compactMetadata": map[string]any{"trigger": "auto"}})
	path := filepath.Join(t.TempDir(), "s.jsonl")
	out, want := wholeStatus(t, path, t.TempDir(), append(bytes.Clone(data), boundary[:bytes.Index(boundary, []byte(`"type"`))]...))
	a, err := estimate.FromTail(context.Background(), path, estimate.TailOptions{Live: live.Options{CacheDir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Entry.Close()
	if a.Entry.Start == 0 || a.Compactions != out.Summaries || estimate.TailStatus(a, 0) != want {
		t.Errorf("tail from %d: %+v, %d compactions; whole file %+v, %d", a.Entry.Start, estimate.TailStatus(a, 0), a.Compactions, want, out.Summaries)
	}
}

package live

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Issue 45 #14: tail.json's prefix_compactions is validated like the rest
// of the entry: an edited count ("↻-3", "↻999") is not shown, nor kept
// while the file grows; the tail is copied afresh and counted again.
func TestTailPrefixCompactionsValidated(t *testing.T) {
	file, data, _ := tailFixture(t)
	at := bytes.Index(data, compactBoundary)
	if at < 0 {
		t.Fatal("the fixture has no compaction boundary")
	}
	// A tail that starts after the boundary: the count is the prefix's.
	minBytes := int64(len(data)-at) - int64(bytes.IndexByte(data[at:], '\n')) - 2
	cache := t.TempDir()
	te := openTail(t, file, cache, minBytes)
	if te.Start <= int64(at) || te.PrefixCompactions != 1 || te.Compactions != 1 {
		t.Fatalf("first open: start %d (boundary at %d), prefix %d, compactions %d", te.Start, at, te.PrefixCompactions, te.Compactions)
	}
	state := filepath.Join(TailDir(cache, file), tailStateFile)
	more := []byte(`{"type":"file-history-snapshot","messageId":"x","snapshot":{},"isSnapshotUpdate":false}` + "\n")
	for _, edited := range []int{-3, 999, 2} {
		b, err := os.ReadFile(state)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		m["prefix_compactions"] = edited
		b, _ = json.Marshal(m)
		if err := os.WriteFile(state, b, 0o600); err != nil {
			t.Fatal(err)
		}
		appendTo(t, file, more) // the file grows meanwhile
		te := openTail(t, file, cache, minBytes)
		if te.Compactions != 1 || te.PrefixCompactions != 1 || te.TailUpdate != Fresh {
			t.Fatalf("prefix_compactions edited to %d: shown %d (prefix %d, %s)", edited, te.Compactions, te.PrefixCompactions, te.TailUpdate)
		}
	}
	if te := openTail(t, file, cache, minBytes); te.TailUpdate != Unchanged || te.Compactions != 1 {
		t.Fatalf("a valid entry was not kept: %+v", te)
	}
}

package live

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzCacheEntry: whatever a cache entry's state.json and resume.bin hold
// (resume.bin's hash fixed up in state.json when fixHash, so the decoder
// of the saved state is reached), the next Open of the grown file returns,
// without a panic, a cache session that is byte for byte a fresh import
// of the file (issue 30, items 6 and 7). Seeded with the entry's own
// files. Run: go test ./live -run '^$' -fuzz FuzzCacheEntry
func FuzzCacheEntry(f *testing.F) {
	body, err := os.ReadFile(filepath.Join("..", "testdata", "interop", "claude-code", "2.1.328", "tool", "transcript", "00000000-0000-4000-8000-000000000001.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	half := bytes.LastIndexByte(body[:len(body)/2], '\n') + 1
	want := freshNodes(f, writeTemp(f, body))
	seedDir := f.TempDir()
	file := filepath.Join(seedDir, "s.jsonl")
	os.WriteFile(file, body[:half], 0o644)
	e, err := openClosed(context.Background(), file, Options{CacheDir: seedDir})
	if err != nil {
		f.Fatal(err)
	}
	st, _ := os.ReadFile(filepath.Join(filepath.Dir(e.Session), "state.json"))
	rb, _ := os.ReadFile(filepath.Join(filepath.Dir(e.Session), resumeFile))
	f.Add(st, rb, true)
	f.Add(st, rb[:len(rb)/2], true)
	f.Add([]byte(`{"schema_version":2}`), []byte{}, false)
	f.Fuzz(func(t *testing.T, stateJSON, resumeBin []byte, fixHash bool) {
		dir := t.TempDir()
		file := filepath.Join(dir, "s.jsonl")
		cache := filepath.Join(dir, "cache")
		if err := os.WriteFile(file, body[:half], 0o644); err != nil {
			t.Fatal(err)
		}
		e, err := openClosed(context.Background(), file, Options{CacheDir: cache})
		if err != nil {
			t.Fatal(err)
		}
		entry := filepath.Dir(e.Session)
		if fixHash {
			var s map[string]any
			if json.Unmarshal(stateJSON, &s) == nil {
				if r, ok := s["resume"].(map[string]any); ok {
					r["state_xxh64"] = stateHash(resumeBin)
				}
				s["file"] = file
				stateJSON, _ = json.Marshal(s)
			}
		}
		os.WriteFile(filepath.Join(entry, "state.json"), stateJSON, 0o600)
		os.WriteFile(filepath.Join(entry, resumeFile), resumeBin, 0o600)
		if err := os.WriteFile(file, body, 0o644); err != nil {
			t.Fatal(err)
		}
		bounded(t, "Open", func() { e, err = openClosed(context.Background(), file, Options{CacheDir: cache}) })
		if err != nil {
			t.Fatalf("open after the entry was rewritten: %v", err)
		}
		if got := readNodes(t, e.Session); !bytes.Equal(got, want) {
			t.Fatalf("%s (%s): the cache session is not a fresh import's", e.Update, e.Reason)
		}
	})
}

func writeTemp(t testing.TB, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

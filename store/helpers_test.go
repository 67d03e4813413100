package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// fixedNow is the injected clock of every test write.
func fixedNow() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }

var testWrite = store.WriteOptions{LockTimeout: 2 * time.Second, Now: fixedNow, Command: "test"}

// newSession creates an empty session in a temp dir.
func newSession(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "s")
	if _, err := store.Init(dir, "gpt-4o", testWrite); err != nil {
		t.Fatalf("Init: %v", err)
	}
	return dir
}

// mustAppend appends nodes in one batch and returns the result.
func mustAppend(t testing.TB, dir string, opts store.AppendOptions, nodes ...transcript.Node) *store.AppendResult {
	t.Helper()
	res, err := tryAppend(dir, opts, nodes...)
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	return res
}

// writerOf is testWrite, as the live cache's writer for a cache session
// (the only writer the store lets write one).
func writerOf(dir string) store.WriteOptions {
	opts := testWrite
	if m, err := store.ReadMeta(dir); err == nil && m.Cache {
		opts.CacheWriter = true
	}
	return opts
}

func tryAppend(dir string, opts store.AppendOptions, nodes ...transcript.Node) (*store.AppendResult, error) {
	var res *store.AppendResult
	_, err := store.Update(context.Background(), dir, writerOf(dir), func(tx *store.Tx) error {
		var err error
		res, err = tx.Append(nodes, opts)
		return err
	})
	return res, err
}

func user(id, pred, text string) transcript.Node {
	return transcript.Node{ID: id, Predecessor: pred, Role: transcript.RoleUser, Content: transcript.TextContent(text)}
}

func asst(id, pred, text string) transcript.Node {
	return transcript.Node{ID: id, Predecessor: pred, Role: transcript.RoleAssistant, Content: transcript.TextContent(text)}
}

// summaryNode builds a docs/FORMAT.md §4 summary covering ids, spliced after pred.
func summaryNode(id, pred string, covers ...string) transcript.Node {
	n := transcript.Node{ID: id, Predecessor: pred, Role: transcript.SummaryRole, Name: transcript.SummaryName,
		Content: transcript.TextContent(transcript.SummaryPrefix + "what happened")}
	n.SetMeta("compaction", true)
	n.SetMeta("covers_ids", covers)
	return n
}

func mustOpen(t testing.TB, dir string) *store.Session {
	t.Helper()
	s, err := store.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func ids(s *store.Session) []string {
	out := make([]string, s.Len())
	for i, r := range s.All() {
		out[i] = r.ID
	}
	return out
}

// snapshot returns the bytes of every file in a session directory, to show
// that a refused write changed nothing.
func snapshot(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || e.Name() == store.LockFile {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = data
	}
	return out
}

func sameSnapshot(t testing.TB, before, after map[string][]byte) {
	t.Helper()
	if len(before) != len(after) {
		t.Fatalf("files changed: %d before, %d after", len(before), len(after))
	}
	for name, b := range before {
		if !bytes.Equal(b, after[name]) {
			t.Fatalf("%s changed:\nbefore: %s\nafter:  %s", name, b, after[name])
		}
	}
}

// jsonEqual compares two JSON texts as values.
func jsonEqual(t testing.TB, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return bytes.Equal(ja, jb)
}

func writeFile(t testing.TB, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

package live

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
)

// sessionMeta is what a command reads of session.json besides the nodes.
func sessionMeta(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "session.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for _, k := range []string{"head", "model", "model_context_window", "active_summary_id", "format_version"} {
		out[k] = m[k]
	}
	return out
}

func metaJSON(t *testing.T, dir string) string {
	t.Helper()
	b, _ := json.Marshal(sessionMeta(t, dir))
	return string(b)
}

// Issue 30, item 1: an incremental refresh of a Codex rollout keeps the
// context window the rollout recorded before the resume point, as a fresh
// import of the same bytes does (the cut and the half line appended are
// the ones the fault campaign found).
func TestIncrementalCodexKeepsRecordedWindow(t *testing.T) {
	src := sessiontest.External(t, "codex", "madshn-localpush", "rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl")
	full, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), filepath.Base(src))
	cache := t.TempDir()
	for _, cut := range []int{418908, 418908 + 539} {
		if err := os.WriteFile(file, full[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		e, err := openClosed(context.Background(), file, Options{CacheDir: cache})
		if err != nil {
			t.Fatal(err)
		}
		gb, wb := metaJSON(t, e.Session), metaJSON(t, freshImport(t, file))
		if gb != wb {
			t.Errorf("cut %d (%s): session.json %s, a fresh import says %s", cut, e.Update, gb, wb)
		}
	}
}

// interopClaude is a real Claude Code session recorded by interop/.
func interopClaude(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "interop", "claude-code", "2.1.328", "tool", "transcript", "00000000-0000-4000-8000-000000000001.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// bounded runs f and fails the test when it does not return within 20 s
// (a FIFO or /dev/zero read would never return).
func bounded(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: still running after 20 s", what)
	}
}

// hostileFile puts a FIFO or a symlink to /dev/zero at path.
func hostileFile(t *testing.T, kind, path string) {
	t.Helper()
	_ = os.RemoveAll(path)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var err error
	switch kind {
	case "fifo":
		err = sessiontest.MakeFIFO(t, path, 0o644)
	case "devzero":
		err = os.Symlink("/dev/zero", path)
	case "dir":
		err = os.Mkdir(path, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// Issue 30, item 4: a FIFO or a symlink to /dev/zero where a sub-agent
// file may lie (beside the session, or under <session>/subagents/) is no
// sub-agent file, as the importer already holds: Open returns at once and
// the cache session is a fresh import's equal.
func TestHostileSubagentFiles(t *testing.T) {
	body := interopClaude(t)
	for _, kind := range []string{"fifo", "devzero"} {
		for _, where := range []string{"agent-x.jsonl", filepath.Join("s", "subagents", "agent-x.jsonl")} {
			t.Run(kind+"/"+where, func(t *testing.T) {
				dir := t.TempDir()
				file := filepath.Join(dir, "s.jsonl")
				if err := os.WriteFile(file, body, 0o644); err != nil {
					t.Fatal(err)
				}
				hostileFile(t, kind, filepath.Join(dir, where))
				bounded(t, "Open", func() {
					e, err := openClosed(context.Background(), file, Options{CacheDir: t.TempDir()})
					if err != nil {
						t.Error(err)
						return
					}
					if !bytes.Equal(readNodes(t, e.Session), freshNodes(t, file)) {
						t.Error("the cache session differs from a fresh import")
					}
				})
			})
		}
	}
}

// Issue 30, item 5: state.json and resume.bin are ctxfold's own files: a
// FIFO, a symlink to /dev/zero or a directory in their place is not read
// (no hang, no unbounded memory); the file is imported afresh, the entry
// works again, and the next refresh is incremental again.
func TestHostileCacheFiles(t *testing.T) {
	body := interopClaude(t)
	half := bytes.LastIndexByte(body[:len(body)/2], '\n') + 1
	for _, kind := range []string{"fifo", "devzero", "dir"} {
		for _, name := range []string{"state.json", resumeFile} {
			t.Run(kind+"/"+name, func(t *testing.T) {
				file := filepath.Join(t.TempDir(), "s.jsonl")
				cache := t.TempDir()
				if err := os.WriteFile(file, body[:half], 0o644); err != nil {
					t.Fatal(err)
				}
				e, err := openClosed(context.Background(), file, Options{CacheDir: cache})
				if err != nil {
					t.Fatal(err)
				}
				hostileFile(t, kind, filepath.Join(filepath.Dir(e.Session), name))
				if err := os.WriteFile(file, body, 0o644); err != nil {
					t.Fatal(err)
				}
				for i := range 2 {
					bounded(t, "Open", func() {
						e, err = openClosed(context.Background(), file, Options{CacheDir: cache})
					})
					if err != nil {
						t.Fatalf("open %d: %v", i, err)
					}
					if !bytes.Equal(readNodes(t, e.Session), freshNodes(t, file)) {
						t.Fatalf("open %d (%s): the cache session differs from a fresh import", i, e.Update)
					}
				}
				// The entry was repaired: a grown file resumes again.
				if err := os.WriteFile(file, append(append([]byte{}, body...), body[half:]...), 0o644); err != nil {
					t.Fatal(err)
				}
				if e, err = openClosed(context.Background(), file, Options{CacheDir: cache}); err != nil || e.Update != Appended {
					t.Fatalf("after repair: %v, %+v", err, e)
				}
			})
		}
	}
}

// Issue 30, item 6: the unchanged path does not trust the cache session.
// Whatever was done to it — a changed byte of the same length (mtime put
// back), a hand-edited HEAD, model, window or format_version, a deleted or
// truncated file, a directory in place of a file — the next Open
// re-imports it (fresh, with a reason), the answer is a fresh import's,
// and the Open after that is unchanged again.
func TestUntrustedCacheSession(t *testing.T) {
	body := interopClaude(t)
	editMeta := func(key string, v any) func(t *testing.T, s string) {
		return func(t *testing.T, s string) {
			p := filepath.Join(s, "session.json")
			b, _ := os.ReadFile(p)
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			m[key] = v
			b, _ = json.Marshal(m)
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := map[string]func(t *testing.T, s string){
		"changed byte": func(t *testing.T, s string) {
			p := filepath.Join(s, "nodes.jsonl")
			st, _ := os.Stat(p)
			b, _ := os.ReadFile(p)
			i := bytes.Index(b, []byte(`"text":"`)) + len(`"text":"`)
			b[i] ^= 1
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			_ = os.Chtimes(p, st.ModTime(), st.ModTime())
		},
		"head":           editMeta("head", "x"),
		"model":          editMeta("model", "gpt-2"),
		"window":         editMeta("model_context_window", 1000),
		"format_version": editMeta("format_version", 99),
		"nodes deleted":  func(t *testing.T, s string) { _ = os.Remove(filepath.Join(s, "nodes.jsonl")) },
		"meta deleted":   func(t *testing.T, s string) { _ = os.Remove(filepath.Join(s, "session.json")) },
		"nodes truncated": func(t *testing.T, s string) {
			_ = os.Truncate(filepath.Join(s, "nodes.jsonl"), 100)
		},
		"lock directory":       func(t *testing.T, s string) { hostileFile(t, "dir", filepath.Join(s, "lock")) },
		"entry lock directory": func(t *testing.T, s string) { hostileFile(t, "dir", filepath.Join(filepath.Dir(s), "lock")) },
		"resume.bin directory": func(t *testing.T, s string) { hostileFile(t, "dir", filepath.Join(filepath.Dir(s), resumeFile)) },
		"nodes fifo":           func(t *testing.T, s string) { hostileFile(t, "fifo", filepath.Join(s, "nodes.jsonl")) },
	}
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "s.jsonl")
			cache := t.TempDir()
			if err := os.WriteFile(file, body, 0o644); err != nil {
				t.Fatal(err)
			}
			e, err := openClosed(context.Background(), file, Options{CacheDir: cache})
			if err != nil {
				t.Fatal(err)
			}
			damage(t, e.Session)
			fresh := freshImport(t, file)
			wants := []string{Fresh, Unchanged}
			if strings.HasPrefix(name, "entry lock") || strings.HasPrefix(name, "resume.bin") {
				// Neither is part of the session: the entry is locked
				// through its directory, and resume.bin is read only when
				// the file grew (TestHostileCacheFiles).
				wants[0] = Unchanged
			}
			for i, want := range wants {
				bounded(t, "Open", func() { e, err = openClosed(context.Background(), file, Options{CacheDir: cache}) })
				if err != nil {
					t.Fatalf("open %d: %v", i, err)
				}
				if e.Update != want {
					t.Errorf("open %d: %s (%s), want %s", i, e.Update, e.Reason, want)
				}
				if !bytes.Equal(readNodes(t, e.Session), readNodes(t, fresh)) || metaJSON(t, e.Session) != metaJSON(t, fresh) {
					t.Fatalf("open %d (%s): the cache session is not a fresh import's", i, e.Update)
				}
			}
		})
	}
}

// A cache entry an older build wrote (state.json of another StateVersion,
// its session imported by older importers) is not read as it was: the
// next Open imports the file anew, and the one after resumes as usual.
func TestOlderBuildsCacheIsImportedAnew(t *testing.T) {
	body := interopClaude(t)
	file := filepath.Join(t.TempDir(), "s.jsonl")
	cache := t.TempDir()
	if err := os.WriteFile(file, body, 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := openClosed(context.Background(), file, Options{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	statePath := filepath.Join(filepath.Dir(e.Session), "state.json")
	b, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatal(err)
	}
	older := bytes.Replace(b, []byte(fmt.Sprintf(`"schema_version": %d,`, StateVersion)), []byte(fmt.Sprintf(`"schema_version": %d,`, StateVersion-1)), 1)
	if bytes.Equal(older, b) {
		t.Fatalf("state.json holds no version %d:\n%s", StateVersion, b)
	}
	if err := os.WriteFile(statePath, older, 0o644); err != nil {
		t.Fatal(err)
	}
	if e, err = openClosed(context.Background(), file, Options{CacheDir: cache}); err != nil || e.Update != Fresh {
		t.Fatalf("an older build's cache: %v, update %q, want %q", err, e.Update, Fresh)
	}
	if e, err = openClosed(context.Background(), file, Options{CacheDir: cache}); err != nil || e.Update != Unchanged {
		t.Fatalf("the open after: %v, update %q, want %q", err, e.Update, Unchanged)
	}
}

package live

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/internal/sessiontest"

	"github.com/ctxfold/ctxfold/importer"
)

// sharedTranscripts are the shared real transcripts (in place, never
// copied into the repository); the test skips when they are absent.
func sharedTranscripts(t *testing.T) []string {
	t.Helper()
	root := sessiontest.External(t)
	var files []string
	for _, pat := range []string{"claude-code/*/*.jsonl", "codex/*/*.jsonl", "gemini-cli/*/*.jsonl"} {
		m, _ := filepath.Glob(filepath.Join(root, pat))
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Skip("no shared real transcripts")
	}
	return files
}

// sharedTranscript is the last of sharedTranscripts that match accepts;
// the test is skipped, saying why, when none does.
func sharedTranscript(t *testing.T, match func(path string) bool, why string) string {
	t.Helper()
	var src string
	for _, f := range sharedTranscripts(t) {
		if match(f) {
			src = f
		}
	}
	if src == "" {
		t.Skip(why)
	}
	return src
}

// marotLines is the shared marot-spotter main transcript and its line
// ends: a long Claude Code session the refresh tests cut at many points.
func marotLines(t *testing.T) (full []byte, ends []int) {
	t.Helper()
	src := sharedTranscript(t, func(f string) bool {
		return strings.Contains(f, "marot-spotter") && strings.HasSuffix(f, ".jsonl") && !strings.Contains(f, "subagents")
	}, "shared Claude Code transcript not present")
	full, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	return full, sessiontest.LineEnds(full)
}

// cutPoints are the line boundaries to test: every one for a short file,
// evenly spread ones for a long one (the count bounds the test's time).
func cutPoints(b []byte, most int) []int {
	ends := sessiontest.LineEnds(b)
	if len(ends) > 0 && ends[len(ends)-1] == len(b) {
		ends = ends[:len(ends)-1]
	}
	if len(ends) <= most {
		return ends
	}
	var out []int
	for i := range most {
		out = append(out, ends[(i*len(ends))/most])
	}
	return out
}

// workFile makes a writable copy's path for src in a fresh directory,
// with the sibling sub-agent directory (Claude Code's <session>/) linked
// beside it so the importer finds the same files.
func workFile(t *testing.T, src string, sidecar bool) string {
	t.Helper()
	dir := t.TempDir()
	base := filepath.Base(src)
	side := strings.TrimSuffix(src, ".jsonl")
	if st, err := os.Stat(side); err == nil && st.IsDir() && sidecar {
		abs, _ := filepath.Abs(side)
		if err := os.Symlink(abs, filepath.Join(dir, filepath.Base(side))); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, base)
}

func freshNodes(t testing.TB, file string) []byte {
	t.Helper()
	return readNodes(t, freshImport(t, file))
}

// freshImport imports file into a new session directory and returns it.
func freshImport(t testing.TB, file string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "fresh")
	if _, err := importer.Import(context.Background(), importer.Options{From: importer.Auto, Files: []string{file}, Out: out}); err != nil {
		t.Fatalf("fresh import of %s: %v", file, err)
	}
	return out
}

func readNodes(t testing.TB, dir string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "nodes.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A file imported at a cut and then grown to its end gives the same
// nodes.jsonl as a fresh import of the whole file, at every tested cut of
// every shared real transcript (cuts between the lines of one streamed
// request included). The sub-agent files Claude Code keeps beside a
// session are left out here: they are read whole at every cut, so the
// cut import already holds sub-agent turns the main file reaches only
// later (TestGrownFileWithSubagents).
func TestGrownFileMatchesFreshImport(t *testing.T) { testGrown(t, false) }

// With the sub-agent files beside the session, a grown import holds the
// same node lines as a fresh one; only their order may differ (the
// sub-agent nodes were appended before the main turns that spawn them).
// Order carries no meaning in the DAG (docs/FORMAT.md §1).
func TestGrownFileWithSubagents(t *testing.T) { testGrown(t, true) }

func testGrown(t *testing.T, sidecar bool) {
	most := 24
	if sidecar {
		most = 12
	}
	if !longRun() {
		most = 6
	}
	ctx := context.Background()
	for _, src := range sharedTranscripts(t) {
		if st, err := os.Stat(strings.TrimSuffix(src, ".jsonl")); sidecar && (err != nil || !st.IsDir()) {
			continue
		}
		t.Run(filepath.Base(src), func(t *testing.T) {
			full, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			file := workFile(t, src, sidecar)
			if err := os.WriteFile(file, full, 0o644); err != nil {
				t.Fatal(err)
			}
			want := freshNodes(t, file)
			counts := map[string]int{}
			for _, cut := range cutPoints(full, most) {
				cache := t.TempDir()
				if err := os.WriteFile(file, full[:cut], 0o644); err != nil {
					t.Fatal(err)
				}
				e, err := openClosed(ctx, file, Options{CacheDir: cache})
				if err != nil {
					// A prefix that holds no conversation yet (only a
					// header) is not an error of the cache.
					if strings.Contains(err.Error(), "no ") || strings.Contains(err.Error(), "nothing") {
						continue
					}
					t.Fatalf("cut %d: %v", cut, err)
				}
				if e.Update != Fresh || e.Consumed != int64(cut) {
					t.Fatalf("cut %d: first open %+v", cut, e)
				}
				if err := os.WriteFile(file, full, 0o644); err != nil {
					t.Fatal(err)
				}
				e, err = openClosed(ctx, file, Options{CacheDir: cache})
				if err != nil {
					t.Fatalf("cut %d: grown: %v", cut, err)
				}
				counts[e.Update]++
				if e.Consumed != int64(len(full)) {
					t.Fatalf("cut %d: consumed %d of %d", cut, e.Consumed, len(full))
				}
				got, err := os.ReadFile(filepath.Join(e.Session, "nodes.jsonl"))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) && sidecar && sameLines(got, want) {
					counts["same lines, other order"]++
				} else if !bytes.Equal(got, want) {
					t.Errorf("cut %d (%s): nodes.jsonl differs from a fresh import (%d vs %d bytes)", cut, e.Update, len(got), len(want))
				}
				if e2, err := openClosed(ctx, file, Options{CacheDir: cache}); err != nil || e2.Update != Unchanged {
					t.Errorf("cut %d: third open %+v %v, want unchanged", cut, e2, err)
				}
			}
			t.Logf("%s: updates %v", filepath.Base(src), counts)
		})
	}
}

// sameLines: a and b hold the same lines, in any order.
func sameLines(a, b []byte) bool {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	if len(la) != len(lb) {
		return false
	}
	n := map[string]int{}
	for _, l := range la {
		n[string(l)]++
	}
	for _, l := range lb {
		n[string(l)]--
	}
	for _, c := range n {
		if c != 0 {
			return false
		}
	}
	return true
}

// The consumed prefix is checked by its hash: an edit of imported bytes
// that keeps the length, a truncation and a rewrite are each imported
// afresh, and the cache session then equals a fresh import of the file.
func TestPrefixCheck(t *testing.T) {
	m, _ := filepath.Glob("../testdata/interop/claude-code/2.1.328/*/transcript/*.jsonl")
	if len(m) < 2 {
		t.Fatal("no Claude Code interop transcripts")
	}
	a, err := os.ReadFile(m[0])
	if err != nil {
		t.Fatal(err)
	}
	other, err := os.ReadFile(m[1])
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ends := sessiontest.LineEnds(a)
	half := ends[len(ends)/2]
	// Same length, different content: one letter of a text changed inside
	// the consumed half.
	edited := bytes.Clone(a)
	i := bytes.Index(edited[:half], []byte(`"text":"`))
	if i < 0 {
		t.Fatal("no text in the first half")
	}
	j := i + len(`"text":"`)
	if edited[j] == 'X' {
		edited[j] = 'Y'
	} else {
		edited[j] = 'X'
	}
	cases := []struct {
		name   string
		now    []byte
		update string
		reason string
		// discard: the refresh ran beside the hash (overlap.go), which
		// then found the prefix changed.
		discard bool
	}{
		{"same length, edited", edited[:half], Fresh, "changed", false},
		{"edited and grown", edited, Fresh, "changed", true},
		{"truncated", a[:ends[len(ends)/4]], Fresh, "shorter", false},
		{"rewritten", other, Fresh, "", len(other) > half},
		{"grown", a, Appended, "", false},
		{"unchanged", a[:half], Unchanged, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cache := t.TempDir()
			file := filepath.Join(t.TempDir(), "s.jsonl")
			if err := os.WriteFile(file, a[:half], 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := openClosed(ctx, file, Options{CacheDir: cache}); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, c.now, 0o644); err != nil {
				t.Fatal(err)
			}
			// The edit keeps the size, and the mtime may well be the same:
			// only the hash can tell.
			discards := overlapDiscards.Load()
			e, err := openClosed(ctx, file, Options{CacheDir: cache})
			if err != nil {
				t.Fatal(err)
			}
			if got := overlapDiscards.Load() > discards; got != c.discard {
				t.Errorf("overlapped refresh discarded: %v, want %v", got, c.discard)
			}
			if e.Update != c.update || !strings.Contains(e.Reason, c.reason) {
				t.Fatalf("update %q reason %q, want %q with %q", e.Update, e.Reason, c.update, c.reason)
			}
			got, err := os.ReadFile(filepath.Join(e.Session, "nodes.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if want := freshNodes(t, file); !bytes.Equal(got, want) {
				t.Errorf("the cache session differs from a fresh import of the file as it is now")
			}
		})
	}
}

// openClosed is Open for a test that reads the session before its next
// Open in the same goroutine: the hold is released at once, so the next
// Open refreshes (no other process refreshes meanwhile).
func openClosed(ctx context.Context, file string, opts Options) (*Entry, error) {
	e, err := Open(ctx, file, opts)
	e.Close()
	return e, err
}

// Prepare runs with the cache session when a refresh of an existing one
// begins, not when the file is imported the first time.
func TestPrepare(t *testing.T) {
	m, _ := filepath.Glob("../testdata/interop/claude-code/2.1.328/*/transcript/*.jsonl")
	if len(m) == 0 {
		t.Fatal("no Claude Code interop transcripts")
	}
	full, err := os.ReadFile(m[0])
	if err != nil {
		t.Fatal(err)
	}
	ends := sessiontest.LineEnds(full)
	file := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(file, full[:ends[len(ends)/2]], 0o644); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 2)
	opts := Options{CacheDir: t.TempDir(), Prepare: func(s string) { got <- s }}
	ctx := context.Background()
	if _, err := openClosed(ctx, file, opts); err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("prepared %q before any cache session existed", <-got)
	}
	if err := os.WriteFile(file, full, 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := openClosed(ctx, file, opts)
	if err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != e.Session {
		t.Fatalf("prepared %q, want the cache session %q", s, e.Session)
	}
}

package estimate_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/live"
)

// TestTailEqualsFull: at cut after cut of real Claude Code transcripts (a
// shared session with 152 recorded requests and a compaction, and the
// real-client compaction recording), the status answered from the tail
// is the number the whole transcript gives: calibrated tokens, budget
// share, model, window and compactions. The tail starts small, so at the
// later cuts of the long session it is a strict suffix.
func TestTailEqualsFull(t *testing.T) {
	files := []string{
		generatedSession(t),
		sessiontest.External(t, "claude-code", "marot-spotter", "258c7280-ae70-4798-800f-63464d01a85d.jsonl"),
		filepath.Join("..", "testdata", "interop", "claude-code", "2.1.328", "compact", "transcript", "00000000-0000-4000-8000-000000000001.jsonl"),
	}
	ctx := context.Background()
	suffixes, unusable := 0, 0
	for _, src := range files {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		ends := lineEnds(data)
		step := max(1, len(ends)/sessiontest.Sample(len(ends), 4))
		if sessiontest.LongRun() {
			step = max(1, len(ends)/60)
		}
		fullCache := t.TempDir() // cuts in file order: the full path refreshes incrementally
		for k := len(ends) % step; k < len(ends); k += step {
			cut := data[:ends[k]]
			file := filepath.Join(fullCache, "s.jsonl")
			if err := os.WriteFile(file, cut, 0o600); err != nil {
				t.Fatal(err)
			}
			cache := t.TempDir()
			so := estimate.SessionOptions{}
			a, err := estimate.FromTail(ctx, file, estimate.TailOptions{Live: live.Options{CacheDir: cache}, Session: so, MinBytes: 16 << 10})
			if errors.Is(err, estimate.ErrTailUnusable) {
				unusable++
				continue // the full path answers (no request yet, or right after a compaction)
			}
			if err != nil {
				if _, ferr := fullStatus(ctx, file, fullCache, so); ferr == nil {
					t.Fatalf("%s cut %d: the tail fails (%v), the whole file does not", src, ends[k], err)
				}
				continue // nothing to measure yet, whole or tail
			}
			got := estimate.TailStatus(a, 0)
			strict := a.Entry.Start > 0
			a.Entry.Close()
			out, err := fullStatus(ctx, file, fullCache, so)
			if err != nil {
				t.Fatal(err)
			}
			want := tailWant(out)
			if got != want || a.Compactions != out.Summaries {
				t.Errorf("%s cut at byte %d (tail from %d):\n tail %+v compactions %d\n full %+v compactions %d",
					filepath.Base(src), ends[k], a.Entry.Start, got, a.Compactions, want, out.Summaries)
			}
			if strict {
				suffixes++
			}
		}
	}
	t.Logf("%d cuts answered from a strict suffix, %d left to the full path", suffixes, unusable)
	if suffixes == 0 {
		t.Error("no cut was answered from a strict suffix: the test checks nothing")
	}
}

// generatedSession is a long linear Claude Code session of 5 MB, the
// shared d-kimuson session's turns replicated by bench/claudecode-gen
// (hundreds of recorded requests: a 1 MB tail holds the fit's window and
// more), made once per test binary.
func generatedSession(t *testing.T) string {
	t.Helper()
	src := sessiontest.External(t, "claude-code", "d-kimuson-claude-code-viewer", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl")
	generated.once.Do(func() {
		dir, err := os.MkdirTemp("", "ctxfold-tail-test-")
		if err != nil {
			generated.err = err
			return
		}
		generated.dir = dir
		gen := filepath.Join(dir, "gen")
		if out, err := exec.Command("go", "build", "-o", gen, "../bench/claudecode-gen").CombinedOutput(); err != nil {
			generated.err = fmt.Errorf("building the generator: %v\n%s", err, out)
			return
		}
		generated.file = filepath.Join(dir, "generated.jsonl")
		if out, err := exec.Command(gen, "-src", src, "-mb", "5", "-o", generated.file).CombinedOutput(); err != nil {
			generated.err = fmt.Errorf("generating: %v\n%s", err, out)
		}
	})
	if generated.err != nil {
		t.Fatal(generated.err)
	}
	return generated.file
}

func TestMain(m *testing.M) {
	code := m.Run()
	if generated.dir != "" {
		os.RemoveAll(generated.dir)
	}
	os.Exit(code)
}

var generated struct {
	dir  string
	once sync.Once
	file string
	err  error
}

// fullStatus is what estimate FILE measures: the whole file's cache session.
func fullStatus(ctx context.Context, file, cache string, so estimate.SessionOptions) (estimate.SessionResult, error) {
	e, err := live.Open(ctx, file, live.Options{CacheDir: cache})
	if err != nil {
		return estimate.SessionResult{}, err
	}
	defer e.Close()
	out := estimate.Session(ctx, e.Session, so)
	return out, out.Err
}

// tailWant is the whole file's status as a tail's is compared with:
// RawTokens aside, which only the whole file's session holds.
func tailWant(out estimate.SessionResult) estimate.Status {
	want := estimate.StatusOf(out.Result, 0)
	want.RawTokens = 0
	return want
}

// wholeStatus writes data to file and measures it whole (fullStatus,
// cache its live cache): the result and tailWant of it.
func wholeStatus(t *testing.T, file, cache string, data []byte) (estimate.SessionResult, estimate.Status) {
	t.Helper()
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := fullStatus(context.Background(), file, cache, estimate.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out, tailWant(out)
}

// TestTailAppends: one tail session followed through appends, a line at a
// time and half lines, answers as the whole file does after each (the
// copy's refresh is incremental: "appended", never a fresh copy).
func TestTailAppends(t *testing.T) {
	data, err := os.ReadFile(generatedSession(t))
	if err != nil {
		t.Fatal(err)
	}
	ends := lineEnds(data)
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "s.jsonl")
	cache := t.TempDir()
	start := ends[len(ends)-sessiontest.Sample(40, 6)-1]
	if err := os.WriteFile(file, data[:start], 0o600); err != nil {
		t.Fatal(err)
	}
	to := estimate.TailOptions{Live: live.Options{CacheDir: cache}}
	fullCache := t.TempDir() // refreshed incrementally too
	var cuts []int
	for _, e := range ends {
		if e > start {
			cuts = append(cuts, e-40, e) // inside the line, then its end
		}
	}
	appended := 0
	for _, cut := range cuts {
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := f.Stat()
		if _, err := f.Write(data[st.Size():cut]); err != nil {
			t.Fatal(err)
		}
		f.Close()
		a, err := estimate.FromTail(ctx, file, to)
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		got, from, upd := estimate.TailStatus(a, 0), a.Entry.Start, a.Entry.TailUpdate
		a.Entry.Close()
		if upd == live.Appended {
			appended++
		}
		out, err := fullStatus(ctx, file, fullCache, estimate.SessionOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := tailWant(out)
		if got != want || from == 0 {
			t.Fatalf("cut %d (tail from %d, %s):\n tail %+v\n full %+v", cut, from, upd, got, want)
		}
	}
	if appended < len(cuts)-1 {
		t.Errorf("%d of %d refreshes appended to the tail; want all but the first", appended, len(cuts))
	}
}

func lineEnds(b []byte) []int {
	var ends []int
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return ends
		}
		i += j + 1
		ends = append(ends, i)
	}
}

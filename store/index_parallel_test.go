package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/transcript"
)

// CTXFOLD_TEST_INDEX_WORKERS=N forces every Open in this package's tests
// onto N index workers with tiny chunks, so the whole suite (crash,
// concurrency, store tests) can be run against the parallel path:
//
//	CTXFOLD_TEST_INDEX_WORKERS=3 go test ./store/
func init() {
	if n, err := strconv.Atoi(os.Getenv("CTXFOLD_TEST_INDEX_WORKERS")); err == nil && n > 0 {
		indexWorkersOverride = n
		indexChunkBytes = 97
	}
}

// withIndexKnobs runs fn with the index forced to workers (1: sequential)
// and chunks of chunk bytes, restoring the knobs after.
func withIndexKnobs(workers, chunk int, fn func()) {
	oldW, oldC := indexWorkersOverride, indexChunkBytes
	indexWorkersOverride, indexChunkBytes = workers, chunk
	defer func() { indexWorkersOverride, indexChunkBytes = oldW, oldC }()
	fn()
}

// openResult is everything Open decides, for comparison.
type openResult struct {
	Refs           []NodeRef
	Duplicates     []Duplicate
	Warnings       []Warning
	CommittedBytes int64
	TailBytes      int64
	Unterminated   bool
	ByID           map[string]int
	Err            error
}

func openFor(t *testing.T, dir string, opts OpenOptions, workers, chunk int) openResult {
	t.Helper()
	var r openResult
	withIndexKnobs(workers, chunk, func() {
		s, err := Open(dir, opts)
		if err != nil {
			var pe *transcript.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("workers=%d: not a *ParseError: %T %v", workers, err, err)
			}
			r.Err = err
			return
		}
		defer s.Close()
		r = openResult{Refs: allRefs(s), Duplicates: s.Duplicates, Warnings: s.Warnings, CommittedBytes: s.CommittedBytes,
			TailBytes: s.TailBytes, Unterminated: s.unterminated, ByID: byIDMap(s)}
		if len(r.Refs) == 0 {
			r.Refs = nil
		}
	})
	return r
}

// sameAsSequential opens dir sequentially, then in parallel with several
// worker counts and chunk sizes (chunks shorter than a line included), and
// fails on any difference. It returns the sequential result.
func sameAsSequential(t *testing.T, dir string, opts OpenOptions) openResult {
	t.Helper()
	want := openFor(t, dir, opts, 1, indexChunkBytes)
	for _, workers := range []int{2, 5} {
		for _, chunk := range []int{7, 1000, 64 << 10} {
			got := openFor(t, dir, opts, workers, chunk)
			if !reflect.DeepEqual(fmt.Sprint(got.Err), fmt.Sprint(want.Err)) || !reflect.DeepEqual(got.Err, want.Err) {
				t.Fatalf("workers=%d chunk=%d: error\n got %v\nwant %v", workers, chunk, got.Err, want.Err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("workers=%d chunk=%d: index differs from the sequential one\n got %+v\nwant %+v",
					workers, chunk, summarize(got), summarize(want))
			}
		}
	}
	return want
}

func summarize(r openResult) string {
	return fmt.Sprintf("refs=%d dups=%v warnings=%v committed=%d tail=%d unterminated=%v err=%v",
		len(r.Refs), r.Duplicates, r.Warnings, r.CommittedBytes, r.TailBytes, r.Unterminated, r.Err)
}

// genLines makes n node lines of every shape the index looks at: text,
// blocks, tool calls and results, summaries, duplicates every 97th line,
// multi-byte text, CRLF endings every 13th line.
func genLines(rng *rand.Rand, n int) [][]byte {
	lines := make([][]byte, 0, n)
	for i := range n {
		id := fmt.Sprintf("n%d", i)
		if i%97 == 96 {
			id = fmt.Sprintf("n%d", rng.IntN(i)) // a duplicate
		}
		pred := "null"
		if i > 0 {
			pred = fmt.Sprintf("%q", fmt.Sprintf("n%d", i-1))
		}
		words := strings.Repeat("wörds 😀 ", rng.IntN(40))
		var l string
		switch i % 5 {
		case 0:
			l = fmt.Sprintf(`{"id":%q,"predecessor":%s,"role":"user","content":%q}`, id, pred, "ask "+words)
		case 1:
			l = fmt.Sprintf(`{"id":%q,"predecessor":%s,"role":"assistant","content":[{"type":"text","text":%q},{"type":"tool_call","id":"c%d","name":"grep","arguments":{"q":"x"}}]}`, id, pred, words, i)
		case 2:
			l = fmt.Sprintf(`{"id":%q,"predecessor":%s,"role":"tool","tool_call_id":"c%d","content":%q}`, id, pred, i-1, "result "+words)
		case 3:
			l = fmt.Sprintf(`{"id":%q,"predecessor":%s,"role":"user","content":[{"type":"tool_result","tool_call_id":"c%d","text":"ok"},{"type":"text","text":"and more"}]}`, id, pred, i)
		case 4:
			l = fmt.Sprintf(`{"id":%q,"predecessor":%s,"caller":"agent","role":"assistant","name":"sub","content":%q,"metadata":{"compaction":true,"covers_ids":["n%d","n%d"]}}`, id, pred, words, max(i-3, 0), max(i-2, 0))
		}
		if i%13 == 12 {
			l += "\r"
		}
		lines = append(lines, []byte(l))
	}
	return lines
}

// writeSession writes a session whose nodes.jsonl is data; committed >= 0
// records that many committed bytes in session.json, -1 none (a
// hand-written session, where the torn-last-line rule applies).
func writeSession(t *testing.T, data []byte, committed int64) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "s")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	meta := `{"format_version":1,"head":""}`
	if committed >= 0 {
		meta = fmt.Sprintf(`{"format_version":1,"head":"","nodes_bytes":%d}`, committed)
	}
	if err := os.WriteFile(filepath.Join(dir, MetaFile), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, NodesFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func joinLines(lines [][]byte) []byte {
	var b bytes.Buffer
	for _, l := range lines {
		b.Write(l)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func TestIndexParallelCleanWithDuplicates(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	lines := genLines(rng, 3000)
	data := joinLines(lines)
	for _, committed := range []int64{-1, int64(len(data))} {
		r := sameAsSequential(t, writeSession(t, data, committed), OpenOptions{})
		if r.Err != nil || len(r.Duplicates) == 0 || len(r.Refs)+len(r.Duplicates) != len(lines) || r.CommittedBytes != int64(len(data)) {
			t.Fatalf("unexpected sequential result: %s", summarize(r))
		}
	}
}

func TestIndexParallelLastLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	lines := genLines(rng, 800)
	data := joinLines(lines)
	torn := append(bytes.Clone(data), `{"id":"torn","role":"us`...)
	r := sameAsSequential(t, writeSession(t, torn, -1), OpenOptions{})
	if r.Err != nil || len(r.Warnings) != 1 || r.TailBytes == 0 {
		t.Fatalf("torn last line: %s", summarize(r))
	}
	// Committed, the same bytes are an error, not a torn line.
	if r := sameAsSequential(t, writeSession(t, torn, int64(len(torn))), OpenOptions{}); r.Err == nil {
		t.Fatalf("committed torn line: %s", summarize(r))
	}
	// A complete but unterminated last line is a node.
	unterminated := append(bytes.Clone(data), `{"id":"last","role":"user","content":"hi"}`...)
	if r := sameAsSequential(t, writeSession(t, unterminated, -1), OpenOptions{}); r.Err != nil || !r.Unterminated {
		t.Fatalf("unterminated last line: %s", summarize(r))
	}
	// session.json committing part of the file: a tail and a warning.
	for _, cut := range []int{len(data) / 2, len(data) - 1, 0} {
		cut = bytes.LastIndexByte(data[:max(cut, 1)], '\n') + 1
		sameAsSequential(t, writeSession(t, data, int64(cut)), OpenOptions{})
	}
}

func TestIndexParallelMalformedLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	lines := genLines(rng, 600)
	bad := map[string]string{
		"json":     `{"id":"bad","role":`,
		"empty":    ``,
		"blank":    "  \t",
		"utf8":     "{\"id\":\"bad\",\"role\":\"user\",\"content\":\"a\xffb\"}",
		"noid":     `{"role":"user","content":"x"}`,
		"role":     `{"id":"bad","role":"robot","content":"x"}`,
		"array":    `[1,2]`,
		"nullline": `null`,
	}
	for name, b := range bad {
		for _, pos := range []int{0, 1, 97, 299, 598, 599} {
			ls := append([][]byte(nil), lines...)
			ls[pos] = []byte(b)
			// A second, later error must never win over the first.
			if pos+50 < len(ls) {
				ls[pos+50] = []byte(`{"id":"later","role":"robot"}`)
			}
			r := sameAsSequential(t, writeSession(t, joinLines(ls), -1), OpenOptions{})
			var pe *transcript.ParseError
			if !errors.As(r.Err, &pe) || pe.Line != pos+1 {
				t.Fatalf("%s at line %d: got %v", name, pos+1, r.Err)
			}
		}
	}
}

func TestIndexParallelLongLines(t *testing.T) {
	const maxLine = 3000
	node := func(id string, size int) []byte {
		l := fmt.Sprintf(`{"id":%q,"role":"user","content":""}`, id)
		pad := strings.Repeat("x", size-len(l))
		return []byte(fmt.Sprintf(`{"id":%q,"role":"user","content":"%s"}`, id, pad))
	}
	rng := rand.New(rand.NewPCG(7, 8))
	base := genLines(rng, 300)
	for _, size := range []int{maxLine - 1, maxLine, maxLine + 1, maxLine + 2, 3 * maxLine} {
		for _, pos := range []int{0, 150, 299} {
			ls := append([][]byte(nil), base...)
			ls[pos] = node("long", size)
			data := joinLines(ls)
			r := sameAsSequential(t, writeSession(t, data, -1), OpenOptions{MaxLineBytes: maxLine})
			if (r.Err != nil) != (size > maxLine) {
				t.Fatalf("size %d at line %d: %v", size, pos+1, r.Err)
			}
			// The same line last and unterminated.
			data = append(joinLines(ls[:pos]), node("long", size)...)
			sameAsSequential(t, writeSession(t, data, -1), OpenOptions{MaxLineBytes: maxLine})
			sameAsSequential(t, writeSession(t, data, int64(len(data))), OpenOptions{MaxLineBytes: maxLine})
		}
	}
}

// TestIndexParallelBufferBoundary covers the sequential reader's one quirk
// that depends on its 1 MiB buffer: an unterminated last line of exactly
// max_line_bytes+1 bytes is refused only when the buffer fills first.
func TestIndexParallelBufferBoundary(t *testing.T) {
	if !longRun() {
		t.Skip("writes a 2 MiB session")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	data := joinLines(genLines(rng, 3000))
	for len(data) < 1<<20 {
		data = append(data, data...)
	}
	data = data[:bytes.LastIndexByte(data[:1<<20], '\n')+1]
	for _, maxLine := range []int{1<<20 - 1, 1 << 20} {
		pad := strings.Repeat("y", maxLine+1-len(`{"id":"big","role":"user","content":""}`))
		last := fmt.Sprintf(`{"id":"big","role":"user","content":"%s"}`, pad)
		file := append(bytes.Clone(data), last...)
		r := sameAsSequential(t, writeSession(t, file, -1), OpenOptions{MaxLineBytes: maxLine})
		if (r.Err != nil) != (maxLine == 1<<20-1) {
			t.Fatalf("max_line_bytes %d: %s", maxLine, summarize(r))
		}
	}
}

// TestIndexParallelRandomDamage corrupts a generated file at random places
// (bytes changed, newlines added or removed, truncation) and requires the
// same outcome from both paths.
func TestIndexParallelRandomDamage(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	clean := joinLines(genLines(rng, 400))
	for range 60 {
		data := bytes.Clone(clean)
		for range 1 + rng.IntN(3) {
			i := rng.IntN(len(data))
			switch rng.IntN(4) {
			case 0:
				data[i] = byte(rng.IntN(256))
			case 1:
				data[i] = '\n'
			case 2:
				data = append(data[:i], data[i+1:]...)
			case 3:
				data = data[:i]
			}
		}
		committed := int64(-1)
		if rng.IntN(3) == 0 {
			committed = int64(rng.IntN(len(data) + 1))
		}
		sameAsSequential(t, writeSession(t, data, committed), OpenOptions{MaxLineBytes: 200 + rng.IntN(2000)})
	}
}

// TestIndexParallelAppendAfterOpen checks that a snapshot indexed in
// parallel is extended in place by Tx.Append exactly like a sequential
// one, and that what it wrote reads back the same.
func TestIndexParallelAppendAfterOpen(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	data := joinLines(genLines(rng, 500))
	for _, tail := range []string{"", `{"id":"end","role":"user","content":"no newline"}`} {
		file := append(bytes.Clone(data), tail...)
		var snaps, reopened []openResult
		for _, workers := range []int{1, 3} {
			dir := writeSession(t, file, -1)
			withIndexKnobs(workers, 61, func() {
				_, err := Update(context.Background(), dir, WriteOptions{LockTimeout: 2 * time.Second, Command: "test"}, func(tx *Tx) error {
					// n0 is a user turn: n1 has an open call a text turn may not follow.
					for i, pred := range []string{"n0", "new0"} {
						n := transcript.Node{ID: fmt.Sprintf("new%d", i), Predecessor: pred, Role: transcript.RoleUser, Content: transcript.TextContent("x")}
						if _, err := tx.Append([]transcript.Node{n}, AppendOptions{AllowBrokenGraph: true}); err != nil {
							return err
						}
					}
					s := tx.Session()
					snaps = append(snaps, openResult{Refs: allRefs(s), Duplicates: s.Duplicates, CommittedBytes: s.CommittedBytes,
						TailBytes: s.TailBytes, Unterminated: s.unterminated, ByID: byIDMap(s)})
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			})
			reopened = append(reopened, openFor(t, dir, OpenOptions{}, 1, 61))
		}
		if !reflect.DeepEqual(snaps[0], snaps[1]) {
			t.Fatalf("snapshot after append: %s vs %s", summarize(snaps[0]), summarize(snaps[1]))
		}
		if !reflect.DeepEqual(reopened[0], reopened[1]) || len(reopened[0].Refs) != len(snaps[0].Refs) {
			t.Fatalf("reopened after append: %s vs %s", summarize(reopened[0]), summarize(reopened[1]))
		}
	}
}

// FuzzIndexParallel: whatever the bytes, the parallel index equals the
// sequential one.
//
//	go test ./store -run '^$' -fuzz '^FuzzIndexParallel$' -fuzztime 30s
func FuzzIndexParallel(f *testing.F) {
	rng := rand.New(rand.NewPCG(15, 16))
	clean := joinLines(genLines(rng, 40))
	f.Add(clean, int64(-1), 0)
	f.Add(clean[:len(clean)-7], int64(-1), 300)
	f.Add(clean, int64(len(clean)/2), 0)
	f.Add([]byte("{\"id\":\"a\",\"role\":\"user\"}\n\n{\"id\":\"a\",\"role\":\"user\"}\r\n{\"id\":\"b\""), int64(-1), 10)
	f.Fuzz(func(t *testing.T, data []byte, committed int64, maxLine int) {
		if committed > int64(len(data)) || committed < -1 || maxLine < 0 || maxLine > 1<<20 {
			return
		}
		sameAsSequential(t, writeSession(t, data, committed), OpenOptions{MaxLineBytes: maxLine})
	})
}

func allRefs(s *Session) []NodeRef {
	var out []NodeRef
	for _, r := range s.All() {
		out = append(out, r)
	}
	return out
}

func byIDMap(s *Session) map[string]int {
	m := make(map[string]int, s.Len())
	for i := range s.Len() {
		j, ok := s.Lookup(s.ID(i))
		if !ok || j != i {
			panic(fmt.Sprintf("id %q at %d looks up as %d, %v", s.ID(i), i, j, ok))
		}
		m[s.ID(i)] = j
	}
	return m
}

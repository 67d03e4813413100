// Package sessiontest holds the test helpers that several packages share:
// a generator of tool-heavy conversations, pointer views of them, a copy
// of a shipped fixture session that a test may write, and every line of
// the real transcripts and recordings (EachRealLine).
package sessiontest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// NewRand is the deterministic source every generated session uses unless
// a test wants another.
func NewRand() *rand.Rand { return rand.New(rand.NewPCG(3, 4)) }

// Generate builds a tool-heavy conversation: a system root, then turns
// that start with a user message, run zero to four tool steps (calls in
// tool_calls or as tool_call blocks, answered by tool nodes or by a user
// node of tool_result blocks, sometimes with text), and usually end with an
// assistant answer.
func Generate(r *rand.Rand, turns int) []transcript.Node {
	var out []transcript.Node
	id := 0
	next := func(prefix string) string { id++; return fmt.Sprintf("%s%d", prefix, id) }
	out = append(out, transcript.Node{ID: "sys", Role: transcript.RoleSystem, Content: transcript.TextContent("You are a coding agent.")})
	for t := 0; t < turns; t++ {
		out = append(out, transcript.Node{ID: next("u"), Role: transcript.RoleUser,
			Content: transcript.TextContent(fmt.Sprintf("Turn %d: please look at pkg/mod%d/file%d.go and run the tests.", t, t, r.IntN(9)))})
		for step := r.IntN(5); step > 0; step-- {
			ncalls := 1 + r.IntN(3)
			a := transcript.Node{ID: next("a"), Role: transcript.RoleAssistant}
			var callIDs []string
			blocks := r.IntN(2) == 0
			if blocks {
				a.Content = transcript.Content{IsBlocks: true, Blocks: []transcript.Block{{Type: transcript.BlockText, Text: "Working."}}}
			} else {
				a.Content = transcript.TextContent("")
			}
			for c := 0; c < ncalls; c++ {
				cid := next("call_")
				callIDs = append(callIDs, cid)
				args := json.RawMessage(fmt.Sprintf(`{"cmd":"go test ./pkg/mod%d -run T%d"}`, t, c))
				if blocks {
					a.Content.Blocks = append(a.Content.Blocks, transcript.Block{Type: transcript.BlockToolCall, ID: cid, Name: "bash", Arguments: args})
				} else {
					a.ToolCalls = append(a.ToolCalls, transcript.ToolCall{ID: cid, Name: "bash", Arguments: args})
				}
			}
			out = append(out, a)
			if r.IntN(3) == 0 {
				// Anthropic style: one user node answers every call, maybe
				// with text beside the results.
				u := transcript.Node{ID: next("r"), Role: transcript.RoleUser, Content: transcript.Content{IsBlocks: true}}
				for _, cid := range callIDs {
					u.Content.Blocks = append(u.Content.Blocks, transcript.Block{Type: transcript.BlockToolResult, ToolCallID: cid, Text: "ok", IsError: r.IntN(5) == 0})
				}
				if r.IntN(2) == 0 {
					u.Content.Blocks = append(u.Content.Blocks, transcript.Block{Type: transcript.BlockText, Text: "Also check the vet output."})
				}
				out = append(out, u)
			} else {
				for _, cid := range callIDs {
					out = append(out, transcript.Node{ID: next("t"), Role: transcript.RoleTool, ToolCallID: cid,
						Content: transcript.TextContent(fmt.Sprintf("--- FAIL: T (0.00s)\n%s output line\nok", cid))})
				}
			}
		}
		if r.IntN(6) != 0 {
			out = append(out, transcript.Node{ID: next("a"), Role: transcript.RoleAssistant,
				Content: transcript.TextContent(fmt.Sprintf("Done with turn %d. I'll keep pkg/mod%d as is.", t, t))})
		}
	}
	for i := range out {
		if i > 0 {
			out[i].Predecessor = out[i-1].ID
		}
	}
	return out
}

// Pointers returns a pointer to each node, in order.
func Pointers(nodes []transcript.Node) []*transcript.Node {
	out := make([]*transcript.Node, len(nodes))
	for i := range nodes {
		out[i] = &nodes[i]
	}
	return out
}

// FixturesDir is the repository's fixtures/ directory, found from this
// file's own path so a test in any package can use it.
func FixturesDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "fixtures")
}

// CopyFixture copies the session fixtures/NAME into a temp dir without
// caches or lock files: tests never write into fixtures/, and commands write
// caches beside the nodes.
func CopyFixture(t testing.TB, name string) string {
	t.Helper()
	src := filepath.Join(FixturesDir(), name)
	dst := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"session.json", "nodes.jsonl", "events.jsonl"} {
		data, err := os.ReadFile(filepath.Join(src, f))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// External is a file or directory of the shared real transcripts
// (../shared/fixtures/external beside the repository; MANIFEST.md there
// gives provenance), read in place and never copied. A worktree that is
// not beside ../shared may point CTXFOLD_SHARED_DIR at that directory. The
// test is skipped when the transcripts are absent.
func External(t testing.TB, rel ...string) string {
	t.Helper()
	if root := SharedRoot(); root != "" {
		p := filepath.Join(append([]string{root, "fixtures", "external"}, rel...)...)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skipf("skipping: the shared real transcripts are absent (../shared/fixtures/external/%s; set CTXFOLD_SHARED_DIR to another copy of shared/)", filepath.Join(rel...))
	return ""
}

// SharedRoot is the shared directory that holds fixtures/external: the
// repository's sibling ../shared, else $CTXFOLD_SHARED_DIR; "" when
// neither holds it (a plain clone). Tests reach it only through External
// (and the end-to-end scripts' $SHARED), so each skip says why.
func SharedRoot() string {
	roots := []string{filepath.Join(FixturesDir(), "..", "..", "shared")}
	if d := os.Getenv("CTXFOLD_SHARED_DIR"); d != "" {
		roots = append(roots, d)
	}
	for _, root := range roots {
		if st, err := os.Stat(filepath.Join(root, "fixtures", "external")); err == nil && st.IsDir() {
			abs, err := filepath.Abs(root)
			if err != nil {
				return root
			}
			return abs
		}
	}
	return ""
}

// Rendered is the view from dir's HEAD in format f, as 'ctxfold render'
// prints it.
func Rendered(t testing.TB, dir string, f render.Format) string {
	t.Helper()
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	v, err := render.Build(g, "", false)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := render.Write(&b, v, f); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// StoredNode reads node id of the session in dir.
func StoredNode(t testing.TB, dir, id string) *transcript.Node {
	t.Helper()
	s, err := store.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	i, ok := s.Lookup(id)
	if !ok {
		t.Fatalf("node %q not stored", id)
	}
	n, err := s.Node(i)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Long skips t unless CTXFOLD_LONG=1 asks for the long runs (every cut
// point, crash loops, stress and soak tests) that .ci/run makes after the
// plain go test ./...; what names the run in the skip message so a skip
// always says why.
func Long(t testing.TB, what string) {
	t.Helper()
	if os.Getenv("CTXFOLD_LONG") == "" {
		t.Skipf("skipping %s: a long run; set CTXFOLD_LONG=1 to run it (.ci/run does)", what)
	}
}

// Sample is how many cases a sampling test takes: all n in the long run
// (CTXFOLD_LONG=1), at most short otherwise, so go test ./... stays quick
// while the long run still covers every case.
func Sample(n, short int) int {
	if os.Getenv("CTXFOLD_LONG") != "" || n <= short {
		return n
	}
	return short
}

// LongRun reports whether this is the long run (CTXFOLD_LONG=1).
func LongRun() bool { return os.Getenv("CTXFOLD_LONG") != "" }

// LineEnds are the offsets just after every newline of b: the cut points
// of a transcript that a test grows line by line.
func LineEnds(b []byte) []int {
	var ends []int
	for i, c := range b {
		if c == '\n' {
			ends = append(ends, i+1)
		}
	}
	return ends
}

// EachRealLine calls fn with every line of the shared real transcripts
// (every client's, under ../shared/fixtures/external) and of the
// repository's recordings (*.jsonl under a testdata directory below
// repoRoot, the repository's root as the test sees it): the corpus the
// importers' fast decoders are held equal to their general path on.
func EachRealLine(t testing.TB, repoRoot string, fn func(path string, line []byte)) {
	t.Helper()
	var files []string
	for _, root := range []string{External(t), repoRoot} {
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".jsonl") &&
				(root != repoRoot || strings.Contains(path, "testdata")) {
				files = append(files, path)
			}
			return nil
		})
	}
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			fn(path, sc.Bytes())
		}
	}
}

// FastAgrees holds an importer's fast decoder to its general one on raw:
// it reports whether fast decoded raw, and fails t where fast left a value
// behind after failing, decoded what general refuses, or decoded a value
// other than general's.
func FastAgrees[T any](t testing.TB, raw []byte, fast func([]byte, *T) bool, general func([]byte, *T) error) bool {
	t.Helper()
	var want, got, zero T
	werr := general(raw, &want)
	if !fast(raw, &got) {
		if !reflect.DeepEqual(got, zero) {
			t.Errorf("%T: the fast path failed but left a value behind: %q", got, raw)
		}
		return false
	}
	if werr != nil {
		t.Errorf("%T: the fast path decoded what the general decoder refuses (%v): %q", got, werr, raw)
	} else if !reflect.DeepEqual(got, want) {
		t.Errorf("%T: the fast path differs from the general decoder on %q:\n got %+v\nwant %+v", got, raw, got, want)
	}
	return true
}

// ResultBeforeItsCall writes src, a Claude Code transcript, into dir with
// the first tool result's line moved before the assistant line whose
// tool_use it answers (the order Claude Code's desktop app sometimes
// writes, docs/INTEROP-claude-code.md "A parent written after its child"),
// and returns the new file's path (src's base name).
func ResultBeforeItsCall(t testing.TB, src, dir string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	call, result := -1, -1
	for i, l := range lines {
		switch {
		case call < 0 && strings.Contains(l, `"type":"tool_use"`) && strings.Contains(l, `"type":"assistant"`):
			call = i
		case call >= 0 && result < 0 && strings.Contains(l, `"type":"tool_result"`):
			result = i
		}
	}
	if call < 0 || result < 0 || result-call < 2 {
		t.Fatalf("%s: no tool_use line followed by its result (%d, %d)", src, call, result)
	}
	out := append(append(append(append([]string{}, lines[:call]...), lines[result]), lines[call:result]...), lines[result+1:]...)
	moved := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(moved, []byte(strings.Join(out, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	return moved
}

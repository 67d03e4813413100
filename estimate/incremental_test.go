package estimate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/live"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// grower replays a source session into a new one a few lines at a time,
// as appends do: nodes.jsonl only grows (O_APPEND), session.json moves
// HEAD and the committed length, and names the active summary once it is
// there.
type grower struct {
	t     testing.TB
	dir   string
	lines [][]byte
	ids   []string
	sum   []bool
	meta  map[string]json.RawMessage
	// onSpine marks the nodes on the source HEAD's spine.
	onSpine map[string]bool
	active  string
	n       int
	size    int64
	head    string
}

func newGrower(t testing.TB, src string) *grower {
	s, err := store.Open(src, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	g := &grower{t: t, dir: t.TempDir(), onSpine: map[string]bool{}, active: s.Meta.ActiveSummaryID}
	for i := range s.Len() {
		raw, err := s.RawLine(i)
		if err != nil {
			t.Fatal(err)
		}
		g.lines = append(g.lines, append([]byte(nil), raw...))
		g.ids = append(g.ids, s.ID(i))
		g.sum = append(g.sum, s.IsSummary(i))
	}
	if h, ok := s.Lookup(s.Meta.Head); ok {
		for cur := h; cur >= 0; cur = s.PredIndex(cur) {
			g.onSpine[s.ID(cur)] = true
		}
	}
	data, err := os.ReadFile(filepath.Join(src, store.MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &g.meta); err != nil {
		t.Fatal(err)
	}
	// The replay writes by hand: a hash chain copied from the source would
	// (rightly) say that nodes.jsonl was written outside a commit.
	for _, k := range chainFields {
		delete(g.meta, k)
	}
	return g
}

// grow appends the next k lines; HEAD moves to the last one on the source
// HEAD's spine (or, with anyHead, to the last non-summary line).
func (g *grower) grow(k int, anyHead bool) bool {
	if g.n >= len(g.lines) {
		return false
	}
	f, err := os.OpenFile(filepath.Join(g.dir, store.NodesFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		g.t.Fatal(err)
	}
	for ; k > 0 && g.n < len(g.lines); k-- {
		line := append(append([]byte(nil), g.lines[g.n]...), '\n')
		if _, err := f.Write(line); err != nil {
			g.t.Fatal(err)
		}
		g.size += int64(len(line))
		if id := g.ids[g.n]; !g.sum[g.n] && (g.onSpine[id] || anyHead) {
			g.head = id
		}
		if g.ids[g.n] == g.active {
			g.set("active_summary_id", g.active)
		}
		g.n++
	}
	f.Close()
	g.set("head", g.head)
	g.set("nodes_bytes", g.size)
	return true
}

func (g *grower) set(key string, v any) {
	raw, _ := json.Marshal(v)
	g.meta[key] = raw
	if key != "active_summary_id" {
		_, hasActive := g.meta["active_summary_id"]
		if hasActive && !g.present(g.active) {
			delete(g.meta, "active_summary_id")
			delete(g.meta, "active_summary_text")
		}
	}
	data, _ := json.MarshalIndent(g.meta, "", "  ")
	if err := store.WriteBytesAtomic(filepath.Join(g.dir, store.MetaFile), store.AtomicOptions{}, data); err != nil {
		g.t.Fatal(err)
	}
}

func (g *grower) present(id string) bool {
	for _, x := range g.ids[:g.n] {
		if x == id {
			return true
		}
	}
	return false
}

// measureBoth measures dir through the caches and cold, and fails unless
// they agree on every field and warning; it returns the cached run's path.
func measureBoth(t *testing.T, dir string, so SessionOptions, step string) SessionResult {
	t.Helper()
	ctx := context.Background()
	got := Session(ctx, dir, so)
	cold := so
	cold.Estimate.NoCache = true
	want := Session(ctx, dir, cold)
	if (got.Err == nil) != (want.Err == nil) || got.Err != nil && got.Err.Error() != want.Err.Error() {
		t.Fatalf("%s: error %v (path %s), cold %v", step, got.Err, got.Path, want.Err)
	}
	gj, _ := json.MarshalIndent(got.Result, "", " ")
	wj, _ := json.MarshalIndent(want.Result, "", " ")
	if !bytes.Equal(gj, wj) {
		t.Fatalf("%s: %s result differs from cold (fallback %q):\n%s", step, got.Path, got.Fallback, firstDiff(string(gj), string(wj)))
	}
	if strings.Join(got.Warnings, "\n") != strings.Join(want.Warnings, "\n") {
		t.Fatalf("%s: warnings %q, cold %q", step, got.Warnings, want.Warnings)
	}
	if got.Err == nil && got.Summaries != want.Summaries {
		t.Fatalf("%s: %d summaries, cold %d", step, got.Summaries, want.Summaries)
	}
	return got
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d: got %s, cold %s", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("lengths %d vs %d", len(al), len(bl))
}

// optionSets are the inputs the equivalence runs under: providers,
// per-node detail, no calibration, a budget override.
var optionSets = []SessionOptions{
	{DefaultModel: "gpt-4o"},
	{Estimate: Options{Model: "claude-sonnet-4-5", NodeDetail: true}},
	{Estimate: Options{Model: "gemini-2.5-pro", NoCalibrate: true}},
	{Estimate: Options{Model: "gpt-4.1", Window: 60000, CompactAt: 0.5, Encoding: Cl100kBase}},
}

// replay grows src step by step and compares every option set's cached
// run with a cold one after each step; it returns how many runs took each
// path.
// Path tallies of replay beyond the paths themselves.
const (
	calibratedIncr = "incremental, calibrated"
	summarizedIncr = "incremental, calibrated, with summaries"
)

func replay(t *testing.T, src string, step int, anyHead bool) map[string]int {
	paths := map[string]int{}
	// One session per option set: the view cache holds one view. The
	// short run takes the first two (calibrated, with and without node
	// detail); the long run all of them.
	for o, so := range optionSets[:sessiontest.Sample(len(optionSets), 2)] {
		g := newGrower(t, src)
		for g.grow(step, anyHead) {
			r := measureBoth(t, g.dir, so, fmt.Sprintf("%s after %d lines, options %d", filepath.Base(src), g.n, o))
			paths[r.Path]++
			if r.Fallback != "" {
				paths["fallback: "+r.Fallback]++
			}
			if r.Path == PathIncremental && r.Result.Calibration != nil {
				paths[calibratedIncr]++
				if r.Summaries > 0 {
					paths[summarizedIncr]++
				}
			}
		}
	}
	return paths
}

func importExternal(t *testing.T, rel ...string) string {
	path := sessiontest.External(t, rel...)
	out := filepath.Join(t.TempDir(), "s")
	if _, err := importer.Import(context.Background(), importer.Options{From: importer.Auto, Files: []string{path}, Out: out}); err != nil {
		t.Fatalf("import %s: %v", path, err)
	}
	return out
}

// TestIncrementalEquivalence: after every append to real and generated
// sessions, the incremental Result is the cold one, field for field, for
// every option set; and the pure appends are indeed incremental.
func TestIncrementalEquivalence(t *testing.T) {
	type source struct {
		name string
		dir  func(t *testing.T) string
		step int
		// minIncr is the least share of runs that must be incremental;
		// want are tallies that must occur.
		minIncr float64
		want    []string
	}
	fixture := func(name string) func(t *testing.T) string {
		return func(t *testing.T) string { return filepath.Join(sessiontest.FixturesDir(), name) }
	}
	external := func(rel ...string) func(t *testing.T) string {
		return func(t *testing.T) string { return importExternal(t, rel...) }
	}
	sources := []source{
		{"tools", fixture("tools"), 1, 0.8, []string{calibratedIncr}},
		{"compacted", fixture("compacted"), 1, 0.5, nil},
		{"fork", fixture("fork"), 1, 0.5, nil},
		{"generated", generatedSession, 3, 0.8, []string{calibratedIncr}},
		{"claude-code", external("claude-code", "marot-spotter", "258c7280-ae70-4798-800f-63464d01a85d.jsonl"), 7, 0.5, []string{calibratedIncr, summarizedIncr}},
		{"claude-code-viewer", external("claude-code", "d-kimuson-claude-code-viewer", "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"), 5, 0.5, nil},
		{"codex", external("codex", "madshn-localpush", "rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"), 5, 0.5, []string{calibratedIncr, summarizedIncr}},
		{"gemini-cli", external("gemini-cli", "jazzyalex-agent-sessions", "jsonl_v040.jsonl"), 2, 0.3, nil},
	}
	for _, src := range sources {
		t.Run(src.name, func(t *testing.T) {
			step := src.step
			if !sessiontest.LongRun() && step >= 3 {
				step *= 2 // the short run: half the runs of the long sources
			}
			paths := replay(t, src.dir(t), step, false)
			total := paths[PathIncremental] + paths[PathFull] + paths[PathView]
			t.Logf("%s: %v", src.name, paths)
			if share := float64(paths[PathIncremental]) / float64(total); share < src.minIncr {
				t.Errorf("only %d of %d runs were incremental (%v)", paths[PathIncremental], total, paths)
			}
			for _, w := range src.want {
				if paths[w] == 0 {
					t.Errorf("no run was %q (%v)", w, paths)
				}
			}
		})
	}
	t.Run("any-head", func(t *testing.T) {
		// HEAD on the newest line: branches and checkouts, which fall back.
		t.Logf("%v", replay(t, filepath.Join(sessiontest.FixturesDir(), "fork"), 1, true))
		t.Logf("%v", replay(t, filepath.Join(sessiontest.FixturesDir(), "compacted"), 2, true))
	})
}

// generatedSession is a tool-heavy conversation with recorded usage and a
// sub-agent subtree (a root with a caller) in the middle.
func generatedSession(t *testing.T) string {
	nodes := sessiontest.Generate(sessiontest.NewRand(), 40)
	dir := filepath.Join(t.TempDir(), "gen")
	if _, err := store.Init(dir, "claude-sonnet-4-5", store.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	measured := int64(100)
	var all []transcript.Node
	for i, n := range nodes {
		if n.Role == transcript.RoleAssistant {
			measured += 150
			n.Usage = &transcript.Usage{InputTokens: measured}
		}
		all = append(all, n)
		if i == len(nodes)/2 {
			caller := n.ID
			all = append(all,
				transcript.Node{ID: "sub1", Role: transcript.RoleUser, Caller: caller, Content: transcript.TextContent("sub-agent task")},
				transcript.Node{ID: "sub2", Predecessor: "sub1", Role: transcript.RoleAssistant, Caller: caller, Content: transcript.TextContent("sub-agent done")})
		}
	}
	_, err := store.Update(context.Background(), dir, store.WriteOptions{}, func(tx *store.Tx) error {
		roots := make([]bool, len(all))
		for i, n := range all {
			roots[i] = n.ID == "sys" || n.ID == "sub1"
		}
		_, err := tx.Append(all, store.AppendOptions{Roots: roots})
		if err != nil {
			return err
		}
		return tx.SetHead(nodes[len(nodes)-1].ID)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// session is a measured copy of a fixture that a test changes by hand.
type session struct {
	t   *testing.T
	dir string
}

func measuredFixture(t *testing.T, name string, so SessionOptions) *session {
	s := &session{t: t, dir: sessiontest.CopyFixture(t, name)}
	if r := Session(context.Background(), s.dir, so); r.Err != nil || r.Path != PathFull {
		t.Fatalf("first run: %+v", r)
	}
	return s
}

// appendLines appends raw node lines and commits them: nodes_bytes covers
// them and HEAD moves to head ("" keeps it).
func (s *session) appendLines(head string, lines ...string) {
	f, err := os.OpenFile(filepath.Join(s.dir, store.NodesFile), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		s.t.Fatal(err)
	}
	for _, l := range lines {
		if _, err := f.WriteString(l + "\n"); err != nil {
			s.t.Fatal(err)
		}
	}
	st, _ := f.Stat()
	f.Close()
	s.setMeta(func(m map[string]any) {
		m["nodes_bytes"] = st.Size()
		if head != "" {
			m["head"] = head
		}
	})
}

func (s *session) setMeta(fn func(m map[string]any)) {
	path := filepath.Join(s.dir, store.MetaFile)
	data, err := os.ReadFile(path)
	if err != nil {
		s.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		s.t.Fatal(err)
	}
	fn(m)
	data, _ = json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		s.t.Fatal(err)
	}
}

const (
	userLine    = `{"id":"u9","predecessor":"a7","role":"user","content":"Now the negative hours."}`
	summaryLine = `{"id":"s1","predecessor":"sys","role":"user","content":"[summary]","metadata":{"compaction":true,"covers_ids":["u1","a1"]}}`
	asstLine    = `{"id":"a9","predecessor":"u9","role":"assistant","content":"Done.","usage":{"input_tokens":900,"output_tokens":5}}`
)

// TestIncrementalFallbacks: every change an append cannot account for
// falls back to the full path (and still equals a cold run), and a pure
// append right after it is incremental again.
func TestIncrementalFallbacks(t *testing.T) {
	so := SessionOptions{}
	for _, tc := range []struct {
		name, why string
		change    func(s *session)
		// errs: the session is broken, so both runs fail alike.
		errs bool
	}{
		{name: "checkout", why: "nothing appended", change: func(s *session) {
			s.setMeta(func(m map[string]any) { m["head"] = "a3" })
		}},
		{name: "branch", why: "does not descend", change: func(s *session) {
			s.appendLines("u9", `{"id":"u9","predecessor":"a3","role":"user","content":"Back to the first plan."}`)
		}},
		{name: "compaction", why: "session.json", change: func(s *session) {
			s.appendLines("", summaryLine)
			s.setMeta(func(m map[string]any) { m["active_summary_id"] = "s1" })
		}},
		{name: "summary node", why: "summary node", change: func(s *session) {
			s.appendLines("", summaryLine)
		}},
		{name: "model changed", why: "session.json", change: func(s *session) {
			s.appendLines("u9", userLine)
			s.setMeta(func(m map[string]any) { m["model"] = "claude-sonnet-4-5" })
		}},
		{name: "edit before the append", why: "committed bytes before the append changed", change: func(s *session) {
			path := filepath.Join(s.dir, store.NodesFile)
			data, _ := os.ReadFile(path)
			data = bytes.Replace(data, []byte("Both cases pass"), []byte("Both cases PASS"), 1)
			os.WriteFile(path, data, 0o644)
			s.appendLines("u9", userLine)
		}},
		{name: "rewritten file", why: "identity", change: func(s *session) {
			path := filepath.Join(s.dir, store.NodesFile)
			data, _ := os.ReadFile(path)
			os.WriteFile(path+".new", data, 0o644)
			os.Rename(path+".new", path)
			s.appendLines("u9", userLine)
		}},
		{name: "uncommitted tail", why: "past the committed length", change: func(s *session) {
			s.appendLines("u9", userLine)
			f, _ := os.OpenFile(filepath.Join(s.dir, store.NodesFile), os.O_WRONLY|os.O_APPEND, 0)
			f.WriteString(asstLine + "\n")
			f.Close()
		}},
		{name: "duplicate id", why: "repeats an earlier id", errs: true, change: func(s *session) {
			s.appendLines("a7", `{"id":"a7","predecessor":"t6","role":"user","content":"again"}`)
		}},
		{name: "missing predecessor", why: "missing or later", errs: true, change: func(s *session) {
			s.appendLines("u9", `{"id":"u9","predecessor":"nowhere","role":"user","content":"x"}`)
		}},
		{name: "forward link", why: "later one", change: func(s *session) {
			s.appendLines("u9", `{"id":"u9","predecessor":"u8","role":"user","content":"x"}`, `{"id":"u8","predecessor":"a7","role":"user","content":"y"}`)
		}},
		{name: "bad line", why: "not a valid node", errs: true, change: func(s *session) {
			s.appendLines("a7", `{"id":"u9","role":"wizard","content":"x"}`)
		}},
		{name: "line without newline", why: "no newline", change: func(s *session) {
			f, _ := os.OpenFile(filepath.Join(s.dir, store.NodesFile), os.O_WRONLY|os.O_APPEND, 0)
			f.WriteString(userLine)
			st, _ := f.Stat()
			f.Close()
			s.setMeta(func(m map[string]any) { m["nodes_bytes"] = st.Size(); m["head"] = "u9" })
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := measuredFixture(t, "tools", so)
			tc.change(s)
			r := measureBoth(t, s.dir, so, tc.name)
			if r.Path != PathFull || !strings.Contains(r.Fallback, tc.why) {
				t.Fatalf("path %s, fallback %q; want the full path because %q", r.Path, r.Fallback, tc.why)
			}
			if (r.Err != nil) != tc.errs {
				t.Fatalf("error %v", r.Err)
			}
		})
	}
}

// TestIncrementalOtherInputs: another model, --head, and no cache never
// extend a view measured for other inputs.
func TestIncrementalOtherInputs(t *testing.T) {
	s := measuredFixture(t, "tools", SessionOptions{})
	s.appendLines("u9", userLine)
	if r := measureBoth(t, s.dir, SessionOptions{Estimate: Options{Model: "gpt-4.1"}}, "other model"); r.Path != PathFull || !strings.Contains(r.Fallback, "inputs") {
		t.Fatalf("other model: path %s, fallback %q", r.Path, r.Fallback)
	}
	s = measuredFixture(t, "tools", SessionOptions{})
	s.appendLines("u9", userLine)
	if r := measureBoth(t, s.dir, SessionOptions{Head: "a7"}, "--head"); r.Path != PathFull || r.Fallback != "" {
		t.Fatalf("--head: path %s, fallback %q", r.Path, r.Fallback)
	}
	s = measuredFixture(t, "tools", SessionOptions{})
	s.appendLines("u9", userLine)
	if r := Session(context.Background(), s.dir, SessionOptions{Estimate: Options{NoCache: true}}); r.Path != PathFull {
		t.Fatalf("no cache: path %s", r.Path)
	}
	// The pure append itself, then a sub-agent's nodes (a root with a
	// caller), branching off the view: incremental, HEAD unmoved.
	if r := measureBoth(t, s.dir, SessionOptions{}, "append"); r.Path != PathIncremental {
		t.Fatalf("append: path %s, fallback %q", r.Path, r.Fallback)
	}
	s.appendLines("", `{"id":"sub1","predecessor":null,"caller":"a5","role":"user","content":"sub task"}`, `{"id":"sub2","predecessor":"sub1","caller":"a5","role":"assistant","content":"sub done"}`)
	if r := measureBoth(t, s.dir, SessionOptions{}, "sub-agent"); r.Path != PathIncremental {
		t.Fatalf("sub-agent: path %s, fallback %q", r.Path, r.Fallback)
	}
	before := bpeNodes.Load()
	s.appendLines("a9", asstLine)
	if r := Session(context.Background(), s.dir, SessionOptions{}); r.Path != PathIncremental || r.Result.Calibration == nil || r.Result.Calibration.LatestNode != "a9" {
		t.Fatalf("usage: %+v", r)
	}
	if n := bpeNodes.Load() - before; n != 1 {
		t.Fatalf("the incremental run tokenized %d nodes, want only the appended one", n)
	}
}

// TestIncrementalSummaryFallbacks: in a compacted session, the first usage
// on the spine (calibration would start counting the raw spine) and a node
// a summary covers but that did not exist yet both fall back.
func TestIncrementalSummaryFallbacks(t *testing.T) {
	s := measuredFixture(t, "compacted", SessionOptions{})
	s.appendLines("a9", `{"id":"a9","predecessor":"a8","role":"assistant","content":"ok","usage":{"input_tokens":500,"output_tokens":2}}`)
	if r := measureBoth(t, s.dir, SessionOptions{}, "first usage"); r.Path != PathFull || !strings.Contains(r.Fallback, "usage recorded") {
		t.Fatalf("first usage: path %s, fallback %q", r.Path, r.Fallback)
	}
	s = measuredFixture(t, "compacted", SessionOptions{})
	s.appendLines("", `{"id":"s3","predecessor":"sys","role":"user","content":"[summary]","metadata":{"compaction":true,"covers_ids":["ghost"]}}`)
	s.setMeta(func(m map[string]any) { m["active_summary_id"] = "s3" })
	if r := measureBoth(t, s.dir, SessionOptions{}, "ghost summary"); r.Path != PathFull {
		t.Fatalf("ghost summary: path %s", r.Path)
	}
	s.appendLines("ghost", `{"id":"ghost","predecessor":"a8","role":"user","content":"boo"}`)
	if r := measureBoth(t, s.dir, SessionOptions{}, "ghost appears"); r.Path != PathFull || !strings.Contains(r.Fallback, "covered by a summary") {
		t.Fatalf("ghost appears: path %s, fallback %q", r.Path, r.Fallback)
	}
}

// TestIncrementalLiveFile is the status line's loop on a real Claude Code
// transcript that grows a few records at a time: the live cache imports
// the new records, and the estimate of the cache session extends the
// stored view (equal to a cold run) instead of measuring it again.
func TestIncrementalLiveFile(t *testing.T) {
	src := sessiontest.External(t, "claude-code", "d-kimuson-claude-code-viewer", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	file := filepath.Join(t.TempDir(), "s.jsonl")
	cache := t.TempDir()
	so := SessionOptions{Estimate: Options{Model: "claude-sonnet-4-5", Window: 200000}}
	paths := map[string]int{}
	for n := len(lines) / 2; n <= len(lines); n += 4 {
		if err := os.WriteFile(file, bytes.Join(lines[:min(n, len(lines))], nil), 0o644); err != nil {
			t.Fatal(err)
		}
		e, err := live.Open(context.Background(), file, live.Options{CacheDir: cache})
		if err != nil {
			t.Fatal(err)
		}
		r := measureBoth(t, e.Session, so, fmt.Sprintf("%d lines (%s)", n, e.Update))
		e.Close() // the next Open refreshes
		paths[r.Path]++
		if r.Fallback != "" {
			paths["fallback: "+r.Fallback]++
		}
	}
	t.Logf("%v", paths)
	if paths[PathIncremental] < paths[PathFull] {
		t.Errorf("mostly not incremental: %v", paths)
	}
}

// TestIncrementalSavesCounts: the counts an incremental run makes go to the
// per-node cache, so the full run after a compaction counts nothing again.
func TestIncrementalSavesCounts(t *testing.T) {
	s := measuredFixture(t, "tools", SessionOptions{})
	s.appendLines("u9", userLine)
	s.appendLines("a9", asstLine)
	if r := Session(context.Background(), s.dir, SessionOptions{}); r.Path != PathIncremental {
		t.Fatalf("path %s (%s)", r.Path, r.Fallback)
	}
	os.Remove(CachePath(s.dir, ViewCacheFile))
	before := bpeNodes.Load()
	if r := Session(context.Background(), s.dir, SessionOptions{}); r.Path != PathFull || r.Err != nil {
		t.Fatalf("path %s: %v", r.Path, r.Err)
	}
	if n := bpeNodes.Load() - before; n != 0 {
		t.Fatalf("the full run counted %d nodes; the incremental run's counts were not cached", n)
	}
}

// TestIncrementalOddLines: repeated keys, escaped ids and a CRLF line end
// read the same through the tail as through the index (equal to cold,
// whichever path each takes).
func TestIncrementalOddLines(t *testing.T) {
	for _, l := range []string{
		`{"id":"u9","id":"u8","predecessor":"a7","role":"user","content":"x"}`,
		`{"id":"u9","predecessor":"zz","predecessor":"a7","role":"user","content":"x"}`,
		`{"id":"u9","predecessor":"a7","role":"user","role":"tool","content":"x"}`,
		`{"id":"u9","predecessor":"a7","role":"user","content":"x","metadata":{"compaction":false,"compaction":true,"covers_ids":["u1"]}}`,
		`{"id":"u9","predecessor":"a7","role":"user","content":"x","caller":"a1","caller":null}`,
		`{"id":"u\u0039","predecessor":"a\u0037","role":"user","content":"x"}`,
		`{"id":"u9","predecessor":"a7","role":"user","content":"x"}` + "\r",
	} {
		s := measuredFixture(t, "tools", SessionOptions{})
		s.appendLines("u9", l)
		measureBoth(t, s.dir, SessionOptions{}, l)
	}
}

// writeChain records the hash chain of nodes.jsonl in session.json as the
// store does (docs/FORMAT.md §1, "The hash chain"), over the file as it is.
func (s *session) writeChain() {
	path := filepath.Join(s.dir, store.NodesFile)
	data, err := os.ReadFile(path)
	if err != nil {
		s.t.Fatal(err)
	}
	h := sha256.New()
	h.Write(data)
	state, _ := h.(encoding.BinaryMarshaler).MarshalBinary()
	st, _ := os.Stat(path)
	s.setMeta(func(m map[string]any) {
		m["nodes_sha256"] = hex.EncodeToString(h.Sum(nil))
		m["nodes_hash_state"] = base64.StdEncoding.EncodeToString(state)
		m["nodes_stat"] = recordedStat(st)
	})
}

// TestIncrementalHashChain: with session.json's hash chain, an append is
// proven to extend the measured bytes, and an edit anywhere before it —
// beyond the seam's reach — or a write after the commit falls back.
func TestIncrementalHashChain(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the recorded stat vouches only where ctime is read (linux)")
	}
	fresh := func() *session {
		s := &session{t: t, dir: sessiontest.CopyFixture(t, "tools")}
		s.writeChain()
		if r := Session(context.Background(), s.dir, SessionOptions{}); r.Path != PathFull {
			t.Fatalf("first run: %+v", r)
		}
		return s
	}
	s := fresh()
	s.appendLines("u9", userLine)
	s.writeChain()
	if r := measureBoth(t, s.dir, SessionOptions{}, "chained append"); r.Path != PathIncremental {
		t.Fatalf("chained append: path %s (%s)", r.Path, r.Fallback)
	}
	s.appendLines("a9", asstLine)
	s.writeChain()
	if r := measureBoth(t, s.dir, SessionOptions{}, "second chained append"); r.Path != PathIncremental {
		t.Fatalf("second chained append: path %s (%s)", r.Path, r.Fallback)
	}

	// The first line edited (same length), then an append whose commit
	// hashes the file as it is: the seam is intact, the chain is not.
	s = fresh()
	path := filepath.Join(s.dir, store.NodesFile)
	data, _ := os.ReadFile(path)
	os.WriteFile(path, bytes.Replace(data, []byte("careful"), []byte("CAREFUL"), 1), 0o644)
	s.appendLines("u9", userLine)
	s.writeChain()
	if r := measureBoth(t, s.dir, SessionOptions{}, "early edit"); r.Path != PathFull || !strings.Contains(r.Fallback, "hash chain") {
		t.Fatalf("early edit: path %s (%s)", r.Path, r.Fallback)
	}

	// Written after the commit (the recorded stat is stale).
	s = fresh()
	s.appendLines("u9", userLine)
	s.writeChain()
	// Past the file system's timestamp granularity.
	time.Sleep(20 * time.Millisecond)
	f, _ := os.OpenFile(filepath.Join(s.dir, store.NodesFile), os.O_WRONLY, 0)
	f.WriteAt([]byte("{"), 0)
	f.Close()
	if r := Session(context.Background(), s.dir, SessionOptions{}); r.Path != PathFull || !strings.Contains(r.Fallback, "written since") {
		t.Fatalf("written after the commit: path %s (%s)", r.Path, r.Fallback)
	}
}

package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/store"
)

// hostileID is the node id of fixtures/hostile that carries markup.
const hostileID = `x"><img src=x onerror=window.__pwned='id'>`

func open(t testing.TB, name string) *dag.Graph {
	t.Helper()
	g, err := dag.Open(filepath.Join("..", "..", "fixtures", name), store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.S.Close() })
	return g
}

// testOptions never write estimate's cache (fixtures stay untouched).
func testOptions(f Format) Options {
	return Options{Format: f, Estimate: estimate.Options{Model: "gpt-4o", NoCache: true}, Session: "s"}
}

func draw(t testing.TB, g *dag.Graph, opts Options) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(context.Background(), &buf, g, opts); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// tokensOf is estimate's own count of one node, for expected figures.
func tokensOf(t testing.TB, g *dag.Graph, ids ...string) int {
	t.Helper()
	var idx []int
	for _, id := range ids {
		i, ok := g.Lookup(id)
		if !ok {
			t.Fatalf("no node %s", id)
		}
		idx = append(idx, i)
	}
	counts, err := estimate.PerNode(context.Background(), g.S, idx, estimate.Options{Model: "gpt-4o", NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for _, c := range counts {
		sum += c.Tokens
	}
	return sum
}

// skeleton keeps each line's tree art, glyph and id: the shape of the
// drawing without previews or counts.
func skeleton(out string) []string {
	var lines []string
	for _, ln := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if i := strings.Index(ln, "  "); i >= 0 {
			ln = ln[:i]
		}
		lines = append(lines, ln)
	}
	return lines
}

func TestTreeCompacted(t *testing.T) {
	g := open(t, "compacted")
	out := draw(t, g, testOptions(FormatTree))
	want := []string{
		"● sys",
		"├─● u1",
		"│ ● a1",
		"│ ● t1",
		"│ ● a2",
		"│ ● t2",
		"│ ● a3",
		"│ ● u2x",
		"│ ● a4x",
		"├─○ summary_first",
		"◆ summary_second",
		"● u4",
		"● a8",
	}
	if got := skeleton(out); !slices.Equal(got, want) {
		t.Errorf("tree:\n%s\nwant skeleton:\n%s", out, strings.Join(want, "\n"))
	}
	covered := []string{"u1", "a1", "t1", "a2", "t2", "a3", "u2", "a4", "t3", "a5", "u3", "a6", "t4", "a7"}
	capsule := "◆ summary_second  covers 14 nodes · " + report.Thousands(tokensOf(t, g, covered...)) + " → " +
		report.Thousands(tokensOf(t, g, "summary_second")) + " tokens\n"
	if !strings.Contains(out, capsule) {
		t.Errorf("no capsule line %q in\n%s", capsule, out)
	}
	if !strings.Contains(out, "● a8  assistant · "+report.Thousands(tokensOf(t, g, "a8"))+" tok · EU led with 1.2M, then US with 0.9M.  ← HEAD\n") {
		t.Errorf("HEAD line missing:\n%s", out)
	}
	if strings.Contains(out, "\x1b[") {
		t.Error("colour without a TTY")
	}
}

func TestTreeExpand(t *testing.T) {
	g := open(t, "compacted")
	opts := testOptions(FormatTree)
	opts.Expand = true
	got := skeleton(draw(t, g, opts))
	at := slices.Index(got, "◆ summary_second")
	if at < 0 {
		t.Fatalf("no capsule in %v", got)
	}
	var inside []string
	for _, ln := range got[at+1:] {
		if !strings.HasPrefix(ln, "┆ ◦ ") {
			break
		}
		inside = append(inside, strings.TrimPrefix(ln, "┆ ◦ "))
	}
	if want := []string{"u1", "a1", "t1", "a2", "t2", "a3", "u2", "a4", "t3", "a5", "u3", "a6", "t4", "a7"}; !slices.Equal(inside, want) {
		t.Errorf("expanded capsule holds %v, want %v", inside, want)
	}
	if got[len(got)-1] != "● a8" {
		t.Errorf("the kept tail must follow the capsule: %v", got)
	}
}

func TestTreeFork(t *testing.T) {
	out := draw(t, open(t, "fork"), testOptions(FormatTree))
	want := []string{"● sys", "● u1", "├─● a1", "│ ● u2", "│ ● a2", "● a1b", "● u2b", "● a2b"}
	if got := skeleton(out); !slices.Equal(got, want) {
		t.Errorf("tree:\n%s", out)
	}
	if strings.Contains(out, "◆") {
		t.Error("a session without summary has no capsule")
	}
}

func TestTreeColourOnTTY(t *testing.T) {
	ios, _, _, _ := report.Test()
	ios.StdoutTTY = true
	opts := testOptions(FormatTree)
	opts.Palette = report.NewPalette(ios)
	out := draw(t, open(t, "compacted"), opts)
	if !strings.Contains(out, "\x1b[35m") || !strings.Contains(out, "\x1b[32m") {
		t.Errorf("expected capsule and HEAD colours on a TTY:\n%q", out)
	}
}

func TestTreeAround(t *testing.T) {
	g := open(t, "compacted")
	opts := testOptions(FormatTree)
	opts.Around, opts.Depth = "u2x", 1
	got := skeleton(draw(t, g, opts))
	if want := []string{"⋮", "● a3", "● u2x", "● a4x"}; !slices.Equal(got, want) {
		t.Errorf("around u2x depth 1: %q, want %q", got, want)
	}
	// A node folded into the capsule: the capsule opens to show it.
	opts.Around, opts.Depth = "a5", 1
	got = skeleton(draw(t, g, opts))
	if want := []string{"⋮", "◦ t3", "◦ a5", "◦ u3"}; !slices.Equal(got, want) {
		t.Errorf("around a5 depth 1: %q, want %q", got, want)
	}
	for _, tc := range []struct {
		around string
		depth  int
		msg    string
	}{
		{"nope", 1, `--around "nope": no such node`},
		{"a8", -1, `--around "a8": --depth must be at least 0, got -1`},
	} {
		opts.Around, opts.Depth = tc.around, tc.depth
		var buf bytes.Buffer
		err := Write(context.Background(), &buf, g, opts)
		var ae *AroundError
		if !errors.As(err, &ae) || !strings.HasSuffix(err.Error(), tc.msg) || buf.Len() != 0 {
			t.Errorf("--around %s --depth %d: %v (%T), wrote %d bytes; want a usage *AroundError ending %q",
				tc.around, tc.depth, err, err, buf.Len(), tc.msg)
		}
	}
}

// Terminal escapes and bidi controls in content never reach the terminal.
func TestTreeSanitizesContent(t *testing.T) {
	opts := testOptions(FormatTree)
	opts.Width = 400
	out := draw(t, open(t, "hostile"), opts)
	for _, bad := range []string{"\x1b", "\x07", "\u202e"} {
		if strings.Contains(out, bad) {
			t.Errorf("tree output contains %q:\n%q", bad, out)
		}
	}
	if !strings.Contains(out, "[31mRED") {
		t.Errorf("the escape's printable rest should remain visible:\n%s", out)
	}
}

func TestJSONRows(t *testing.T) {
	g := open(t, "compacted")
	var doc struct {
		SchemaVersion   int    `json:"schema_version"`
		Head            string `json:"head"`
		ActiveSummaryID string `json:"active_summary_id"`
		Nodes           []map[string]any
	}
	out := draw(t, g, testOptions(FormatJSON))
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.SchemaVersion != 2 || doc.Head != "a8" || doc.ActiveSummaryID != "summary_second" || len(doc.Nodes) != g.Len() {
		t.Fatalf("doc: %+v", doc)
	}
	withCovers := 0
	for _, r := range doc.Nodes {
		id := r["id"].(string)
		i, _ := g.Lookup(id)
		if int(r["tokens"].(float64)) != tokensOf(t, g, id) {
			t.Errorf("%s: tokens %v", id, r["tokens"])
		}
		if _, ok := r["covers_ids"]; ok {
			withCovers++
		}
		// substitution and the graph agree (docs/FORMAT.md §4): carries_summary is Substitute's answer.
		want := !g.Ref(i).Summary && g.Substitute(g.Spine(i)).Summary >= 0
		if r["carries_summary"].(bool) != want {
			t.Errorf("%s: carries_summary %v, Substitute says %v", id, r["carries_summary"], want)
		}
	}
	if withCovers != 1 {
		t.Errorf("%d rows carry covers_ids; exactly one (the active summary) must", withCovers)
	}
	row := func(id string) map[string]any {
		for _, r := range doc.Nodes {
			if r["id"] == id {
				return r
			}
		}
		t.Fatalf("no row %s", id)
		return nil
	}
	s := row("summary_second")
	var covers []string
	for _, v := range s["covers_ids"].([]any) {
		covers = append(covers, v.(string))
	}
	if want := []string{"u1", "a1", "t1", "a2", "t2", "a3", "u2", "a4", "t3", "a5", "u3", "a6", "t4", "a7"}; !slices.Equal(covers, want) {
		t.Errorf("covers_ids = %v", covers)
	}
	relic := row("summary_first")
	if relic["superseded_summary"] != true || relic["covers_ids"] != nil {
		t.Errorf("relic row: %v", relic)
	}
	if row("sys")["predecessor"] != nil || row("u1")["predecessor"] != "sys" || row("a8")["head"] != true {
		t.Error("predecessor/head fields wrong")
	}
	if row("u1")["on_head_spine"] != true || row("u1")["in_head_view"] != false || row("u4")["in_head_view"] != true {
		t.Error("on_head_spine / in_head_view wrong")
	}
}

// docs/FORMAT.md §4, one fact, two projections: when the summary applies to
// HEAD's branch, no id of covers_ids is in HEAD's view — also when a
// covered turn's callee continues the chain after the segment (append
// --caller allows it) and so is the first kept node.
func TestJSONCoversNothingHeadReads(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, store.MetaFile), []byte(`{"format_version":1,"head":"u3","active_summary_id":"summary_s"}`), 0o644)
	os.WriteFile(filepath.Join(dir, store.NodesFile), []byte(strings.Join([]string{
		`{"id":"r","predecessor":null,"role":"system","content":"sys"}`,
		`{"id":"u1","predecessor":"r","role":"user","content":"go"}`,
		`{"id":"a1","predecessor":"u1","role":"assistant","content":"done"}`,
		`{"id":"k1","predecessor":"a1","caller":"u1","role":"assistant","content":"spawned by u1, after a1"}`,
		`{"id":"u3","predecessor":"k1","role":"user","content":"more"}`,
		`{"id":"summary_s","predecessor":"r","role":"user","name":"context/summary","content":"[Previous conversation summary]\nx","metadata":{"compaction":true,"covers_ids":["u1","a1"]}}`,
	}, "\n")+"\n"), 0o644)
	for _, g := range []*dag.Graph{openDir(t, dir), open(t, "compacted")} {
		var doc struct {
			Nodes []struct {
				ID         string   `json:"id"`
				InHeadView bool     `json:"in_head_view"`
				CoversIDs  []string `json:"covers_ids"`
				Applies    *bool    `json:"applies"`
			}
		}
		if err := json.Unmarshal([]byte(draw(t, g, testOptions(FormatJSON))), &doc); err != nil {
			t.Fatal(err)
		}
		inView := map[string]bool{}
		var covers []string
		for _, r := range doc.Nodes {
			inView[r.ID] = r.InHeadView
			if r.Applies != nil && *r.Applies {
				covers = r.CoversIDs
			}
		}
		if len(covers) == 0 {
			t.Fatalf("%s: no applying summary row", g.S.Dir)
		}
		for _, id := range covers {
			if inView[id] {
				t.Errorf("%s: covers_ids names %s, which HEAD's view holds", g.S.Dir, id)
			}
		}
	}
}

// The document names the model and encoding that counted its tokens, not
// the session's recorded model (compacted records gpt-4.1).
func TestJSONModelIsTheCountingModel(t *testing.T) {
	g := open(t, "compacted")
	for _, tc := range []struct {
		est             estimate.Options
		model, encoding string
	}{
		{estimate.Options{Model: "gpt-4", NoCache: true}, "gpt-4", "cl100k_base"},
		{estimate.Options{Model: "gpt-4o", Encoding: "cl100k_base", NoCache: true}, "gpt-4o", "cl100k_base"},
		{estimate.Options{NoCache: true}, "", "o200k_base"},
	} {
		opts := testOptions(FormatJSON)
		opts.Estimate = tc.est
		var doc struct {
			Model, Encoding string
			Nodes           []struct {
				ID     string
				Tokens int
			}
		}
		if err := json.Unmarshal([]byte(draw(t, g, opts)), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Model != tc.model || doc.Encoding != tc.encoding {
			t.Errorf("%+v: model %q encoding %q, want %q %q", tc.est, doc.Model, doc.Encoding, tc.model, tc.encoding)
		}
		a8, _ := g.Lookup("a8")
		counts, err := estimate.PerNode(context.Background(), g.S, []int{a8}, tc.est)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range doc.Nodes {
			if r.ID == "a8" && r.Tokens != counts[0].Tokens {
				t.Errorf("%+v: a8 has %d tokens, the named model counts %d", tc.est, r.Tokens, counts[0].Tokens)
			}
		}
	}
}

// The wire says nothing different when HEAD moves (docs/FORMAT.md §4: no
// HEAD-dependent filtering): only the fields describing HEAD change.
func TestJSONHeadIndependent(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("..", "..", "fixtures", "compacted")
	for _, f := range []string{store.MetaFile, store.NodesFile} {
		raw, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	strip := func(out string) []string {
		var doc struct{ Nodes []map[string]any }
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		var rows []string
		for _, r := range doc.Nodes {
			delete(r, "on_head_spine")
			delete(r, "in_head_view")
			delete(r, "head")
			raw, _ := json.Marshal(r)
			rows = append(rows, string(raw))
		}
		return rows
	}
	before := strip(draw(t, open(t, "compacted"), testOptions(FormatJSON)))
	if _, err := store.Update(context.Background(), dir, store.WriteOptions{}, func(tx *store.Tx) error {
		return tx.SetHead("a4x")
	}); err != nil {
		t.Fatal(err)
	}
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	after := strip(draw(t, g, testOptions(FormatJSON)))
	if !slices.Equal(before, after) {
		t.Errorf("rows changed with HEAD:\n%v\n%v", before, after)
	}
}

// needTool finds an external checker; it is required when CI is set and
// its absence skips the test otherwise.
func needTool(t testing.TB, name, install string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is required in CI (%s)", name, install)
		}
		t.Skipf("%s not installed (%s); skipping", name, install)
	}
	return p
}

func TestDOTParses(t *testing.T) {
	dot := needTool(t, "dot", "apt-get install -y graphviz")
	for _, fx := range []string{"compacted", "hostile", "fork"} {
		for _, expand := range []bool{false, true} {
			opts := testOptions(FormatDOT)
			opts.Expand = expand
			out := draw(t, open(t, fx), opts)
			// -Tjson gives back what Graphviz understood: the capsule's
			// shape and every node's label.
			cmd := exec.Command(dot, "-Tjson")
			cmd.Stdin = strings.NewReader(out)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil || stderr.Len() > 0 {
				t.Fatalf("%s expand=%v: dot rejected it: %v %s\n%s", fx, expand, err, stderr.String(), out)
			}
			var parsed struct {
				Objects []struct {
					Name, Label, Shape, Class string
				}
			}
			if err := json.Unmarshal(stdout.Bytes(), &parsed); err != nil {
				t.Fatal(err)
			}
			capsules, labels := 0, map[string]bool{}
			for _, o := range parsed.Objects {
				if o.Shape == "doubleoctagon" {
					capsules++
				}
				labels[strings.SplitN(o.Label, `\n`, 2)[0]] = true
			}
			wantCapsules := 1
			if fx == "fork" {
				wantCapsules = 0
			}
			if capsules != wantCapsules {
				t.Errorf("%s: %d capsules, want %d", fx, capsules, wantCapsules)
			}
			if fx == "hostile" && expand && !labels[hostileID] {
				t.Errorf("hostile id not kept verbatim as a label: %v", labels)
			}
		}
	}
}

func TestMermaidParses(t *testing.T) {
	node := needTool(t, "node", "apt-get install -y nodejs")
	dir := os.Getenv("CTXFOLD_MERMAID_DIR")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "ctxfold-mermaid")
	}
	install := "npm install --prefix " + dir + " mermaid@12.3.0 jsdom@26.1.0"
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "mermaid", "package.json")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the mermaid package is required in CI (%s)", install)
		}
		t.Skipf("mermaid not installed (%s); skipping", install)
	}
	tmp := t.TempDir()
	parse := func(files ...string) (string, error) {
		cmd := exec.Command(node, append([]string{filepath.Join("testdata", "mermaid-parse.mjs"), dir}, files...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// The checker itself must reject broken input, or it proves nothing.
	broken := filepath.Join(tmp, "broken.mmd")
	os.WriteFile(broken, []byte("flowchart TD\n  a[\"x\" --> ]] b\n"), 0o644)
	var files []string
	for _, fx := range []string{"compacted", "hostile", "fork"} {
		for _, expand := range []bool{false, true} {
			opts := testOptions(FormatMermaid)
			opts.Expand = expand
			text := draw(t, open(t, fx), opts)
			name := filepath.Join(tmp, fmt.Sprintf("%s-%v.mmd", fx, expand))
			if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, name)
			if got := strings.Count(text, "{{"); (fx == "fork") != (got == 0) {
				t.Errorf("%s: %d hexagon capsules", fx, got)
			}
			if strings.Contains(text, "<img") || strings.Contains(text, "<script") {
				t.Errorf("%s: markup reached the diagram source", fx)
			}
		}
	}
	out, err := parse(append(files, broken)...)
	if err == nil || !strings.Contains(out, "broken.mmd: Parse error") {
		t.Fatalf("mermaid.parse must accept every drawing and reject the broken one:\n%s", out)
	}
	for _, f := range files {
		if !strings.Contains(out, f+": {") {
			t.Errorf("%s was not accepted:\n%s", f, out)
		}
	}
}

func ExampleWrite() {
	g, err := dag.Open("../../fixtures/fork", store.OpenOptions{})
	if err != nil {
		panic(err)
	}
	defer g.S.Close()
	opts := Options{Format: FormatDOT, Estimate: estimate.Options{Model: "gpt-4o", NoCache: true}}
	var buf bytes.Buffer
	if err := Write(context.Background(), &buf, g, opts); err != nil {
		panic(err)
	}
	fmt.Println(strings.Count(buf.String(), " -> "), "edges")
	// Output: 7 edges
}

// BenchmarkTree measures the streamed terminal tree of a 10,000-node
// session, counts cached by estimate after the first run as in real use.
func BenchmarkTree(b *testing.B) {
	g := openDir(b, bigSession(b, 10_000))
	opts := testOptions(FormatTree)
	opts.Estimate.NoCache = false
	if err := Write(context.Background(), io.Discard, g, opts); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := Write(context.Background(), io.Discard, g, opts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHTMLWrite measures generating the 10,000-node page.
func BenchmarkHTMLWrite(b *testing.B) {
	g := openDir(b, bigSession(b, 10_000))
	opts := testOptions(FormatHTML)
	opts.Estimate.NoCache = false
	if err := Write(context.Background(), io.Discard, g, opts); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := Write(context.Background(), io.Discard, g, opts); err != nil {
			b.Fatal(err)
		}
	}
}

// Spawned subtrees hang under their caller and fold with a covered caller.
func TestTreeCallerSubtrees(t *testing.T) {
	dir := t.TempDir()
	meta := `{"format_version":1,"head":"u2","active_summary_id":"summary_s"}`
	nodes := []string{
		`{"id":"r","predecessor":null,"role":"system","content":"sys"}`,
		`{"id":"u1","predecessor":"r","role":"user","content":"go"}`,
		`{"id":"a1","predecessor":"u1","role":"assistant","content":"spawning"}`,
		`{"id":"k1","predecessor":null,"caller":"a1","role":"user","content":"sub task"}`,
		`{"id":"k2","predecessor":"k1","role":"assistant","content":"sub answer"}`,
		`{"id":"k3","predecessor":null,"caller":"k2","role":"user","content":"sub sub task"}`,
		`{"id":"a2","predecessor":"a1","role":"assistant","content":"done"}`,
		`{"id":"u2","predecessor":"a2","role":"user","content":"next"}`,
		`{"id":"z1","predecessor":null,"caller":"u2","role":"user","content":"kept spawn"}`,
		`{"id":"summary_s","predecessor":"r","role":"user","name":"context/summary","content":"[Previous conversation summary]\nx","metadata":{"compaction":true,"covers_ids":["u1","a1","a2"]}}`,
	}
	os.WriteFile(filepath.Join(dir, store.MetaFile), []byte(meta), 0o644)
	os.WriteFile(filepath.Join(dir, store.NodesFile), []byte(strings.Join(nodes, "\n")+"\n"), 0o644)
	g := openDir(t, dir)
	opts := testOptions(FormatTree)
	got := skeleton(draw(t, g, opts))
	if want := []string{"● r", "◆ summary_s", "● u2", "└─● z1"}; !slices.Equal(got, want) {
		t.Errorf("folded:\n%s", strings.Join(got, "\n"))
	}
	out := draw(t, g, opts)
	if !strings.Contains(out, "◆ summary_s  covers 6 nodes · ") || !strings.Contains(out, "└─● z1  user · spawned by u2 · ") {
		t.Errorf("tree:\n%s", out)
	}
	opts.Expand = true
	got = skeleton(draw(t, g, opts))
	want := []string{"● r", "◆ summary_s", "┆ ◦ u1", "┆ ◦ a1", "┆ ├─◦ k1", "┆ │ ◦ k2", "┆ │ └─◦ k3", "┆ ◦ a2", "● u2", "└─● z1"}
	if !slices.Equal(got, want) {
		t.Errorf("expanded:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A summary whose covered segment is gone (a hand-edited session) applies
// to no branch: no capsule, everything raw, and the wire lists only the
// ids that still exist.
func TestSummaryApplyingNowhere(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, store.MetaFile), []byte(`{"format_version":1,"head":"a2","active_summary_id":"summary_s"}`), 0o644)
	os.WriteFile(filepath.Join(dir, store.NodesFile), []byte(strings.Join([]string{
		`{"id":"r","predecessor":null,"role":"system","content":"sys"}`,
		`{"id":"u1","predecessor":"r","role":"user","content":"go"}`,
		`{"id":"a2","predecessor":"u1","role":"assistant","content":"done"}`,
		`{"id":"summary_s","predecessor":"r","role":"user","name":"context/summary","content":"[Previous conversation summary]\nx","metadata":{"compaction":true,"covers_ids":["u1","gone"]}}`,
	}, "\n")+"\n"), 0o644)
	g := openDir(t, dir)
	got := skeleton(draw(t, g, testOptions(FormatTree)))
	if want := []string{"● r", "├─◇ summary_s", "● u1", "● a2"}; !slices.Equal(got, want) {
		t.Errorf("tree: %q, want %q", got, want)
	}
	out := draw(t, g, testOptions(FormatJSON))
	if !strings.Contains(out, `"applies":false,"carries_summary":false,"covers_ids":["u1"],"id":"summary_s"`) {
		t.Errorf("json: %s", out)
	}
}

package render_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/store"
)

// Recall over a compacted session: turns folded into the active summary
// are still found, marked covered.
func ExampleSearch() {
	g, err := dag.Open("../fixtures/compacted", store.OpenOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.S.Close()
	view, _ := render.Build(g, "", false)
	_ = render.Search(context.Background(), view, render.SearchOptions{Query: "never drop"}, func(h render.Hit) error {
		fmt.Println(h.ID, h.Status, h.CoveredBy, h.Tips)
		return nil
	})
	// Output:
	// u1 covered summary_second [a8 a4x]
	// summary_first relic  []
	// summary_second visible  []
}

type hitRow struct {
	ID, Status, CoveredBy string
	Tips, Summaries       []string
	OnHead                bool
}

func search(t *testing.T, dir, head string, opts render.SearchOptions) []hitRow {
	t.Helper()
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	view, err := render.Build(g, head, false)
	if err != nil {
		t.Fatal(err)
	}
	var rows []hitRow
	err = render.Search(context.Background(), view, opts, func(h render.Hit) error {
		rows = append(rows, hitRow{h.ID, h.Status, h.CoveredBy, h.Tips, h.Summaries, h.OnHead})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestSearchClassifiesEveryKindOfNode(t *testing.T) {
	// "COPY" appears in a covered turn on both branches (a2), covered
	// turns only on HEAD's branch (u2 "copy", a4, t3), a visible summary,
	// a relic (no), and the off-branch fork (u2x "copy").
	got := search(t, "../fixtures/compacted", "", render.SearchOptions{Query: "copy"})
	want := []hitRow{
		{"a2", render.HitCovered, "summary_second", []string{"a8", "a4x"}, []string{"summary_first", "summary_second"}, true},
		{"u2", render.HitCovered, "summary_second", []string{"a8"}, []string{"summary_second"}, true},
		{"a4", render.HitCovered, "summary_second", []string{"a8"}, []string{"summary_second"}, true},
		{"t3", render.HitCovered, "summary_second", []string{"a8"}, []string{"summary_second"}, true},
		{"summary_second", render.HitVisible, "", nil, nil, false},
		{"u2x", render.HitOffBranch, "", []string{"a4x"}, nil, false},
		{"a4x", render.HitOffBranch, "", []string{"a4x"}, nil, false},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("hits:\n got %+v\nwant %+v", got, want)
	}
}

func TestSearchFromAForkSeesTheCoveredTurnsRaw(t *testing.T) {
	// docs/FORMAT.md §4: the fork a4x lacks covered ids, so its view is raw: u1 is
	// visible from there, and the summaries are not read.
	got := search(t, "../fixtures/compacted", "a4x", render.SearchOptions{Query: "drop existing"})
	want := []hitRow{
		{"u1", render.HitVisible, "", []string{"a8", "a4x"}, []string{"summary_first", "summary_second"}, true},
		{"summary_first", render.HitRelic, "", nil, nil, false},
		{"summary_second", render.HitOffBranch, "", nil, nil, false},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("hits:\n got %+v\nwant %+v", got, want)
	}
}

func TestSearchRegexpAndErrors(t *testing.T) {
	got := search(t, "../fixtures/compacted", "", render.SearchOptions{Query: `COPY [0-9]+`, Regexp: true})
	if len(got) != 1 || got[0].ID != "t3" {
		t.Fatalf("hits = %+v, want only t3", got)
	}
	// Case-sensitive unless asked.
	if got := search(t, "../fixtures/compacted", "", render.SearchOptions{Query: `copy [0-9]+`, Regexp: true}); len(got) != 0 {
		t.Fatalf("hits = %+v, want none", got)
	}
	g, err := dag.Open("../fixtures/compacted", store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	view, _ := render.Build(g, "", false)
	for _, opts := range []render.SearchOptions{{Query: "(", Regexp: true}, {Query: ""}} {
		err := render.Search(context.Background(), view, opts, func(render.Hit) error { return nil })
		var qe *render.QueryError
		if !errors.As(err, &qe) {
			t.Errorf("%+v: err = %v, want a *QueryError", opts, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := render.Search(ctx, view, render.SearchOptions{Query: "x"}, func(render.Hit) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled search: err = %v", err)
	}
}

// The raw-line pre-filter must never hide a match: escaped JSON, HTML
// characters, non-ASCII case folding and blocks all still match.
func TestSearchMatchesThroughJSONEscapes(t *testing.T) {
	dir := t.TempDir()
	lines := []string{
		`{"id":"n1","predecessor":null,"role":"user","content":"\u0041lpha and \"quoted\" text"}`,
		`{"id":"n2","predecessor":"n1","role":"assistant","content":[{"type":"thinking","text":"use \u003cb\u003e here"},{"type":"text","text":"ÜBER straße"}]}`,
		`{"id":"n3","predecessor":"n2","role":"assistant","content":"calling","tool_calls":[{"id":"c1","name":"grep","arguments":"{\"pattern\":\"needle\"}"}]}`,
		`{"id":"n4","predecessor":"n3","role":"tool","tool_call_id":"c1","content":[{"type":"tool_result","tool_call_id":"c1","text":"found\nthe NEEDLE"}]}`,
		// Raw UTF-8 runes that case-fold to ASCII letters: the Kelvin sign and the long s.
		`{"id":"n5","predecessor":"n4","role":"user","content":"at 5 ` + "\u212a" + `elvin, ` + "\u017f" + `ome said"}`,
		// Some encoders escape the slash.
		`{"id":"n6","predecessor":"n5","role":"user","content":"see docs\/FORMAT.md"}`,
	}
	if err := os.WriteFile(filepath.Join(dir, "nodes.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "session.json"), []byte(`{"format_version":1,"head":"n6"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ query, ids, field string }{
		{"alpha", "n1", "content"},
		{`"quoted"`, "n1", "content"},
		{"<b>", "n2", "thinking"},
		{"über", "n2", "content"},
		{"needle", "n3 n4", "tool_call"},
		{"5 kelvin", "n5", "content"},
		{"some said", "n5", "content"},
		{"docs/format", "n6", "content"},
		// Spans the space joining a tool call's name and arguments.
		{`grep {`, "n3", "tool_call"},
		{`GREP   {`, "", ""},
	} {
		g, err := dag.Open(dir, store.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		view, _ := render.Build(g, "", false)
		var ids []string
		var field string
		_ = render.Search(context.Background(), view, render.SearchOptions{Query: tc.query}, func(h render.Hit) error {
			ids = append(ids, h.ID)
			if field == "" {
				field = h.Field
			}
			if h.Status != render.HitVisible {
				t.Errorf("%q: %s is %s, want visible", tc.query, h.ID, h.Status)
			}
			return nil
		})
		g.S.Close()
		if strings.Join(ids, " ") != tc.ids || field != tc.field {
			t.Errorf("%q: hits %v in %q, want %s in %q", tc.query, ids, field, tc.ids, tc.field)
		}
	}
}

func TestSearchSnippetIsOneLineWithEllipses(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("a", 100) + " target\n\nline " + strings.Repeat("b", 100)
	line := fmt.Sprintf(`{"id":"n1","predecessor":null,"role":"user","content":%q}`, long)
	os.WriteFile(filepath.Join(dir, "nodes.jsonl"), []byte(line+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "session.json"), []byte(`{"format_version":1,"head":"n1"}`), 0o644)
	g, err := dag.Open(dir, store.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.S.Close()
	view, _ := render.Build(g, "", false)
	var snippet string
	render.Search(context.Background(), view, render.SearchOptions{Query: "TARGET", SnippetRunes: 8}, func(h render.Hit) error {
		snippet = h.Snippet
		return nil
	})
	if want := "…aaaaaaa target line b…"; snippet != want {
		t.Fatalf("snippet = %q, want %q", snippet, want)
	}
}

// benchSession writes a linear session of n nodes of about 200 bytes of
// prose each, with the word "needle" in every 1000th.
func benchSession(b *testing.B, n int) (dir string, bytes int64) {
	b.Helper()
	dir = b.TempDir()
	f, err := os.Create(filepath.Join(dir, "nodes.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	pred := "null"
	for i := 0; i < n; i++ {
		text := fmt.Sprintf("turn %d: the migration script reads the staging table, checks row counts and writes a report for the on-call engineer; nothing unusual here", i)
		if i%1000 == 999 {
			text += " needle"
		}
		role := []string{"user", "assistant"}[i%2]
		line := fmt.Sprintf(`{"id":"n%d","predecessor":%s,"role":"%s","content":%q}`+"\n", i, pred, role, text)
		pred = fmt.Sprintf(`"n%d"`, i)
		m, _ := f.WriteString(line)
		bytes += int64(m)
	}
	f.Close()
	os.WriteFile(filepath.Join(dir, "session.json"), []byte(fmt.Sprintf(`{"format_version":1,"head":"n%d"}`, n-1)), 0o644)
	return dir, bytes
}

// BenchmarkSearch: go test ./render -run '^$' -bench Search -benchtime 5x
func BenchmarkSearch(b *testing.B) {
	for _, tc := range []struct {
		name string
		opts render.SearchOptions
	}{
		{"substring", render.SearchOptions{Query: "needle"}},
		{"regexp", render.SearchOptions{Query: `need[l]e`, Regexp: true}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			dir, size := benchSession(b, 100_000)
			g, err := dag.Open(dir, store.OpenOptions{})
			if err != nil {
				b.Fatal(err)
			}
			defer g.S.Close()
			view, _ := render.Build(g, "", false)
			b.SetBytes(size)
			b.ResetTimer()
			for range b.N {
				hits := 0
				render.Search(context.Background(), view, tc.opts, func(render.Hit) error { hits++; return nil })
				if hits != 100 {
					b.Fatalf("hits = %d, want 100", hits)
				}
			}
		})
	}
}

// Hits across batch boundaries (by line count and by bytes) come back
// complete, in file order, with the right ids.
func TestSearchAcrossBatches(t *testing.T) {
	dir := t.TempDir()
	var sb strings.Builder
	pred := "null"
	var want []string
	big := strings.Repeat("x", 3<<20) // three of these exceed a batch's bytes
	for i := 0; i < 10_000; i++ {
		text := fmt.Sprintf("line %d", i)
		if i%997 == 0 || i == 4095 || i == 4096 {
			text += " Needle"
			want = append(want, fmt.Sprintf("n%d", i))
		}
		if i >= 5000 && i < 5004 {
			text += " " + big
		}
		fmt.Fprintf(&sb, `{"id":"n%d","predecessor":%s,"role":"user","content":%q}`+"\n", i, pred, text)
		pred = fmt.Sprintf(`"n%d"`, i)
	}
	os.WriteFile(filepath.Join(dir, "nodes.jsonl"), []byte(sb.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "session.json"), []byte(`{"format_version":1,"head":"n9999"}`), 0o644)
	for _, opts := range []render.SearchOptions{{Query: "needle"}, {Query: `Need+le`, Regexp: true}} {
		var got []string
		scanned := 0
		opts.Progress = func(n int) { scanned += n }
		g, err := dag.Open(dir, store.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		view, _ := render.Build(g, "", false)
		err = render.Search(context.Background(), view, opts, func(h render.Hit) error {
			got = append(got, h.ID)
			return nil
		})
		g.S.Close()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%+v: hits %v, want %v", opts.Query, got, want)
		}
		if scanned != 10_000 {
			t.Errorf("progress counted %d nodes, want 10000", scanned)
		}
	}
}

package verify_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/verify"
)

// spanSession is fixtures/broken/covers_missing's conversation with one
// summary whose metadata is meta (format version 2, docs/FORMAT.md §4).
func spanSession(t *testing.T, meta string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "s")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	nodes := strings.Join([]string{
		`{"id":"sys","predecessor":null,"role":"system","content":"You are a build assistant."}`,
		`{"id":"u1","predecessor":"sys","role":"user","content":"Run the tests."}`,
		`{"id":"a1","predecessor":"u1","role":"assistant","content":"Running them.","tool_calls":[{"id":"c1","name":"bash","arguments":{"cmd":"go test ./..."}}]}`,
		`{"id":"t1","predecessor":"a1","role":"tool","tool_call_id":"c1","content":"ok  example.com/app 0.01s"}`,
		`{"id":"a2","predecessor":"t1","role":"assistant","content":"All tests pass."}`,
		`{"id":"u2","predecessor":"a2","role":"user","content":"Now build the binary."}`,
		`{"id":"a3","predecessor":"u2","role":"assistant","content":"Built ./app."}`,
		`{"id":"u3","predecessor":"a3","role":"user","content":"Thanks."}`,
		`{"id":"a4","predecessor":"u3","role":"assistant","content":"You are welcome."}`,
		`{"id":"summary_1","predecessor":"sys","role":"user","name":"context/summary","content":"[Previous conversation summary]\nThe user asked to run the tests; they pass.","metadata":{"compaction":true,` + meta + `}}`,
	}, "\n") + "\n"
	meta2 := `{"format_version":2,"head":"a4","active_summary_id":"summary_1","active_summary_text":"The user asked to run the tests; they pass."}`
	for name, data := range map[string]string{"nodes.jsonl": nodes, "session.json": meta2} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// verify resolves a covers_span as it resolved a covers_ids list: a sound
// span substitutes and is clean, each fault has its code.
func TestSpanCoverage(t *testing.T) {
	for _, tc := range []struct {
		name, meta string
		want       []string
		// list is the same coverage as format version 1 wrote it: it must
		// give the same findings.
		list string
	}{
		{"sound", `"covers_span":{"first":"u1","last":"a2","count":4}`, []string{}, `"covers_ids":["u1","a1","t1","a2"]`},
		{"last missing", `"covers_span":{"first":"u1","last":"ghost","count":4}`, []string{"covers_missing"}, `"covers_ids":["u1","a1","t1","ghost"]`},
		{"first missing", `"covers_span":{"first":"ghost","last":"a2","count":4}`, []string{"covers_missing"}, `"covers_ids":["ghost","a1","t1","a2"]`},
		{"count short", `"covers_span":{"first":"u1","last":"a2","count":3}`, []string{"covers_not_contiguous"}, ""},
		{"count past the root", `"covers_span":{"first":"u1","last":"a2","count":9}`, []string{"covers_not_contiguous"}, ""},
		{"malformed", `"covers_span":{"first":"u1","last":"a2"}`, []string{"covers_empty"}, `"covers_ids":[]`},
		{"both forms", `"covers_span":{"first":"u1","last":"a2","count":4},"covers_ids":["u1","a1","t1","a2"]`, []string{"covers_not_contiguous"}, ""},
		{"splice", `"covers_span":{"first":"a1","last":"a2","count":3}`, []string{"render_not_substituted", "splice_mismatch"}, `"covers_ids":["a1","t1","a2"]`},
		{"splits a call", `"covers_span":{"first":"u1","last":"a1","count":2}`, []string{"covers_splits_tool_call", "tool_result_orphaned"}, `"covers_ids":["u1","a1"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, got := check(t, spanSession(t, tc.meta), verify.Options{})
			if !slices.Equal(codes(got), tc.want) {
				t.Fatalf("codes = %v, want %v\n%s", codes(got), tc.want, dump(got))
			}
			if res.Summaries != 1 {
				t.Fatalf("%d summaries", res.Summaries)
			}
			if tc.list != "" {
				_, old := check(t, spanSession(t, tc.list), verify.Options{})
				if !slices.Equal(codes(old), codes(got)) {
					t.Fatalf("the list gives %v, the span %v", codes(old), codes(got))
				}
			}
		})
	}
}

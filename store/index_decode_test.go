package store

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxfold/ctxfold/transcript"
)

// indexRefAgrees fails when the fast path takes a line the full decode
// refuses or reads differently.
func indexRefAgrees(t *testing.T, line []byte) (taken bool) {
	t.Helper()
	if !utf8.Valid(line) || len(bytes.TrimSpace(line)) == 0 {
		return false
	}
	fast, ok := indexRef(line)
	if !ok {
		return false
	}
	var n transcript.Node
	if err := n.UnmarshalJSON(line); err != nil || n.ID == "" {
		t.Fatalf("fast path took a line the full decode refuses (%v):\n%s", err, line)
	}
	if full := refOf(&n); !reflect.DeepEqual(fast, full) {
		t.Fatalf("fast path and full decode differ on\n%s\nfast %+v\nfull %+v", line, fast, full)
	}
	return true
}

// Every line of the shipped fixtures is read by the fast path, as the full
// decode reads it; the lines it leaves (hand-made oddities) are few.
func TestIndexRefOnFixtures(t *testing.T) {
	files, _ := filepath.Glob("../fixtures/*/nodes.jsonl")
	more, _ := filepath.Glob("../fixtures/*/*/nodes.jsonl")
	files = append(files, more...)
	if len(files) < 5 {
		t.Fatalf("only %d fixture files found", len(files))
	}
	taken, total := 0, 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<26)
		for sc.Scan() {
			total++
			if indexRefAgrees(t, sc.Bytes()) {
				taken++
			}
		}
	}
	if taken*10 < total*9 {
		t.Errorf("fast path took %d of %d fixture lines; want ≥ 90%%", taken, total)
	}
}

// Lines built to hit each rule the fast path must leave to the full
// decode, or read exactly as it does.
func TestIndexRefEdgeCases(t *testing.T) {
	taken := []string{
		`{"id":"a","predecessor":null,"role":"user","content":"hi\nthere"}`,
		`{"id":"a","predecessor":"p","role":"tool","tool_call_id":"c1","content":"out"}`,
		`{"id":"a","role":"assistant","content":[{"type":"text","text":"x\"y"},{"type":"tool_call","id":"c1","name":"f","arguments":{"q":1}},{"type":"tool_result","text":"r"}],"tool_calls":[{"id":"c0","name":"g"}]}`,
		`{"id":"s","role":"user","content":"sum","metadata":{"compaction":true,"covers_ids":["a","b"]}}`,
		`{"id":"s","role":"user","content":"sum","metadata":{"compaction":true,"covers_ids":"not a list"}}`,
		`{"id":"s","role":"user","content":"sum","metadata":{"compaction":false,"covers_ids":[1]}}`,
		`{"id":"s","role":"user","content":"sum","metadata":{"compaction":true,"covers_span":{"first":"a","last":"b","count":2}}}`,
		`{"id":"s","role":"user","content":"sum","metadata":{"compaction":true,"covers_span":{"first":"a","last":"b","count":0}}}`,
		`{"id":"s","role":"user","content":"sum","metadata":{"compaction":true,"covers_span":{"first":"a","last":"b"}}}`,
		`{"id":"s","role":"user","content":"sum","metadata":{"compaction":true,"covers_span":["a","b",2]}}`,
		`{"id":"s","role":"user","content":"sum","metadata":{"compaction":true,"covers_span":{"first":"a\u0041","last":"b","count":2.0}}}`,
		`{"id":"s","role":"user","content":"sum","metadata":{"compaction":true,"covers_ids":["a"],"covers_span":{"first":"a","last":"a","count":1}}}`,
		`{"id":"a","role":"user","content":[],"tool_calls":[],"usage":{"input_tokens":12,"output_tokens":null}}`,
		`{"id":"a","role":"user","content":[{"type":"image","source":"x.png"}],"extra":{"k":[1,2]}}`,
		`{"id":"a","role":"tool","content":"","tool_call_id":null}`,
		`{"id":"a","role":"user","content":null,"name":"bob","caller":"c","created_at":"2026\u002d01"}`,
	}
	left := []string{
		`{"id":"","role":"user"}`,
		`{"role":"user"}`,
		`{"id":"a","role":"developer"}`,
		`{"id":"a","id":"b","role":"user"}`,
		`{"\u0069d":"a","role":"user"}`,
		`{"id":"a\u0041","role":"user"}`,
		`{"id":"a","predecessor":"","role":"user"}`,
		`{"id":"a","role":"user","content":5}`,
		`{"id":"a","role":"user","content":[{"text":"no type"}]}`,
		`{"id":"a","role":"user","content":[{"type":"text","is_error":1}]}`,
		`{"id":"a","role":"user","content":[7]}`,
		`{"id":"a","role":"user","tool_calls":{"id":"c"}}`,
		`{"id":"a","role":"user","tool_calls":[{"id":5}]}`,
		`{"id":"a","role":"user","usage":{"input_tokens":1.5}}`,
		`{"id":"a","role":"user","usage":[]}`,
		`{"id":"a","role":"user","metadata":[]}`,
		`{"id":"a","role":"user","metadata":{"compaction":true,"covers_ids":["x",null]}}`,
		`{"id":"a","role":"user","metadata":{"compaction":true,"covers_span":{},"covers_span":{}}}`,
		`{"id":"a","role":"user"} trailing`,
		`["id","a"]`,
		`null`,
	}
	for _, l := range taken {
		if !indexRefAgrees(t, []byte(l)) {
			t.Errorf("fast path left a plain line: %s", l)
		}
	}
	for _, l := range left {
		if _, ok := indexRef([]byte(l)); ok {
			t.Errorf("fast path took a line it must leave to the full decode: %s", l)
		}
	}
}

func FuzzIndexRef(f *testing.F) {
	for _, s := range fuzzSeedLines() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		indexRefAgrees(t, line)
	})
}

func fuzzSeedLines() []string {
	var out []string
	files, _ := filepath.Glob("../fixtures/*/nodes.jsonl")
	for _, f := range files {
		data, _ := os.ReadFile(f)
		for _, l := range strings.Split(string(data), "\n") {
			if l != "" && len(out) < 200 {
				out = append(out, l)
			}
		}
	}
	return out
}

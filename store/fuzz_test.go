package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// Seeds shared by the fuzz targets; more live in testdata/fuzz/.
var fuzzSeeds = []string{
	"",
	`{"id":"u1","predecessor":null,"role":"user","content":"hi"}` + "\n",
	`{"id":"u1","predecessor":null,"role":"user","content":"hi"}` + "\n" +
		`{"id":"a1","predecessor":"u1","role":"assistant","content":[{"type":"text","text":"x"},{"type":"tool_call","id":"c1","name":"f","arguments":{}}]}` + "\n" +
		`{"id":"t1","predecessor":"a1","role":"tool","tool_call_id":"c1","content":"r","metadata":{"is_error":true}}` + "\n",
	`{"id":"u1","predecessor":null,"role":"user","content":"a"}` + "\n" +
		`{"id":"a1","predecessor":"u1","role":"assistant","content":"b"}` + "\n" +
		`{"id":"summary_1","predecessor":null,"role":"user","name":"context/summary","content":"[Previous conversation summary]\ns","metadata":{"compaction":true,"covers_ids":["u1"]}}` + "\n",
	`{"id":"a","predecessor":"b","role":"user"}` + "\n" + `{"id":"b","predecessor":"a","role":"user"}` + "\n",
	`{"id":"u1","role":"user"}` + "\n" + `{"id":"u1","role":"user"}` + "\n",
	`{"id":"u1","role":"user"}` + "\n" + `{"id":"u2","role":"us`,
	"{\"id\":\"u1\",\"role\":\"user\",\"content\":\"\xff\"}\n",
	"\n\n",
	`{"id":"u1","role":"user"}` + "\r\n",
	`[]` + "\n",
	`{"id":"u1","role":"user","content":"no final newline"}`,
}

// FuzzOpen feeds arbitrary bytes to the session reader as nodes.jsonl
// (with and without a recorded committed length). Open never panics; it
// fails with a one-line *ParseError or returns an index whose every line
// decodes again, whose graph builds, and whose views render in every
// format.
func FuzzOpen(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	// One directory per fuzzing process, rewritten by every input: a fresh
	// temp dir per input would make file-system churn the bottleneck.
	dir := f.TempDir()
	// tmpfs when there is one: the disk, not the reader, would be measured.
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "ctxfold-fuzz-"); err == nil {
			dir = d
			f.Cleanup(func() { os.RemoveAll(d) })
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, committed bool) {
		meta := map[string]any{"format_version": 1, "head": ""}
		if committed {
			meta["nodes_bytes"] = len(data)
		}
		// Point HEAD at the first id-looking value so graphs get rendered.
		var first struct {
			ID string `json:"id"`
		}
		if line, _, _ := bytes.Cut(data, []byte("\n")); json.Unmarshal(line, &first) == nil {
			meta["head"] = first.ID
		}
		raw, _ := json.Marshal(meta)
		if err := os.WriteFile(filepath.Join(dir, store.MetaFile), raw, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, store.NodesFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := store.Open(dir, store.OpenOptions{MaxLineBytes: 1 << 16})
		if err != nil {
			var pe *transcript.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			if msg := err.Error(); msg == "" || strings.ContainsAny(msg, "\n") {
				t.Fatalf("error is not one line: %q", msg)
			}
			return
		}
		defer s.Close()
		defer appendAfter(t, dir, s)
		for i := range s.Len() {
			n, err := s.Node(i)
			if err != nil {
				t.Fatalf("indexed line %d does not decode: %v", s.Ref(i).Line, err)
			}
			if n.ID != s.ID(i) {
				t.Fatalf("line %d: id %q, index says %q", s.Ref(i).Line, n.ID, s.ID(i))
			}
			// Encoding is a fixed point after one round.
			enc, err := json.Marshal(n)
			if err != nil {
				t.Fatalf("line %d: encode: %v", s.Ref(i).Line, err)
			}
			var again transcript.Node
			if err := json.Unmarshal(enc, &again); err != nil {
				t.Fatalf("line %d: re-decode %s: %v", s.Ref(i).Line, enc, err)
			}
			if enc2, _ := json.Marshal(again); !bytes.Equal(enc, enc2) {
				t.Fatalf("line %d: encoding not stable:\n%s\n%s", s.Ref(i).Line, enc, enc2)
			}
		}
		g, errs := dag.New(s)
		for _, e := range errs {
			if strings.ContainsAny(e.Error(), "\n") {
				t.Fatalf("integrity error is not one line: %q", e.Error())
			}
		}
		if len(errs) > 0 {
			return
		}
		for _, tip := range g.Tips() {
			for _, raw := range []bool{false, true} {
				v, err := render.Build(g, g.ID(tip), raw)
				if err != nil {
					t.Fatal(err)
				}
				for _, format := range render.Formats {
					if err := render.Write(io.Discard, v, format); err != nil {
						t.Fatalf("render %s from %s: %v", format, g.ID(tip), err)
					}
				}
			}
		}
	})
}

// appendAfter: whatever session reads, the next append works (recovering
// any torn or uncommitted tail) and the session reads again with one more
// node and every node it had.
func appendAfter(t *testing.T, dir string, before *store.Session) {
	os.RemoveAll(filepath.Join(dir, store.LostFound))
	if _, dup := before.Lookup("fuzz-new"); dup {
		return
	}
	// A HEAD or active summary outside the committed nodes, with bytes
	// after them, means session.json is wrong, not the tail: the write is
	// refused and every file stays as it was (docs/FORMAT.md §1).
	_, headOK := before.Lookup(before.Meta.Head)
	_, activeOK := before.Lookup(before.Meta.ActiveSummaryID)
	inconsistent := before.TailBytes > 0 && (before.Meta.Head != "" && !headOK || before.Meta.ActiveSummaryID != "" && !activeOK)
	files := snapshot(t, dir)
	_, err := store.Update(context.Background(), dir, store.WriteOptions{}, func(tx *store.Tx) error {
		_, err := tx.Append([]transcript.Node{{ID: "fuzz-new", Role: transcript.RoleUser, Content: transcript.TextContent("x")}},
			store.AppendOptions{RootFirst: true, AllowBrokenGraph: true})
		return err
	})
	if inconsistent {
		var pe *transcript.ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("append to a session whose meta disagrees with its nodes: got %v, want a refusal", err)
		}
		sameSnapshot(t, files, snapshot(t, dir))
		return
	}
	if err != nil {
		t.Fatalf("append after a readable session: %v", err)
	}
	s, err := store.Open(dir, store.OpenOptions{MaxLineBytes: 1 << 16})
	if err != nil {
		t.Fatalf("session unreadable after an append: %v", err)
	}
	defer s.Close()
	if s.Len() != before.Len()+1 || len(s.Warnings) != 0 {
		t.Fatalf("after the append: %d nodes (was %d), warnings %v", s.Len(), before.Len(), s.Warnings)
	}
	for _, r := range before.All() {
		if _, ok := s.Lookup(r.ID); !ok {
			t.Fatalf("node %q lost by the append", r.ID)
		}
	}
	if n, err := s.NodeByID("fuzz-new"); err != nil || n.Content.Text != "x" {
		t.Fatalf("the new node: %+v %v", n, err)
	}
}

// FuzzReadNodes feeds arbitrary bytes to the batch reader (append --file).
func FuzzReadNodes(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		nodes, err := transcript.ReadNodes(bytes.NewReader(data), "batch.jsonl", 1<<16)
		if err != nil {
			var pe *transcript.ParseError
			if !errors.As(err, &pe) || pe.Line < 1 || !strings.HasPrefix(err.Error(), fmt.Sprintf("batch.jsonl:%d: ", pe.Line)) {
				t.Fatalf("error %T %q lacks file:line", err, err)
			}
			return
		}
		for i := range nodes {
			enc, err := json.Marshal(&nodes[i])
			if err != nil {
				t.Fatalf("node %d: encode: %v", i, err)
			}
			var again transcript.Node
			if err := json.Unmarshal(enc, &again); err != nil {
				t.Fatalf("node %d: re-decode %s: %v", i, enc, err)
			}
		}
	})
}

package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/ctxfold/ctxfold/transcript"
)

// A hand-written file may name a later line as predecessor or caller; the
// index resolves such links once the whole file is read, and keeps the
// name of a link that never resolves, on both index paths.
func TestIndexResolvesForwardAndDanglingLinks(t *testing.T) {
	lines := []string{
		`{"id":"b","predecessor":"a","role":"assistant","content":"answer"}`,
		`{"id":"a","predecessor":null,"role":"user","content":"question"}`,
		`{"id":"b","predecessor":null,"role":"user","content":"a duplicate"}`,
		`{"id":"c","predecessor":"gone","caller":"b","role":"tool","tool_call_id":"t1","name":"grep","content":"x"}`,
		`{"id":"a","predecessor":null,"role":"user","content":"another duplicate"}`,
		`{"id":"d","predecessor":"a","caller":"nowhere","role":"user","content":"y"}`,
	}
	data := []byte(strings.Join(lines, "\n") + "\n")
	for _, workers := range []int{1, 3} {
		withIndexKnobs(workers, 40, func() {
			s, err := Open(writeSession(t, data, -1), OpenOptions{})
			if err != nil {
				t.Fatalf("workers=%d: %v", workers, err)
			}
			defer s.Close()
			got := map[string]string{}
			for i, r := range s.All() {
				got[r.ID] = fmt.Sprintf("pred=%d:%q caller=%d:%q role=%s name=%q results=%v line=%d",
					s.PredIndex(i), r.Predecessor, s.CallerIndex(i), r.Caller, r.Role, r.Name, r.ResultIDs, r.Line)
			}
			want := map[string]string{
				"b": `pred=1:"a" caller=-1:"" role=assistant name="" results=[] line=1`,
				"a": `pred=-1:"" caller=-1:"" role=user name="" results=[] line=2`,
				"c": `pred=-2:"gone" caller=0:"b" role=tool name="grep" results=[t1] line=4`,
				"d": `pred=1:"a" caller=-2:"nowhere" role=user name="" results=[] line=6`,
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("workers=%d:\n got %v\nwant %v", workers, got, want)
			}
			if s.Len() != 4 || len(s.Duplicates) != 2 || s.Duplicates[0] != (Duplicate{ID: "b", FirstLine: 1, Line: 3}) ||
				s.Duplicates[1] != (Duplicate{ID: "a", FirstLine: 2, Line: 5}) {
				t.Fatalf("workers=%d: %d nodes, duplicates %+v", workers, s.Len(), s.Duplicates)
			}
		})
	}
}

// The id table finds every id it holds across its growth and none it
// does not, whatever the hash order.
func TestIDTable(t *testing.T) {
	s := &Session{}
	tab := &s.byID
	for i := range 5000 {
		id := fmt.Sprintf("node-%d", i*7)
		s.recs = append(s.recs, refRec{idOff: uint32(len(s.ids)), idLen: uint32(len(id))})
		s.ids = append(s.ids, id...)
		tab.insert(s, int32(i))
	}
	for i := range 5000 {
		if j, ok := tab.find(s, fmt.Sprintf("node-%d", i*7)); !ok || int(j) != i {
			t.Fatalf("node-%d: %d, %v", i*7, j, ok)
		}
		if _, ok := tab.find(s, fmt.Sprintf("node-%d", i*7+1)); ok {
			t.Fatalf("node-%d found but never inserted", i*7+1)
		}
	}
	if tab.used != 5000 || tab.used*4 > len(tab.slots)*3 {
		t.Fatalf("%d used of %d slots", tab.used, len(tab.slots))
	}
	var empty idTable
	if _, ok := empty.find(&Session{}, "x"); ok {
		t.Fatal("an empty table found an id")
	}
}

// Counts of ids past a record's 16-bit fields live beside it.
func TestIndexKeepsManyToolCalls(t *testing.T) {
	var calls []string
	for k := range manyIDs + 5 {
		calls = append(calls, fmt.Sprintf(`{"id":"c%d","name":"f","arguments":"{}"}`, k))
	}
	data := []byte(`{"id":"u","predecessor":null,"role":"user","content":"go"}` + "\n" +
		`{"id":"a","predecessor":"u","role":"assistant","content":"","tool_calls":[` + strings.Join(calls, ",") + `]}` + "\n")
	s, err := Open(writeSession(t, data, -1), OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := s.Ref(1)
	if len(r.ToolCallIDs) != manyIDs+5 || r.ToolCallIDs[manyIDs+4] != fmt.Sprintf("c%d", manyIDs+4) || len(r.ResultIDs) != 0 {
		t.Fatalf("%d calls (last %q), %d results", len(r.ToolCallIDs), r.ToolCallIDs[len(r.ToolCallIDs)-1], len(r.ResultIDs))
	}
	if got := s.Ref(0); got.ToolCallIDs != nil || got.Line != 1 || r.Line != 2 {
		t.Fatalf("neighbour: %+v, line %d", got, r.Line)
	}
}

// The record is the per-node memory of every command: keep it at 40 bytes.
func TestRecordSize(t *testing.T) {
	if n := unsafe.Sizeof(refRec{}); n > 40 {
		t.Fatalf("refRec is %d bytes, over 40", n)
	}
}

// A node appended to an open snapshot resolves the links that named it
// before it existed, as a fresh Open would.
func TestAppendResolvesDanglingLinks(t *testing.T) {
	data := []byte(`{"id":"b","predecessor":"a","caller":"c","role":"user","content":"x"}` + "\n")
	dir := writeSession(t, data, -1)
	_, err := Update(context.Background(), dir, WriteOptions{Command: "test"}, func(tx *Tx) error {
		s := tx.Session()
		if s.PredIndex(0) != MissingLink || s.CallerIndex(0) != MissingLink {
			t.Fatalf("before: pred %d caller %d", s.PredIndex(0), s.CallerIndex(0))
		}
		if _, err := tx.Append([]transcript.Node{{ID: "a", Role: transcript.RoleUser, Content: transcript.TextContent("q")}}, AppendOptions{RootFirst: true, AllowBrokenGraph: true}); err != nil {
			return err
		}
		if s.PredIndex(0) != 1 || s.CallerIndex(0) != MissingLink || s.Ref(0).Caller != "c" {
			t.Fatalf("after appending a: pred %d caller %d (%q)", s.PredIndex(0), s.CallerIndex(0), s.Ref(0).Caller)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.PredIndex(0) != 1 || s.CallerIndex(0) != MissingLink {
		t.Fatalf("reopened: pred %d caller %d", s.PredIndex(0), s.CallerIndex(0))
	}
}

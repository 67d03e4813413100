package claudecode

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ctxfold/ctxfold/internal/sessiontest"
)

// A resumable first import emits exactly the nodes, HEAD and model of a
// plain one, whether its second pass plans the whole file or starts from
// the provisional point the first pass saved near the end (then it tallies
// only the lines after that point), and it leaves a resume point, handed
// to Resume.Saved too.
func TestResumableImportEqualsPlain(t *testing.T) {
	src := sessiontest.External(t, "claude-code", "marot-spotter", "258c7280-ae70-4798-800f-63464d01a85d.jsonl")
	full, err := os.ReadFile(src)
	if err != nil {
		t.Skipf("shared real transcript not present: %v", err)
	}
	defer func(w int64) { provWindow = w }(provWindow)
	provWindow = 64 << 10
	// Beside no sub-agent files: those make an import not resumable.
	file := filepath.Join(t.TempDir(), filepath.Base(src))
	ends := sessiontest.LineEnds(full)
	fromProv := 0
	for k := 1; k <= 12; k++ {
		cut := ends[k*(len(ends)-1)/12]
		if err := os.WriteFile(file, full[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		plain := importMem(t, file).convs[0]
		var tgt memTarget
		var saved []*Point
		res := &Resume{Saved: func(p *Point) { saved = append(saved, p) }}
		if err := Import(context.Background(), []string{file}, Options{Resume: res}, &tgt); err != nil {
			t.Fatalf("cut %d: resumable import: %v", cut, err)
		}
		if len(saved) != 1 || saved[0] != res.Point {
			t.Fatalf("cut %d: Saved was given %d points, want the one Point (%p) once", cut, len(saved), res.Point)
		}
		got := tgt.convs[0]
		a, _ := json.Marshal(plain.nodes)
		b, _ := json.Marshal(got.nodes)
		if !bytes.Equal(a, b) || got.head != plain.head || got.model != plain.model || got.order != nil {
			t.Fatalf("cut %d: the resumable import differs from a plain one (%d vs %d nodes, head %q vs %q, %v)", cut, len(got.nodes), len(plain.nodes), got.head, plain.head, got.order)
		}
		if res.Point == nil || res.Point.Offset <= 0 || res.Point.Offset > int64(cut) || res.Parsed != int64(cut) ||
			len(got.checkpoints) != 1 || got.checkpoints[0] != res.Point.Nodes {
			t.Fatalf("cut %d: point at %v, parsed %d, checkpoints %v", cut, res.Point != nil, res.Parsed, got.checkpoints)
		}
		if got.lines < plain.lines {
			fromProv++
		}
	}
	if fromProv == 0 {
		t.Error("no import started its second pass from the provisional point")
	}
}

// A damaged saved state is refused with ErrCannotResume, never a panic.
func TestResumeDamagedState(t *testing.T) {
	src := sessiontest.External(t, "claude-code", "d-kimuson-claude-code-viewer", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl")
	full, err := os.ReadFile(src)
	if err != nil {
		t.Skipf("shared real transcript not present: %v", err)
	}
	file := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(file, full, 0o644); err != nil {
		t.Fatal(err)
	}
	res := &Resume{}
	if err := Import(context.Background(), []string{file}, Options{Resume: res}, &memTarget{}); err != nil || res.Point == nil {
		t.Fatalf("import: %v, point %+v", err, res.Point)
	}
	state := res.Point.State
	for _, bad := range [][]byte{nil, []byte("x"), state[:len(state)/2], append(bytes.Clone(state[:len(state)-9]), 0xff)} {
		if bad == nil {
			continue
		}
		r := &Resume{State: bad}
		err := Import(context.Background(), []string{file}, Options{Resume: r}, &memTarget{})
		if err == nil || !errorsIs(err, ErrCannotResume) {
			t.Errorf("damaged state (%d bytes): %v, want ErrCannotResume", len(bad), err)
		}
	}
	// Node indexes out of range are refused before any use.
	var s snap
	if err := s.decode(bytes.Clone(state)); err != nil {
		t.Fatal(err)
	}
	// colSizes is exactly the columns' size: the gob rest starts there,
	// and the state encodes again to the same columns.
	again, err := s.encode()
	if err != nil {
		t.Fatal(err)
	}
	n := s.colSizes()
	var rest snapRest
	if len(again) != len(state) || !bytes.Equal(again[:n], state[:n]) || gob.NewDecoder(bytes.NewReader(again[n:])).Decode(&rest) != nil {
		t.Errorf("the state does not encode again to its columns of %d bytes and a gob rest", n)
	}
	s.Pred[len(s.Pred)-1] = int32(len(s.Pred) + 5)
	enc, err := s.encode()
	if err != nil {
		t.Fatal(err)
	}
	if err := Import(context.Background(), []string{file}, Options{Resume: &Resume{State: enc}}, &memTarget{}); !errorsIs(err, ErrCannotResume) {
		t.Errorf("out-of-range predecessor: %v, want ErrCannotResume", err)
	}
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }

// With a Limit, a resumable import reads the file as if it ended there:
// what a client appended after the bytes the caller hashed is left for
// the next import.
func TestResumableImportLimit(t *testing.T) {
	src := sessiontest.External(t, "claude-code", "d-kimuson-claude-code-viewer", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl")
	full, err := os.ReadFile(src)
	if err != nil {
		t.Skipf("shared real transcript not present: %v", err)
	}
	dir := t.TempDir()
	whole, cutFile := filepath.Join(dir, "whole.jsonl"), filepath.Join(dir, "cut.jsonl")
	if err := os.WriteFile(whole, full, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{len(full) / 3, len(full) / 2, 2 * len(full) / 3} {
		if err := os.WriteFile(cutFile, full[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		plain := importMem(t, cutFile).convs[0]
		var tgt memTarget
		res := &Resume{Limit: int64(cut)}
		if err := Import(context.Background(), []string{whole}, Options{Resume: res}, &tgt); err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(plain.nodes)
		b, _ := json.Marshal(tgt.convs[0].nodes)
		if !bytes.Equal(a, b) || res.Parsed != int64(cut) || res.Point == nil || res.Point.Offset > int64(cut) {
			t.Errorf("limit %d: %d nodes vs %d of the cut file, parsed %d", cut, len(tgt.convs[0].nodes), len(plain.nodes), res.Parsed)
		}
	}
}

// A refresh from a saved state emits exactly the nodes a plain import of
// the grown file plans after the state's point, commits at the new point,
// and leaves a state a refresh can start from again — whether the new point
// is the old one (its state kept) or a later one (saved beside the emit).
func TestRefreshEqualsPlain(t *testing.T) {
	src := sessiontest.External(t, "claude-code", "marot-spotter", "258c7280-ae70-4798-800f-63464d01a85d.jsonl")
	full, err := os.ReadFile(src)
	if err != nil {
		t.Skipf("shared real transcript not present: %v", err)
	}
	file := filepath.Join(t.TempDir(), "s.jsonl")
	ends := sessiontest.LineEnds(full)
	kept, moved := 0, 0
	var pairs [][2]int
	for k := 1; k < 8; k++ {
		pairs = append(pairs, [2]int{ends[k*len(ends)/8-1], ends[(k+1)*len(ends)/8-1]})
	}
	// One line more: the point stays when the line joins what was at risk.
	for k := 1; k < 16; k++ {
		at := k * (len(ends) - 2) / 16
		pairs = append(pairs, [2]int{ends[at], ends[at+1]})
	}
	for _, pair := range pairs {
		first, grown := pair[0], pair[1]
		if err := os.WriteFile(file, full[:first], 0o644); err != nil {
			t.Fatal(err)
		}
		res := &Resume{}
		if err := Import(context.Background(), []string{file}, Options{Resume: res}, &memTarget{}); err != nil || res.Point == nil {
			t.Fatalf("first import: %v", err)
		}
		old := res.Point
		if err := os.WriteFile(file, full[:grown], 0o644); err != nil {
			t.Fatal(err)
		}
		plain := importMem(t, file).convs[0]
		var tgt memTarget
		r := &Resume{State: old.State}
		if err := Import(context.Background(), []string{file}, Options{Resume: r}, &tgt); err != nil {
			t.Fatalf("cut %d→%d: refresh: %v", first, grown, err)
		}
		got := tgt.convs[0]
		a, _ := json.Marshal(plain.nodes[old.Nodes:])
		b, _ := json.Marshal(got.nodes)
		if !bytes.Equal(a, b) || got.head != plain.head {
			t.Fatalf("cut %d→%d: the refresh emitted %d nodes, a plain import plans %d after the point", first, grown, len(got.nodes), len(plain.nodes)-old.Nodes)
		}
		if r.Point == nil || len(got.checkpoints) != 1 || old.Nodes+got.checkpoints[0] != r.Point.Nodes {
			t.Fatalf("cut %d→%d: point %v, checkpoints %v", first, grown, r.Point != nil, got.checkpoints)
		}
		if r.Point.Offset == old.Offset {
			kept++
			if !bytes.Equal(r.Point.State, old.State) {
				t.Fatalf("cut %d→%d: the point stayed, its state changed", first, grown)
			}
		} else {
			moved++
		}
		// The new state is one a refresh starts from.
		if err := Import(context.Background(), []string{file}, Options{Resume: &Resume{State: r.Point.State}}, &memTarget{}); err != nil {
			t.Fatalf("cut %d→%d: a refresh from the new state: %v", first, grown, err)
		}
	}
	t.Logf("%d refreshes kept the point, %d moved it", kept, moved)
	if kept == 0 || moved == 0 {
		t.Errorf("%d refreshes kept the point, %d moved it; the test wants both", kept, moved)
	}
}

// A resumable import and a refresh of a session with compactions give each
// summary the coverage a plain import gives it (docs/FORMAT.md §4,
// covers_span): the saved state keeps each summary's first covered node
// and count beside its last. Every cut of a session with two compactions.
func TestRefreshOfACompactionEqualsPlain(t *testing.T) {
	full, err := os.ReadFile(filepath.Join(fixtureDir, "sess-0001.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	// Without its sub-agent files (a session with them imports whole) and
	// with provisional points a few lines apart, as in a long file.
	defer func(w int64) { provWindow = w }(provWindow)
	provWindow = 1 << 10
	file := filepath.Join(t.TempDir(), "sess-0001.jsonl")
	if err := os.WriteFile(file, full, 0o644); err != nil {
		t.Fatal(err)
	}
	plain := importMem(t, file).convs[0]
	summaries := 0
	for _, n := range plain.nodes {
		if n.IsSummary() {
			summaries++
		}
	}
	if summaries != 2 {
		t.Fatalf("the fixture imports %d summaries, want 2", summaries)
	}
	resumed := 0
	for _, cut := range sessiontest.LineEnds(full) {
		if err := os.WriteFile(file, full[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		res := &Resume{}
		var first memTarget
		if err := Import(context.Background(), []string{file}, Options{Resume: res}, &first); err != nil || res.Point == nil {
			continue
		}
		a, _ := json.Marshal(importMem(t, file).convs[0].nodes)
		b, _ := json.Marshal(first.convs[0].nodes)
		if !bytes.Equal(a, b) {
			t.Fatalf("cut %d: the resumable import emitted\n%s\na plain import\n%s", cut, b, a)
		}
		if err := os.WriteFile(file, full, 0o644); err != nil {
			t.Fatal(err)
		}
		var tgt memTarget
		if err := Import(context.Background(), []string{file}, Options{Resume: &Resume{State: res.Point.State}}, &tgt); err != nil {
			t.Fatalf("cut %d: refresh: %v", cut, err)
		}
		a, _ = json.Marshal(plain.nodes[res.Point.Nodes:])
		b, _ = json.Marshal(tgt.convs[0].nodes)
		if !bytes.Equal(a, b) {
			t.Fatalf("cut %d: the refresh emitted\n%s\na plain import\n%s", cut, b, a)
		}
		resumed++
	}
	if resumed == 0 {
		t.Fatal("no cut gave a resume point")
	}
}

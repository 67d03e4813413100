package claudecode

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// savedState imports the fixture session and returns it (copied to a
// temporary file) with the state saved at its resume point.
func savedState(t testing.TB) (string, []byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtureDir, "sess-0001.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	res := &Resume{}
	if err := Import(context.Background(), []string{file}, Options{Resume: res}, &memTarget{}); err != nil || res.Point == nil {
		t.Fatalf("import: %v, point %+v", err, res.Point)
	}
	return file, res.Point.State
}

// Issue 30, item 7: a crafted state (its hash fixed up in state.json, so
// only the decoder stands in the way) is refused with ErrCannotResume —
// never a panic (a negative count slicing past the ids), never a walk
// that does not end (a predecessor or caller cycle), never a wrong answer
// (a duplicate id, a group whose head is another group's member).
func TestResumeCraftedState(t *testing.T) {
	file, state := savedState(t)
	var s snap
	if err := s.decode(state); err != nil {
		t.Fatal(err)
	}
	n := len(s.ID)
	if n < 4 {
		t.Fatalf("the fixture plans %d nodes; the test needs 4", n)
	}
	crafts := map[string]func(s *snap){
		"negative call count": func(s *snap) {
			s.CallsN[0] -= 1
			s.CallsN[n-1] += 1
		},
		"predecessor cycle": func(s *snap) { s.Pred[1], s.Pred[2] = 2, 1 },
		"caller cycle":      func(s *snap) { s.Caller[1], s.Caller[2] = 2, 1 },
		"self predecessor":  func(s *snap) { s.Pred[3] = 3 },
		"duplicate id":      func(s *snap) { s.ID[2] = s.ID[1] },
		"group of a member": func(s *snap) { s.Group[1], s.Group[2] = 2, 1 },
		// An open group's member of none was indexed when the group closed
		// (found by FuzzResumeState).
		"open group member none": func(s *snap) { s.Rest.Grp, s.Rest.GrpBase = []int32{1, none, 2}, 0 },
		"moved from none":        func(s *snap) { s.Rest.Moved = map[int32]int32{none: 1} },
	}
	for name, craft := range crafts {
		t.Run(name, func(t *testing.T) {
			var c snap
			// The columns are the state's bytes (snap.decode): a craft
			// changes a copy.
			if err := c.decode(bytes.Clone(state)); err != nil {
				t.Fatal(err)
			}
			craft(&c)
			enc, err := c.encode()
			if err != nil {
				t.Fatal(err)
			}
			err = Import(context.Background(), []string{file}, Options{Resume: &Resume{State: enc}}, &memTarget{})
			if !errorsIs(err, ErrCannotResume) {
				t.Errorf("%v, want ErrCannotResume", err)
			}
		})
	}
	// The state as saved passes.
	if err := Import(context.Background(), []string{file}, Options{Resume: &Resume{State: state}}, &memTarget{}); err != nil {
		t.Fatalf("the saved state itself: %v", err)
	}
}

// FuzzResumeState: whatever resume.bin holds, a resumed import refuses it
// (ErrCannotResume or a parse error) or finishes — no panic, no endless
// walk. Seeded with a real saved state. Run: go test
// ./format/claudecode -run '^$' -fuzz FuzzResumeState
func FuzzResumeState(f *testing.F) {
	file, state := savedState(f)
	f.Add(state)
	f.Add(state[:len(state)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = Import(context.Background(), []string{file}, Options{Resume: &Resume{State: data}}, &memTarget{})
	})
}

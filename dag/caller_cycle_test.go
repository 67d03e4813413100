package dag_test

import (
	"slices"
	"testing"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/store"
)

// A spawned side chain hangs from its caller; a root whose caller lies in
// its own subtree would make every "predecessor, else caller" walk loop
// (graph's layout hung on such a session), so it is an integrity fault —
// while an ordinary side chain is not.
func TestCallerCycle(t *testing.T) {
	cases := []struct {
		name  string
		lines []string
		// want: the roots any one of which may be named (one fault per loop)
		want []string
	}{
		{"side chain of the main chain", []string{
			dgNode("r", ""), dgNode("u1", "r"),
			`{"id":"s1","predecessor":null,"role":"user","caller":"u1","content":"sub-agent task"}`,
			`{"id":"s2","predecessor":"s1","role":"assistant","content":"done"}`,
		}, nil},
		{"nested side chains", []string{
			dgNode("r", ""),
			`{"id":"s1","predecessor":null,"role":"user","caller":"r","content":"a"}`,
			`{"id":"t1","predecessor":null,"role":"user","caller":"s1","content":"b"}`,
		}, nil},
		{"caller is a descendant", []string{
			dgNode("r", ""),
			`{"id":"x1","predecessor":null,"role":"user","caller":"x2","content":"a"}`,
			`{"id":"x2","predecessor":"x1","role":"assistant","content":"b"}`,
		}, []string{"x1"}},
		{"two roots calling each other", []string{
			dgNode("r", ""),
			`{"id":"a","predecessor":null,"role":"user","caller":"b2","content":"a"}`,
			`{"id":"b","predecessor":null,"role":"user","caller":"a","content":"b"}`,
			`{"id":"b2","predecessor":"b","role":"assistant","content":"c"}`,
		}, []string{"a", "b"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := store.Open(dgWrite(t, "r", "", tc.lines...), store.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			_, errs := dag.New(s)
			var got []string
			for _, e := range errs {
				if e.Code != store.CodeCallerCycle {
					t.Fatalf("unexpected fault %v", e)
				}
				got = append(got, e.NodeID)
			}
			switch {
			case len(tc.want) == 0 && len(got) == 0:
			case len(tc.want) > 0 && len(got) == 1 && slices.Contains(tc.want, got[0]):
			default:
				t.Fatalf("caller cycles at %v, want one of %v", got, tc.want)
			}
		})
	}
}

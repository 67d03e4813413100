package dag_test

import (
	"fmt"
	"reflect"
	"testing"
)

func dgSpan(id, pred, first, last string, count int) string {
	p := "null"
	if pred != "" {
		p = fmt.Sprintf("%q", pred)
	}
	return fmt.Sprintf(`{"id":%q,"predecessor":%s,"role":"user","name":"context/summary","content":"[Previous conversation summary]\nS","metadata":{"compaction":true,"covers_span":{"first":%q,"last":%q,"count":%d}}}`,
		id, p, first, last, count)
}

// docs/FORMAT.md §4: a covers_span is the chain its last node walks back to
// its first; it substitutes exactly as the list of that chain's ids does,
// and one that does not resolve renders raw. A sibling branch from the
// segment keeps its own view: the span names the chain through "last".
func TestSpanSubstitutesAsItsList(t *testing.T) {
	chain := []string{dgNode("r", ""), dgNode("u1", "r"), dgNode("a1", "u1"), dgNode("u2", "a1"), dgNode("a2", "u2"), dgNode("x2", "u2"), dgNode("u3", "a2")}
	list := dgOpen(t, dgWrite(t, "u3", "summary_s", append(chain, dgSummary("summary_s", "r", "u1", "a1", "u2", "a2"))...))
	span := dgOpen(t, dgWrite(t, "u3", "summary_s", append(chain, dgSpan("summary_s", "r", "u1", "a2", 4))...))
	for _, head := range []string{"u3", "x2", "a1"} {
		want := dgView(t, list, head, false)
		if got := dgView(t, span, head, false); !reflect.DeepEqual(got, want) {
			t.Errorf("from %s: span renders %v, the list %v", head, got, want)
		}
	}
	if got := dgView(t, span, "u3", false); !reflect.DeepEqual(got, []string{"r", "summary_s", "u3"}) {
		t.Fatalf("view %v", got)
	}
	s, _ := span.Lookup("summary_s")
	if got := span.CoverIDs(s); !reflect.DeepEqual(got, []string{"u1", "a1", "u2", "a2"}) {
		t.Fatalf("CoverIDs = %v", got)
	}
	for name, bad := range map[string]string{
		"count short":   dgSpan("summary_s", "r", "u1", "a2", 3),
		"count long":    dgSpan("summary_s", "r", "u1", "a2", 6),
		"first missing": dgSpan("summary_s", "r", "ghost", "a2", 4),
		"last missing":  dgSpan("summary_s", "r", "u1", "ghost", 4),
	} {
		g := dgOpen(t, dgWrite(t, "u3", "summary_s", append(chain, bad)...))
		if got := dgView(t, g, "u3", false); !reflect.DeepEqual(got, []string{"r", "u1", "a1", "u2", "a2", "u3"}) {
			t.Errorf("%s: view %v, want raw", name, got)
		}
		if s, _ := g.Lookup("summary_s"); g.CoverIDs(s) != nil {
			t.Errorf("%s: CoverIDs resolves", name)
		}
	}
}

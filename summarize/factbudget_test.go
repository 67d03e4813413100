package summarize

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/audit"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/transcript"
)

// factSection returns the lines of one "## " section of a summary.
func sectionOf(summary, heading string) string {
	_, rest, ok := strings.Cut(summary, "## "+heading+"\n")
	if !ok {
		return ""
	}
	body, _, _ := strings.Cut(rest, "\n## ")
	return strings.TrimSpace(body)
}

// Facts come before prose: under a cap that cannot hold everything the
// prose goes first, and every fact is still listed once, with its ids.
func TestFactsBeforeProse(t *testing.T) {
	const capTokens = 240
	nodes := extractiveFixture()
	full, err := Extractive{}.Summarize(context.Background(), Request{Nodes: nodes, MaxTokens: 2000})
	if err != nil {
		t.Fatal(err)
	}
	facts := audit.Extract(nodes, nil)
	small, err := Extractive{}.Summarize(context.Background(), Request{Nodes: nodes, MaxTokens: capTokens})
	if err != nil {
		t.Fatal(err)
	}
	m := audit.NewMatcher(small)
	for _, f := range facts {
		if !m.Has(f) {
			t.Errorf("fact %s %q dropped while prose was kept:\n%s", f.Kind, f.Text, small)
		}
	}
	if sectionOf(small, "Key decisions") != "" && sectionOf(full, "Key decisions") == "" {
		t.Fatal("fixture")
	}
	if strings.Contains(small, "## Rejected approaches") {
		t.Errorf("prose kept under a cap the facts fill:\n%s", small)
	}
	if n, _ := estimate.Text(estimate.O200kBase, small); n > capTokens {
		t.Errorf("summary %d tokens, cap %d", n, capTokens)
	}
}

// Facts that do not fit the ceiling are never dropped silently: the
// lowest ranked go, and a "Not kept" section counts them by kind.
func TestFactsOverTheCeilingAreCounted(t *testing.T) {
	nodes := []transcript.Node{{ID: "u1", Role: transcript.RoleUser, Content: transcript.TextContent("Port the exporter. Never touch vendor/.")}}
	for i := range 80 {
		nodes = append(nodes, transcript.Node{ID: fmt.Sprintf("a%d", i), Role: transcript.RoleAssistant, Content: transcript.TextContent(fmt.Sprintf("Step `stepNumber%02d` took %d ms.", i, 100+i)),
			ToolCalls: []transcript.ToolCall{{ID: fmt.Sprintf("c%d", i), Name: "bash", Arguments: json.RawMessage(fmt.Sprintf(`{"cmd":"go test ./internal/export -run TestStep%02d"}`, i))}}})
	}
	got, err := Extractive{}.Summarize(context.Background(), Request{Nodes: sessiontest.Pointers(nodes), MaxTokens: 300, Ceiling: 400})
	if err != nil {
		t.Fatal(err)
	}
	note := sectionOf(got, "Not kept")
	if !strings.Contains(note, "facts did not fit the size ceiling") || !strings.Contains(note, "number") {
		t.Errorf("no count of the facts left out:\n%s", got)
	}
	// Ranked: the instruction and the newest command stay; numbers (last
	// rank) are the first to go.
	if !strings.Contains(got, `"Never touch vendor/." [u1]`) || !strings.Contains(got, "TestStep79 [a79]") {
		t.Errorf("a high-ranked fact was dropped:\n%s", got)
	}
	if strings.Contains(got, "## Numbers") && !strings.Contains(got, "## Identifiers") {
		t.Errorf("numbers kept over identifiers:\n%s", got)
	}
	if n, _ := estimate.Text(estimate.O200kBase, got); n > 400 {
		t.Errorf("summary %d tokens, ceiling 400", n)
	}
}

// Pins are quoted on top of the facts: with a pin the fact sections are
// those without it; when the ceiling cannot hold both, the summary is
// refused with a PinsDisplaceFactsError, never cut.
func TestPinsAddToTheFacts(t *testing.T) {
	nodes := extractiveFixture()
	pin := strings.Repeat("pinned design note, kept verbatim. ", 12)
	without, err := Extractive{}.Summarize(context.Background(), Request{Nodes: nodes, MaxTokens: 200, Ceiling: 800})
	if err != nil {
		t.Fatal(err)
	}
	with, err := Extractive{}.Summarize(context.Background(), Request{Nodes: nodes, MaxTokens: 200, Ceiling: 800, Pinned: []string{pin}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(with, "## Pinned\n"+pin+"\n") {
		t.Fatalf("pin not quoted:\n%s", with)
	}
	for _, sec := range factSections {
		if sectionOf(with, sec) != sectionOf(without, sec) {
			t.Errorf("section %q differs with the pin:\n%s\n---\n%s", sec, sectionOf(with, sec), sectionOf(without, sec))
		}
	}
	_, err = Extractive{}.Summarize(context.Background(), Request{Nodes: nodes, MaxTokens: 200, Ceiling: 220, Pinned: []string{pin}})
	var pe *PinsDisplaceFactsError
	if !errors.As(err, &pe) || pe.Displaced == 0 || !strings.Contains(err.Error(), "raise --max-summary-tokens or unpin a node") {
		t.Fatalf("pins over the ceiling: %v", err)
	}
}

// Ids are shortened to a unique prefix of at least 8 characters.
func TestIDShortener(t *testing.T) {
	s := NewIDShortener([]audit.Fact{{NodeIDs: []string{"u1", "3f2a1b4c-aaaa-4000-8000-000000000001", "3f2a1b4c-aaab-4000-8000-000000000001", "9e8d7c6b-1111-2222-3333-444444444444"}}})
	for id, want := range map[string]string{"u1": "u1", "3f2a1b4c-aaaa-4000-8000-000000000001": "3f2a1b4c-aaaa", "3f2a1b4c-aaab-4000-8000-000000000001": "3f2a1b4c-aaab", "9e8d7c6b-1111-2222-3333-444444444444": "9e8d7c6b"} {
		if got := s.Short(id); got != want {
			t.Errorf("%s: %q, want %q", id, got, want)
		}
	}
}

// Every cap, however small, ends (a paragraph clipped until it fits once
// grew back by its "…[clipped]" mark and looped forever).
func TestEveryCapEnds(t *testing.T) {
	nodes := extractiveFixture()
	for c := 1; c <= 120; c += 7 {
		if _, err := (Extractive{}).Summarize(context.Background(), Request{Nodes: nodes, MaxTokens: c}); err != nil {
			t.Fatal(err)
		}
	}
}

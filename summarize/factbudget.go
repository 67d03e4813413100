package summarize

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/ctxfold/ctxfold/audit"
	"github.com/ctxfold/ctxfold/estimate"
)

// PinsDisplaceFactsError: the pinned texts are so large that, under the
// summary's ceiling, they would take the place of facts that fit without
// them. Pins are quoted in addition to the facts, never instead of them
// (docs/COMPACT.md §3), so the summary is refused rather than cut.
type PinsDisplaceFactsError struct {
	PinTokens, Ceiling, Displaced int
}

func (e *PinsDisplaceFactsError) Error() string {
	return fmt.Sprintf("the pinned texts (%d tokens) leave no room for %d facts under the summary ceiling (%d tokens); raise --max-summary-tokens or unpin a node",
		e.PinTokens, e.Displaced, e.Ceiling)
}

// budget is the extractive summary's spending plan: the objective and the
// pinned texts first, then the facts by rank (audit.Rank) — past the soft
// cap up to the ceiling if they need it — then the prose, only within the
// soft cap.
type budget struct {
	enc        string
	soft, hard int
	cost       func(string) (int, error)
}

// fit spends the budget by value and renders the summary
// (docs/COMPACT.md §3).
func (x *extraction) fit(req Request, facts []audit.Fact) (string, error) {
	enc := req.Encoding
	if enc == "" {
		enc = estimate.O200kBase
	}
	b := budget{enc: enc, soft: req.MaxTokens, hard: max(req.Ceiling, req.MaxTokens)}
	b.cost = func(s string) (int, error) { return estimate.Text(enc, s) }
	ranked := audit.Rank(facts)
	if b.soft <= 0 {
		x.chooseAll(ranked)
		return x.render(), nil
	}
	if err := x.fitObjective(b); err != nil {
		return "", err
	}
	base, err := b.cost(x.renderSections([]string{secObjective}))
	if err != nil {
		return "", err
	}
	pins := 0
	if len(x.lists[secPinned]) > 0 {
		if pins, err = b.cost(x.renderSections([]string{secPinned})); err != nil {
			return "", err
		}
	}
	// Reserve the "Not kept" note's line: a drop is never silent.
	const noteReserve = 40
	pick := func(room int) ([]factPick, []audit.Fact, error) {
		picks, left, err := x.pickFacts(b, ranked, room)
		if err == nil && len(left) > 0 {
			picks, left, err = x.pickFacts(b, ranked, room-noteReserve)
		}
		return picks, left, err
	}
	picks, left, err := pick(b.hard - base - pins)
	if err != nil {
		return "", err
	}
	if pins > 0 {
		_, leftWithout, err := pick(b.hard - base)
		if err != nil {
			return "", err
		}
		if len(left) > len(leftWithout) {
			return "", &PinsDisplaceFactsError{PinTokens: pins, Ceiling: b.hard, Displaced: len(left) - len(leftWithout)}
		}
	}
	x.setFacts(picks, left, len(ranked))
	x.pointTaskAtRequest(picks, ranked)
	used, err := b.cost(x.renderSections(append(append([]string{secObjective, secPinned}, factSections...), secNotKept)))
	if err != nil {
		return "", err
	}
	// An earlier summary of another shape (a client's own, carried
	// forward) may grow the summary to the ceiling as the facts may; the
	// rest of the prose gets what the soft cap leaves (pins are outside
	// it).
	if err := x.fitProse(b, proseOrder[:ceilingProse], b.hard-used); err != nil {
		return "", err
	}
	if used, err = b.cost(x.renderSections(append(append(append([]string{secObjective, secPinned}, factSections...), secNotKept), proseOrder[:ceilingProse]...))); err != nil {
		return "", err
	}
	if err := x.fitProse(b, proseOrder[ceilingProse:], b.soft+pins-used); err != nil {
		return "", err
	}
	return x.trim(b)
}

// fitObjective clips an objective that alone would take more than half
// of the soft cap: the request's first sentence is a fact of its own.
func (x *extraction) fitObjective(b budget) error {
	p := x.paragraph[secObjective]
	for p != "" {
		c, err := b.cost(p)
		if err != nil {
			return err
		}
		if c <= b.soft/2 || len(p) <= 200 {
			break
		}
		p = shrink(p, len(p)*b.soft/2/c)
		x.paragraph[secObjective] = p
	}
	return nil
}

// factPick is one listed fact: its section and its line.
type factPick struct {
	sec, line string
	at        int // index in the ranked facts
}

// pickFacts takes the ranked facts that fit in room tokens, in rank order
// (newestFirstWithinRank; a fact too long for what is left is passed over
// for shorter, lower ones). A request the objective quotes, and an
// identifier, number or URL a listed line already holds, is kept without
// a line of its own. left are the facts that did not fit.
func (x *extraction) pickFacts(b budget, ranked []audit.Fact, room int) (picks []factPick, left []audit.Fact, err error) {
	ids := NewIDShortener(ranked)
	objective := audit.NewMatcher(x.paragraph[secObjective])
	var listed strings.Builder
	var m *audit.Matcher
	lastKind := audit.Kind("")
	used := 0
	headings := map[string]bool{}
	changed := map[string]bool{}
	for _, k := range newestFirstWithinRank(ranked) {
		f := ranked[k]
		if f.Kind == audit.KindRequest && objective.Has(f) {
			continue
		}
		if f.Kind != lastKind {
			// Ranked facts come grouped by kind: the matcher of what is
			// listed so far is rebuilt once a kind.
			m, lastKind = audit.NewMatcher(x.paragraph[secObjective]+"\n"+listed.String()), f.Kind
		}
		if coveredBy(f, m, changed) {
			continue
		}
		sec := factSection(f, x.modified)
		line := FactLine(f, ids)
		c, err := b.cost("- " + line + "\n")
		if err != nil {
			return nil, nil, err
		}
		if !headings[sec] {
			c += 4 // "## Section\n" and the blank line after it
		}
		if used+c > room {
			left = append(left, f)
			continue
		}
		headings[sec] = true
		used += c
		picks = append(picks, factPick{sec, line, k})
		listed.WriteString(f.Text + "\n")
		if f.Kind == audit.KindChange {
			p, _, _ := audit.ParseChange(f.Text)
			changed[p] = true
		}
	}
	// Listed oldest first within a section, as they happened.
	sort.SliceStable(picks, func(i, j int) bool { return picks[i].at < picks[j].at })
	return picks, left, nil
}

// newestFirstWithinRank is the order the budget takes ranked facts in:
// rank by rank, and within a rank the most recent first — the last error
// and the last command matter most to the next turn.
func newestFirstWithinRank(ranked []audit.Fact) []int {
	key := func(f audit.Fact) string { return string(f.Kind) + fmt.Sprint(audit.IsCorrection(f)) }
	out := make([]int, 0, len(ranked))
	for i := 0; i < len(ranked); {
		j := i
		for j < len(ranked) && key(ranked[j]) == key(ranked[i]) {
			j++
		}
		for k := j - 1; k >= i; k-- {
			out = append(out, k)
		}
		i = j
	}
	return out
}

// setFacts lists the picks and notes how many facts did not fit.
func (x *extraction) setFacts(picks []factPick, left []audit.Fact, total int) {
	for _, sec := range factSections {
		delete(x.lists, sec)
	}
	for _, p := range picks {
		x.lists[p.sec] = append(x.lists[p.sec], p.line)
	}
	x.left, x.total = left, total
	x.noteLeft()
}

// noteLeft writes the "Not kept" note for x.left.
func (x *extraction) noteLeft() {
	delete(x.paragraph, secNotKept)
	if len(x.left) > 0 {
		x.paragraph[secNotKept] = notKeptNote(x.left, x.total)
	}
}

// kindOfSection is the kind of fact a fact section lists.
var kindOfSection = map[string]audit.Kind{secFactRequests: audit.KindRequest, secFactConstr: audit.KindInstruction,
	secFactErrors: audit.KindError, secFactChanged: audit.KindChange, secFactCommands: audit.KindCommand, secFactModified: audit.KindPath,
	secFactPaths: audit.KindPath, secFactURLs: audit.KindURL, secFactIdents: audit.KindIdentifier, secFactNumbers: audit.KindNumber}

// notKeptNote names how many facts of which kinds did not fit.
func notKeptNote(left []audit.Fact, total int) string {
	n := map[audit.Kind]int{}
	for _, f := range left {
		n[f.Kind]++
	}
	var parts []string
	for _, k := range audit.Kinds {
		if n[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[k], k))
		}
	}
	return fmt.Sprintf("%d of %d facts did not fit the size ceiling (%s; 'ctxfold audit' lists them).", len(left), total, strings.Join(parts, ", "))
}

// chooseAll lists every fact (no budget).
func (x *extraction) chooseAll(ranked []audit.Fact) {
	picks, left, _ := x.pickFacts(budget{cost: func(string) (int, error) { return 0, nil }}, ranked, 1<<30)
	x.setFacts(picks, left, len(ranked))
}

// fitProse gives the prose sections of order room tokens: a list
// keeps its newest items that fit, a paragraph is clipped to fit.
func (x *extraction) fitProse(b budget, order []string, room int) error {
	for _, sec := range order {
		if paragraphSections[sec] {
			p := x.paragraph[sec]
			if p == "" {
				continue
			}
			c, err := b.cost("## " + sec + "\n" + p + "\n\n")
			if err != nil {
				return err
			}
			for c > room && len(p) > 80 {
				p = shrink(p, len(p)*max(room, 0)/c)
				if c, err = b.cost("## " + sec + "\n" + p + "\n\n"); err != nil {
					return err
				}
			}
			if c > room {
				delete(x.paragraph, sec)
				continue
			}
			x.paragraph[sec] = p
			room -= c
			continue
		}
		items := x.lists[sec]
		kept := 0
		c0 := 4
		for i := len(items) - 1; i >= 0; i-- {
			c, err := b.cost("- " + items[i] + "\n")
			if err != nil {
				return err
			}
			if c+c0 > room {
				break
			}
			room -= c + c0
			c0 = 0
			kept++
		}
		x.lists[sec] = items[len(items)-kept:]
	}
	return nil
}

// trim confirms the rendered size with a real count: rounding in the
// arithmetic above may leave it a few tokens over the ceiling, and then
// prose, then the lowest-ranked fact lines, go.
func (x *extraction) trim(b budget) (string, error) {
	for {
		text := x.render()
		c, err := b.cost(text)
		if err != nil || c <= b.hard {
			return text, err
		}
		order := slices.Clone(proseOrder)
		slices.Reverse(order)
		facts := slices.Clone(factSections)
		slices.Reverse(facts)
		if !x.dropOldest(append(order, facts...)) {
			return text, nil // the caller's ceiling check rejects it
		}
	}
}

// dropOldest removes the oldest item (or the paragraph) of the first
// section of order that has one: within a kind the budget keeps the most
// recent.
func (x *extraction) dropOldest(order []string) bool {
	for _, sec := range order {
		if x.paragraph[sec] != "" {
			delete(x.paragraph, sec)
			return true
		}
		if n := len(x.lists[sec]); n > 0 {
			x.lists[sec] = x.lists[sec][1:]
			if k, ok := kindOfSection[sec]; ok {
				// A fact line cut to fit: counted as not kept.
				x.left = append(x.left, audit.Fact{Kind: k})
				x.noteLeft()
			}
			return true
		}
	}
	return false
}

func (x *extraction) render() string { return x.renderSections(sectionOrder) }

func (x *extraction) renderSections(order []string) string {
	var b strings.Builder
	for _, sec := range order {
		if paragraphSections[sec] || sec == secNotKept {
			if p := x.paragraph[sec]; p != "" {
				b.WriteString("## " + sec + "\n" + p + "\n\n")
			}
			continue
		}
		items := x.lists[sec]
		if len(items) == 0 {
			continue
		}
		b.WriteString("## " + sec + "\n")
		if sec == secPinned {
			// Verbatim, newlines included: one block a pinned text.
			for _, it := range items {
				b.WriteString(it + "\n\n")
			}
			continue
		}
		if sec == secFactModified || sec == secFactPaths {
			items = slices.Clone(items)
			sort.Strings(items)
		}
		for _, it := range items {
			b.WriteString("- " + strings.ReplaceAll(it, "\n", " ") + "\n")
		}
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// shrink clips a paragraph (perhaps clipped already) to at most n bytes
// of its text, and always by at least a tenth, so a loop that shrinks
// until a paragraph fits ends.
func shrink(p string, n int) string {
	base := strings.TrimSuffix(p, " …[clipped]")
	n = max(min(n, len(base)-len(base)/10-1), 0)
	return clipText(base, n)
}

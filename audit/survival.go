package audit

import (
	"strings"

	"github.com/ctxfold/ctxfold/transcript"
)

// Survival is facts matched against what the model reads — read, the
// nodes of a view (a compaction's candidate, before it is stored) — as
// Run scores a stored summary: the figures `compact` prints and records,
// and the facts a model's summary lacks (for its ledger).
type Survival struct {
	Figures *transcript.FactSurvival
	// Missing are the facts read lacks, in the order of facts.
	Missing []Fact
}

// Survive scores facts against the text of read (ReadText).
func Survive(facts []Fact, read []*transcript.Node) Survival {
	var hay strings.Builder
	for _, n := range read {
		ReadText(&hay, n)
	}
	frs, kinds, _ := Score(facts, NewMatcher(hay.String()), nil)
	out := Survival{Figures: &transcript.FactSurvival{Kinds: map[string]transcript.KindSurvival{}}}
	for _, k := range kinds {
		out.Figures.Kinds[string(k.Kind)] = transcript.KindSurvival{Kept: k.Kept, Total: k.Total, SurvivalPct: k.SurvivalPct}
		out.Figures.Kept += k.Kept
		out.Figures.Total += k.Total
	}
	out.Figures.SurvivalPct = pct(out.Figures.Kept, out.Figures.Total)
	for _, fr := range frs {
		if !fr.Kept {
			out.Missing = append(out.Missing, fr.Fact)
		}
	}
	return out
}

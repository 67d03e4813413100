package compact

import (
	"context"
	"fmt"
	"strings"

	"github.com/ctxfold/ctxfold/audit"
	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/summarize"
	"github.com/ctxfold/ctxfold/transcript"
)

// summarizeKeepingPins runs s and makes sure every pinned text is in the
// summary verbatim: a summarizer that did not quote one (a model may
// paraphrase) gets a "## Pinned" section appended with the rest.
func summarizeKeepingPins(ctx context.Context, s summarize.Summarizer, req summarize.Request) (string, error) {
	text, err := s.Summarize(ctx, req)
	if err != nil || len(req.Pinned) == 0 {
		return text, err
	}
	var missing []string
	for _, p := range req.Pinned {
		if !strings.Contains(text, p) {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		text = strings.TrimRight(text, "\n") + "\n\n## Pinned\n" + strings.Join(missing, "\n\n") + "\n"
	}
	return text, nil
}

// recoveredKinds are the fact kinds a re-compaction gives back to the
// summarizer: the ones docs/COMPACT.md §7's acceptance table measures,
// the user's requests and URLs.
var recoveredKinds = map[audit.Kind]bool{audit.KindRequest: true, audit.KindInstruction: true,
	audit.KindPath: true, audit.KindCommand: true, audit.KindError: true, audit.KindURL: true}

// recovered returns the facts the summarizer would not see otherwise,
// oldest first: those of the turns the previous summary covers that its
// text lacks, and those of the caller subtrees (sub-agents) of every
// covered turn, which are not on the spine the summarizer reads
// (audit.Extract, audit.Subtrees, audit.Matcher; docs/COMPACT.md §3).
func recovered(g *dag.Graph, plan *Plan, prevText string) ([]summarize.Fact, error) {
	s := g.S
	load := func(idx []int) ([]*transcript.Node, error) {
		out := make([]*transcript.Node, 0, len(idx))
		for _, i := range idx {
			n, err := s.Node(i)
			if err != nil {
				return nil, err
			}
			out = append(out, n)
		}
		return out, nil
	}
	var prevIdx, allIdx []int
	for k, id := range plan.CoversIDs {
		i, ok := s.Lookup(id)
		if !ok {
			return nil, fmt.Errorf("%s: covered node %q does not exist", s.Dir, id)
		}
		if k < len(plan.CoversIDs)-len(plan.NewIDs) {
			prevIdx = append(prevIdx, i)
		}
		allIdx = append(allIdx, i)
	}
	nodes, err := load(prevIdx)
	if err != nil {
		return nil, err
	}
	spawned, err := load(audit.Subtrees(g, allIdx))
	if err != nil {
		return nil, err
	}
	m := audit.NewMatcher(prevText)
	var out []summarize.Fact
	for _, f := range audit.ExtractKinds(nodes, spawned, recoveredKinds) {
		if !m.Has(f) {
			out = append(out, summarize.Fact{Kind: string(f.Kind), Text: f.Text})
		}
	}
	return out, nil
}

// firstRequest is the text of the first request the user typed among ids
// (transcript.Node.IsRealRequest), "" when there is none.
func firstRequest(s *transcript.Session, ids []string) (string, error) {
	for _, id := range ids {
		n, err := s.NodeByID(id)
		if err != nil {
			return "", err
		}
		if n.IsRealRequest() {
			if t := strings.TrimSpace(n.Content.PlainText()); t != "" {
				return t, nil
			}
		}
	}
	return "", nil
}

// pinnedTexts are the texts of the pinned nodes among the ids the new
// summary covers — the previous summary's included, so a pin survives
// every later compaction (ctxfold pin; docs/FORMAT.md §8) — for the
// summary to quote verbatim. A pinned node with no text of its own gives
// its tool calls' commands or its results' text instead.
//
// ids are the pinned ids among covers, in covers order: the snapshot
// Persist re-checks under the lock (a pin made while the summarizer ran
// is a changed source, never a pin silently left out).
func pinnedTexts(s *transcript.Session, covers []string) (texts, ids []string, err error) {
	ids, err = pinnedAmong(s, covers)
	if err != nil {
		return nil, nil, err
	}
	for _, id := range ids {
		n, err := s.NodeByID(id)
		if err != nil {
			return nil, nil, err
		}
		texts = append(texts, audit.PinnedTexts(n)...)
	}
	return texts, ids, nil
}

// pinnedAmong returns the ids of covers pinned now, in covers order.
func pinnedAmong(s *transcript.Session, covers []string) ([]string, error) {
	pins, err := s.Pins()
	if err != nil || len(pins) == 0 {
		return nil, err
	}
	var out []string
	for _, id := range covers {
		if pins[id] {
			out = append(out, id)
		}
	}
	return out, nil
}

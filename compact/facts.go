package compact

import (
	"context"
	"fmt"
	"strings"

	"github.com/ctxfold/ctxfold/audit"
	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/store"
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

// coveredFacts are the facts of every turn the new summary covers (the
// previous summary's included) and of their caller subtrees (sub-agents):
// what `ctxfold audit` measures the summary against (audit.Extract,
// audit.Subtrees). The summarizer is asked to carry them all
// (docs/COMPACT.md §3); the compaction reports how many it kept.
func coveredFacts(g *dag.Graph, plan *Plan) ([]audit.Fact, error) {
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
	var idx []int
	for _, id := range plan.CoversIDs {
		i, ok := s.Lookup(id)
		if !ok {
			return nil, fmt.Errorf("%s: covered node %q does not exist", s.Dir, id)
		}
		idx = append(idx, i)
	}
	nodes, err := load(idx)
	if err != nil {
		return nil, err
	}
	spawned, err := load(audit.Subtrees(g, idx))
	if err != nil {
		return nil, err
	}
	return audit.Extract(nodes, spawned), nil
}

// firstRequest is the text of the first request the user typed among ids
// (transcript.Node.IsRealRequest), "" when there is none.
func firstRequest(s *store.Session, ids []string) (string, error) {
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
func pinnedTexts(s *store.Session, covers []string) (texts, ids []string, err error) {
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
func pinnedAmong(s *store.Session, covers []string) ([]string, error) {
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

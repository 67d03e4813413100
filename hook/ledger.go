package hook

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ctxfold/ctxfold/audit"
	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/transcript"
)

// The lines that open and close the fact ledger a client's summariser is
// handed before it folds the conversation (docs/HOOKS.md, "The fact
// ledger"): each on a line of its own, so the fake providers of the live
// tests, and a person reading a request, find the block.
const (
	KeepOpen  = "<ctxfold-keep>"
	KeepClose = "</ctxfold-keep>"
)

// LedgerRun is one ledger handed to a client's summariser.
type LedgerRun struct {
	// Facts is how many facts (and pinned texts) the turns about to be
	// folded hold, Shown how many of them the ledger carries, in Tokens of
	// Budget.
	Facts  int `json:"facts"`
	Shown  int `json:"shown"`
	Tokens int `json:"tokens"`
	Budget int `json:"budget"`
	// At is when it was composed.
	At time.Time `json:"at"`
}

// ledgerNodes are the turns a compaction is about to fold: what the model
// reads now from HEAD after the active summary (the whole view when the
// session was never compacted), without the summary itself.
func ledgerNodes(g *dag.Graph) ([]int, error) {
	h := g.Head()
	if h < 0 {
		return nil, nil
	}
	view, sub := g.View(h, false)
	if sub.Summary < 0 {
		return view, nil
	}
	for k, i := range view {
		if i == sub.Summary {
			return view[k+1:], nil
		}
	}
	return view, nil
}

// ledger lists the facts of the turns about to be folded, as the block
// the client's summariser is told to keep: pinned texts first, then the
// facts in audit.Rank order (a request quoted whole from its node), cut to
// the budget.
func ledger(ctx context.Context, g *dag.Graph, dir string, in Input, opts Options) (*LedgerRun, string, error) {
	idx, err := ledgerNodes(g)
	if err != nil || len(idx) == 0 {
		return nil, "", err
	}
	load := func(is []int) ([]*transcript.Node, error) {
		out := make([]*transcript.Node, 0, len(is))
		for _, i := range is {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			n, err := g.S.Node(i)
			if err != nil {
				return nil, err
			}
			out = append(out, n)
		}
		return out, nil
	}
	nodes, err := load(idx)
	if err != nil {
		return nil, "", err
	}
	spawned, err := load(audit.Subtrees(g, idx))
	if err != nil {
		return nil, "", err
	}
	pins, err := g.S.Pins()
	if err != nil {
		return nil, "", err
	}
	var pinned []string
	for _, n := range append(append([]*transcript.Node(nil), nodes...), spawned...) {
		if pins[n.ID] {
			pinned = append(pinned, n.ID)
		}
	}
	items, err := itemsOf(g, pinned, audit.Rank(audit.Extract(nodes, spawned)))
	if err != nil {
		return nil, "", err
	}
	enc, budget := budgetFor(ctx, dir, in, opts)
	c, err := ComposeLedger(items, enc, budget)
	if err != nil {
		return nil, "", err
	}
	return &LedgerRun{Facts: len(items), Shown: c.Shown, Tokens: c.Tokens, Budget: budget}, c.Text, nil
}

// ComposeLedger writes items as the ledger block: one line telling the
// summariser to keep every line of it, the KeepOpen line, one line an
// item (its kind, then its text; continuation lines indented), the
// KeepClose line. Items are taken in order while the whole stays within
// budget tokens (counted with encoding enc); one that does not fit is
// skipped (a shorter later one may), and one quoted inside an earlier one
// is not repeated. Nothing is composed when no item fits.
func ComposeLedger(items []Item, enc string, budget int) (Composed, error) {
	if len(items) == 0 {
		return Composed{}, nil
	}
	head := fmt.Sprintf("ctxfold: below, between the %s and %s lines, are the facts of the turns you are summarising, "+
		"quoted from them (the user's requests and instructions as written, corrections, errors, commands, paths, identifiers, numbers). "+
		"Keep every line of it in your summary, word for word.\n%s\n", KeepOpen, KeepClose, KeepOpen)
	tail := KeepClose
	used, err := estimate.Text(enc, head+tail)
	if err != nil {
		return Composed{}, err
	}
	body, shown, covered, err := fitItems(items, enc, budget-used, func(it Item, text string) string {
		return fmt.Sprintf("- %s: %s\n", it.Label, text)
	})
	if err != nil {
		return Composed{}, err
	}
	if shown == 0 {
		return Composed{}, nil
	}
	text := head + body + tail
	tokens, err := estimate.Text(enc, text)
	return Composed{Text: text, Shown: covered, Tokens: tokens}, err
}

// itemsOf lists the texts of the pinned nodes, then facts (already
// ranked), a request quoted whole from its node rather than as the
// audit's clipped fact.
func itemsOf(g *dag.Graph, pinned []string, facts []audit.Fact) ([]Item, error) {
	var items []Item
	for _, id := range pinned {
		i, ok := g.Lookup(id)
		if !ok {
			continue
		}
		n, err := g.S.Node(i)
		if err != nil {
			return nil, err
		}
		for _, t := range audit.PinnedTexts(n) {
			items = append(items, Item{Label: "pinned", Text: t, NodeIDs: []string{id}})
		}
	}
	for _, f := range facts {
		it := Item{Label: label(f), Text: f.Text, NodeIDs: f.NodeIDs}
		if f.Kind == audit.KindRequest && len(f.NodeIDs) > 0 {
			if i, ok := g.Lookup(f.NodeIDs[0]); ok {
				n, err := g.S.Node(i)
				if err != nil {
					return nil, err
				}
				if t := strings.TrimSpace(n.Content.PlainText()); strings.Contains(oneLine(t), oneLine(f.Text)) {
					it.Text = t
				}
			}
		}
		items = append(items, it)
	}
	return items, nil
}

// handLedger records the compaction as pending, composes the ledger and
// prints it (Options.Emit) or leaves it in Result.Output; the state
// remembers the last ledger's figures.
func handLedger(ctx context.Context, g *dag.Graph, dir string, in Input, opts Options, st *state, sp string, res *Result) error {
	if err := st.save(sp); err != nil {
		return err
	}
	run, text, err := ledger(ctx, g, dir, in, opts)
	if err != nil || run == nil {
		return err
	}
	run.At = opts.Now().UTC()
	st.Ledger = run
	if err := st.save(sp); err != nil {
		return err
	}
	if text == "" {
		return nil
	}
	res.Ledger, res.LedgerText = run, text
	out, err := DialectOf(opts.Client).output(in, text)
	if err != nil {
		return err
	}
	if opts.Emit != nil {
		return opts.Emit(out)
	}
	res.Output = out
	return nil
}

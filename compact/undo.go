package compact

import (
	"context"
	"fmt"
	"time"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/store"
)

// UndoOptions say which compaction to take back (docs/COMPACT.md, "Taking a
// compaction back").
type UndoOptions struct {
	Dir   string
	Store store.WriteOptions
	// Summary, when set, is the summary to take back: the active one or
	// one it extends (then every compaction since goes too); "" is the
	// active summary.
	Summary string
	// Redo makes the summary the last undo took back active again.
	Redo bool
	Now  func() time.Time
}

// UndoResult is what an undo or redo changed.
type UndoResult struct {
	// Undone is the summary taken back (or, with Redo, made active again);
	// "" when there was nothing to do.
	Undone string `json:"undone"`
	// Active is the summary active now, "" when the branch renders raw.
	Active string `json:"active"`
	// Covered is how many turns the undone summary stood in for.
	Covered int  `json:"covered"`
	NoOp    bool `json:"no_op"`
	Redo    bool `json:"redo"`
	// Warnings are the store's (a repaired events tail …).
	Warnings []store.Warning `json:"-"`
}

// UndoError: the summary named is not one that can be taken back.
type UndoError struct {
	Dir, ID, Msg string
}

func (e *UndoError) Error() string { return fmt.Sprintf("%s: %s: %s", e.Dir, e.ID, e.Msg) }

// Undo takes a compaction back, append-only: the summary stops standing in
// for its turns (render, estimate, graph, audit and verify show the view
// before it: the summary it extended active again, else the raw branch),
// recorded as a summary_undone event; nodes.jsonl is not touched and the
// summary stays as a relic. With Redo, the last undo is taken back the same
// way. Nothing to do is a no-op.
func Undo(ctx context.Context, o UndoOptions) (UndoResult, error) {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	var res UndoResult
	warnings, err := store.Update(ctx, o.Dir, o.Store, func(tx *store.Tx) error {
		g, err := dag.Load(tx.Session())
		if err != nil {
			return err
		}
		at := now().UTC().Format(time.RFC3339Nano)
		if o.Redo {
			return redo(tx, g, at, &res)
		}
		target, err := undoTarget(g, o)
		if err != nil || target < 0 {
			res.NoOp = err == nil
			return err
		}
		prev := g.PreviousSummary(target)
		active := ""
		if prev >= 0 {
			active = g.ID(prev)
		}
		res = UndoResult{Undone: g.ID(target), Active: active, Covered: len(g.CoverIDs(target))}
		return tx.SetActiveSummary(active, store.UndoEvent{Type: store.EventSummaryUndone, At: at, SummaryID: res.Undone})
	})
	res.Warnings = warnings
	return res, err
}

// undoTarget is the summary to take back: the active one, or the one
// named, which must be the active summary or one it extends. -1: none is
// active (nothing to undo).
func undoTarget(g *dag.Graph, o UndoOptions) (int, error) {
	active := g.ActiveSummary()
	if o.Summary == "" {
		return active, nil
	}
	i, ok := g.Lookup(o.Summary)
	if !ok {
		return -1, &UndoError{Dir: o.Dir, ID: o.Summary, Msg: "no such node; expected the id of a summary node (ctxfold graph lists them)"}
	}
	if !g.S.IsSummary(i) {
		return -1, &UndoError{Dir: o.Dir, ID: o.Summary, Msg: "is not a summary node; expected the id of a summary node (ctxfold graph lists them)"}
	}
	for s := active; s >= 0; s = g.PreviousSummary(s) {
		if s == i {
			return i, nil
		}
	}
	return -1, &UndoError{Dir: o.Dir, ID: o.Summary, Msg: "is not the active summary nor one it extends: it stands in for nothing now"}
}

// redo makes the summary of the last undo active again, when the summary
// active now is the one that undo left.
func redo(tx *store.Tx, g *dag.Graph, at string, res *UndoResult) error {
	events, err := tx.Session().UndoEvents()
	if err != nil {
		return err
	}
	current := tx.Session().Meta.ActiveSummaryID
	for k := len(events) - 1; k >= 0; k-- {
		e := events[k]
		if e.Type != store.EventSummaryUndone || e.Active != current {
			continue
		}
		i, ok := g.Lookup(e.SummaryID)
		if !ok || !g.S.IsSummary(i) {
			break
		}
		*res = UndoResult{Undone: e.SummaryID, Active: e.SummaryID, Covered: len(g.CoverIDs(i)), Redo: true}
		return tx.SetActiveSummary(e.SummaryID, store.UndoEvent{Type: store.EventSummaryRedone, At: at, SummaryID: e.SummaryID})
	}
	res.NoOp, res.Redo = true, true
	return nil
}

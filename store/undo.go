package store

import (
	"encoding/json"
	"strings"

	"github.com/ctxfold/ctxfold/transcript"
)

// Undo events in events.jsonl (docs/FORMAT.md §10): taking a compaction
// back is recorded append-only beside the DAG, which it never touches —
// the summary node stays in nodes.jsonl as a relic. The event names the
// summary that stopped standing in for its turns and the one active after
// it ("" when the branch renders raw again); a redo names them the other
// way round. session.json's active_summary_id follows.
const (
	EventSummaryUndone = "summary_undone"
	EventSummaryRedone = "summary_redone"
)

// UndoEvent is one undo or redo record.
type UndoEvent struct {
	Type string `json:"type"`
	At   string `json:"at"`
	// SummaryID is the summary undone (or redone); Active the summary
	// active after the event, "" for none.
	SummaryID string `json:"summary_id"`
	Active    string `json:"active"`
}

// SetActiveSummary makes id the active summary ("" for none) and records
// why: the event first, so a crash between the two leaves a record of an
// undo whose meta change verify reports, never an undone compaction
// nobody can see. id must name a summary node.
func (tx *Tx) SetActiveSummary(id string, ev UndoEvent) error {
	m := tx.s.Meta
	if id == m.ActiveSummaryID {
		return nil
	}
	text := ""
	if id != "" {
		i, ok := tx.s.Lookup(id)
		if !ok || !tx.s.IsSummary(i) {
			return &ValidationError{NodeID: id, Msg: "is not a summary node; the active summary is unchanged"}
		}
		n, err := tx.s.Node(i)
		if err != nil {
			return err
		}
		text = strings.TrimPrefix(n.Content.PlainText(), transcript.SummaryPrefix)
	}
	ev.Active = id
	if err := tx.AppendEvent(ev); err != nil {
		return err
	}
	m.ActiveSummaryID, m.ActiveSummaryText = id, text
	return tx.commitMeta(m)
}

// UndoEvents returns the session's undo and redo records in file order.
func (s *Session) UndoEvents() ([]UndoEvent, error) {
	var out []UndoEvent
	_, err := s.ReadEvents(func(ev EventLine) error {
		var e UndoEvent
		if json.Unmarshal(ev.Raw, &e) == nil && (e.Type == EventSummaryUndone || e.Type == EventSummaryRedone) {
			out = append(out, e)
		}
		return nil
	})
	return out, err
}

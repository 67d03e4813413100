package store

import (
	"encoding/json"
	"fmt"
)

// Pin events in events.jsonl (docs/FORMAT.md §9): pinning is recorded
// append-only beside the DAG, which it never touches; the pinned set is
// the fold of these events in file order.
const (
	EventPinned   = "node_pinned"
	EventUnpinned = "node_unpinned"
)

// PinEvent is one pin or unpin record.
type PinEvent struct {
	Type string   `json:"type"`
	At   string   `json:"at"`
	IDs  []string `json:"ids"`
}

// Pins returns the ids pinned now: every node_pinned id not unpinned by a
// later node_unpinned event. An id that no longer names a node is kept
// out (an event cannot pin what the session does not hold).
func (s *Session) Pins() (map[string]bool, error) {
	pins := map[string]bool{}
	_, err := s.ReadEvents(func(ev EventLine) error {
		var e PinEvent
		if json.Unmarshal(ev.Raw, &e) != nil || (e.Type != EventPinned && e.Type != EventUnpinned) {
			return nil
		}
		for _, id := range e.IDs {
			if e.Type == EventPinned {
				pins[id] = true
			} else {
				delete(pins, id)
			}
		}
		return nil
	})
	for id := range pins {
		if _, ok := s.Lookup(id); !ok {
			delete(pins, id)
		}
	}
	return pins, err
}

// PinError: an id to pin names no node, or names a summary (a summary is
// replaced by the next one; pin the turn instead).
type PinError struct {
	Dir, ID, Msg string
}

func (e *PinError) Error() string { return fmt.Sprintf("%s: node %q: %s", e.Dir, e.ID, e.Msg) }

// Pin appends one pin (pinned) or unpin event for ids, after checking that
// each names a node that is not a summary. Nothing is written when one
// does not.
func (tx *Tx) Pin(ids []string, pinned bool, at string) error {
	s := tx.Session()
	for _, id := range ids {
		i, ok := s.Lookup(id)
		if !ok {
			return &PinError{Dir: tx.dir, ID: id, Msg: "no such node"}
		}
		if s.IsSummary(i) {
			return &PinError{Dir: tx.dir, ID: id, Msg: "is a summary node; pin the turns it covers"}
		}
	}
	typ := EventPinned
	if !pinned {
		typ = EventUnpinned
	}
	return tx.AppendEvent(PinEvent{Type: typ, At: at, IDs: ids})
}

package verify

import (
	"encoding/json"
	"errors"

	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// checkEvents: every compaction_finished event that is not a no-op names an
// existing summary whose coverage count matches summarised_count
// (transcript.CompactionEvent; the report carries the coverage count the
// event records, docs/COMPACT.md §5).
func (c *checker) checkEvents() error {
	s := c.s
	path := s.EventsPath()
	// open is the line of a compaction_started not closed yet by a
	// compaction_finished or compaction_failed (docs/COMPACT.md: every
	// started event is closed by one of them, a no-op known before the
	// summarizer call writes no started event).
	open := 0
	recorded := map[string]bool{}
	interrupted := func() {
		if open == 0 {
			return
		}
		f := Finding{Code: CodeCompactionInterrupted, Severity: Warning, Category: Events, File: path, Line: open,
			Msg: "compaction_started has no compaction_finished or compaction_failed after it: the compaction was interrupted"}
		c.buf = append(c.buf, f)
		open = 0
	}
	warnings, err := s.ReadEvents(func(ev store.EventLine) error {
		var head struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(ev.Raw, &head)
		switch head.Type {
		case transcript.EventCompactionStarted:
			interrupted()
			open = ev.Line
		case transcript.EventCompactionFinished, transcript.EventCompactionFailed:
			open = 0
		}
		// Every event is decoded as a compaction record, as verify always
		// has: a field of the wrong JSON type is malformed whatever the
		// event's type.
		var e transcript.CompactionEvent
		if err := json.Unmarshal(ev.Raw, &e); err != nil {
			c.add(Events, Error, CodeEventMalformed, -1, path, ev.Line, "event does not decode: %v", err)
			return nil
		}
		if head.Type == store.EventSummaryUndone || head.Type == store.EventSummaryRedone {
			c.checkUndo(path, ev)
			return nil
		}
		if e.Type != transcript.EventCompactionFinished || e.NoOp {
			return nil
		}
		recorded[e.SummaryID] = true
		c.checkFinished(path, ev.Line, &e)
		return nil
	})
	if open > 0 {
		// Killed after the summary was committed but before its
		// compaction_finished: say so, the summary itself is sound.
		if a := s.Meta.ActiveSummaryID; a != "" && !recorded[a] {
			c.buf = append(c.buf, Finding{Code: CodeCompactionInterrupted, Severity: Warning, Category: Events, NodeID: a, File: path, Line: open,
				Msg: "compaction_started has no compaction_finished or compaction_failed after it: the compaction was interrupted after committing its summary, which no event records"})
			open = 0
		}
		interrupted()
	}
	for _, w := range warnings {
		c.buf = append(c.buf, Finding{Code: CodeInterruptedWrite, Severity: Warning, Category: Events, File: w.File, Line: w.Line, Msg: w.Msg})
	}
	var perr *transcript.ParseError
	if errors.As(err, &perr) && perr.Err == nil {
		// A line that is not an event is a finding; a file that cannot be
		// read at all is not something verify can judge (exit 2).
		c.buf = append(c.buf, Finding{Code: CodeEventMalformed, Severity: Error, Category: Events, File: perr.File, Line: perr.Line, Msg: perr.Msg})
		return nil
	}
	return err
}

// checkFinished: a compaction_finished that is not a no-op names an
// existing summary, and its summarised_count is that summary's coverage.
func (c *checker) checkFinished(path string, line int, e *transcript.CompactionEvent) {
	s := c.s
	j, ok := s.Lookup(e.SummaryID)
	if e.SummaryID == "" || !ok || !s.IsSummary(j) {
		what := "names no summary_id"
		if e.SummaryID != "" && !ok {
			what = "names summary " + quote(e.SummaryID) + ", which does not exist"
		} else if e.SummaryID != "" {
			what = "names " + quote(e.SummaryID) + ", which is not a summary node"
		}
		f := Finding{Code: CodeEventSummaryMissing, Severity: Error, Category: Events, NodeID: e.SummaryID, File: path, Line: line,
			Msg: "compaction_finished (not a no-op) " + what}
		c.buf = append(c.buf, f)
		return
	}
	covers := s.Ref(j).CoverCount()
	switch {
	case e.SummarisedCount == nil:
		c.add(Events, Error, CodeEventCountMismatch, j, path, line, "compaction_finished has no summarised_count; the summary covers %d ids", covers)
	case *e.SummarisedCount != covers:
		c.add(Events, Error, CodeEventCountMismatch, j, path, line, "compaction_finished reports summarised_count %d but the summary covers %d ids", *e.SummarisedCount, covers)
	}
}

// checkUndo: an undo or redo record (docs/FORMAT.md §10) names a summary
// node, and the summary it left active is one too (or none).
func (c *checker) checkUndo(path string, ev store.EventLine) {
	var u store.UndoEvent
	if err := json.Unmarshal(ev.Raw, &u); err != nil {
		c.add(Events, Error, CodeEventMalformed, -1, path, ev.Line, "event does not decode: %v", err)
		return
	}
	for k, id := range []string{u.SummaryID, u.Active} {
		if k == 1 && id == "" {
			continue // the branch renders raw after it
		}
		if i, ok := c.s.Lookup(id); !ok || !c.s.IsSummary(i) {
			c.add(Events, Error, CodeUndoSummaryMissing, -1, path, ev.Line, "%s names %q, which is not a summary node of this session", u.Type, id)
		}
	}
}

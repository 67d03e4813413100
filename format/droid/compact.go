package droid

// This file imports Droid's own compaction (a compaction_state record) as a
// summary node, as the other importers import their clients' compactions.

import (
	"fmt"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// Droid sends an llm_summary compaction as one user message in place of the
// messages it removed: summaryFrame around the summary, then the system
// information it recorded (systemInfoText) as a second text block
// (docs/INTEROP-droid.md).
const (
	summaryOpen  = "A previous instance of Droid has summarized the conversation thus far as follows:\n\n<summary>\n"
	summaryClose = "\n</summary>\n\nIMPORTANT: This summary was created by a previous instance of Droid. Files referenced in the summary may not be available until you explicitly view them again."
)

// compaction imports a compaction_state: a summary node covering the
// removedCount messages Droid removed, which end at its anchor message (the
// last one removed: Droid 0.215 removes the first removedCount messages of
// what it sends and names the last of them, anchorMessage.index being
// removedCount-1; recorded with a compaction of 9 messages,
// testdata/hook/droid); the messages after it are the tail it keeps. After
// an earlier compaction, what Droid sends starts with the earlier
// summary's message, which carries that compaction's anchor id: a
// compaction that removes only it names that anchor again, and one that
// removes more names a message of the kept tail; either way the new
// summary covers everything from the earlier summary's first turn to its
// anchor. With an anchor not on the path (never written), the messages
// are counted on from the earlier summary's turns.
func (s *session) compaction(r record, lines *input.Lines) error {
	if r.RemovedCount == nil || *r.RemovedCount < 0 {
		return lines.Errorf(`compaction_state %s: "removedCount" must be a number of messages, 0 or more`, r.ID)
	}
	path := s.path()
	at := map[string]int{}
	for i, id := range path {
		at[id] = i
	}
	removed := *r.RemovedCount
	prevStart, prevEnd, hasPrev := 0, 0, false
	if len(s.covers) > 0 {
		// The earlier summary counts only where it covers this path.
		first, ok1 := at[s.covers[0]]
		last, ok2 := at[s.covers[len(s.covers)-1]]
		prevStart, prevEnd, hasPrev = first, last+1, ok1 && ok2
	}
	start, end := 0, removed
	if s.manual {
		// Droid's manual compaction removes every message it loaded of the
		// parent session: all of the path so far.
		s.manual, start, end = false, 0, len(path)
	} else if r.AnchorMessage != nil {
		if i, ok := at[s.node[r.AnchorMessage.ID]]; ok && s.node[r.AnchorMessage.ID] != "" {
			start, end = i+1-removed, i+1
		} else if hasPrev {
			start, end = prevStart, prevEnd+removed-1
		}
	} else if hasPrev {
		start, end = prevStart, prevEnd+removed-1
	}
	if hasPrev {
		start, end = min(start, prevStart), max(end, prevEnd)
	}
	if start < 0 || end > len(path) {
		s.sink.Warn(s.file, lines.Line, fmt.Sprintf("compaction_state %s: removedCount %d is more than the %d messages up to its anchor; it covers them all", r.ID, *r.RemovedCount, min(end, len(path))))
		start, end = max(start, 0), min(end, len(path))
	}
	if end <= start {
		s.sink.Count("compaction_state", transcript.OutcomeSkipped, "it removed no message imported before it")
		return nil
	}
	covers := append([]string(nil), path[start:end]...)
	id := transcript.SummaryIDPrefix + input.ID(r.ID, "compaction")
	for i := 2; s.used[id]; i++ {
		id = fmt.Sprintf("%s%s-%d", transcript.SummaryIDPrefix, r.ID, i)
	}
	s.used[id] = true
	n := transcript.Node{ID: id, Role: transcript.SummaryRole, Name: transcript.SummaryName,
		Predecessor: s.pred[covers[0]], CreatedAt: r.Timestamp, Content: summaryContent(r)}
	n.SetMeta("compaction", true)
	n.SetMeta("covers_ids", covers)
	n.SetMeta("source", "droid compaction_state")
	n.SetMeta("droid_removed_count", *r.RemovedCount)
	if r.SummaryKind != "" {
		n.SetMeta("droid_summary_kind", r.SummaryKind)
	}
	if err := s.sink.Node(n); err != nil {
		return err
	}
	s.summary, s.covers = n.ID, covers
	s.sink.Count("compaction_state", transcript.OutcomeImported, "")
	return nil
}

// path is the path of message nodes from the root to the last message.
func (s *session) path() []string {
	var path []string
	seen := map[string]bool{}
	for id := s.last; id != "" && !seen[id]; id = s.pred[id] {
		seen[id] = true
		path = append(path, id)
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path
}

// summaryContent is what Droid sends for the summary: the framed summary
// (an llm_summary; another kind's text as recorded) and its system
// information, after the summary prefix every summary node starts with.
func summaryContent(r record) transcript.Content {
	text := r.SummaryText
	if r.SummaryKind == "" || r.SummaryKind == "llm_summary" {
		text = summaryOpen + text + summaryClose
	}
	if r.SystemInfoText == "" {
		return transcript.TextContent(transcript.SummaryPrefix + text)
	}
	return transcript.Content{IsBlocks: true, Blocks: []transcript.Block{
		{Type: transcript.BlockText, Text: transcript.SummaryPrefix + text},
		{Type: transcript.BlockText, Text: r.SystemInfoText},
	}}
}

package copilot

// This file turns the client's own compaction into a summary node
// (docs/FORMAT.md §4). Copilot CLI summarises in the background from
// session.compaction_start on; what the conversation gained meanwhile
// stays. After it, the client sends the system prompt, one user message
// (the user messages it replaced and the summary, compactionMessage) and
// the kept tail.

import (
	"strings"

	"github.com/ctxfold/ctxfold/transcript"
)

func (st *state) compactionStart(line int, ev *event) error {
	var d struct {
		CompactionAttemptID string `json:"compactionAttemptId"`
	}
	if err := st.data(line, ev, &d); err != nil {
		return err
	}
	if _, open := st.covers[d.CompactionAttemptID]; open {
		// A start of the same attempt again (a log without attempt ids
		// names every one ""): the one before never completed.
		countUnfinished(st)
	}
	st.covers[d.CompactionAttemptID] = append([]string(nil), st.order...)
	return nil
}

// countUnfinished counts a session.compaction_start no
// session.compaction_complete took (it is counted when one does).
func countUnfinished(st *state) {
	st.sink.Count("session.compaction_start", transcript.OutcomeSkipped,
		"a compaction the log never completes (no session.compaction_complete after it): the client kept its history")
}

type compaction struct {
	Success             bool   `json:"success"`
	Outcome             string `json:"outcome"`
	CompactionAttemptID string `json:"compactionAttemptId"`
	SummaryContent      string `json:"summaryContent"`
	Trigger             string `json:"trigger"`
	PreCompactionTokens int64  `json:"preCompactionTokens"`
	PostCompactionToks  int64  `json:"postCompactionTokens"`
	CheckpointNumber    int64  `json:"checkpointNumber"`
}

func (st *state) compactionComplete(line int, ev *event) error {
	var d compaction
	if err := st.data(line, ev, &d); err != nil {
		return err
	}
	covers, started := st.covers[d.CompactionAttemptID]
	delete(st.covers, d.CompactionAttemptID)
	if started {
		st.sink.Count("session.compaction_start", transcript.OutcomeMerged, "what the compaction that follows replaces: its summary node's covers_ids")
	}
	switch {
	case !d.Success || d.SummaryContent == "":
		st.sink.Count(ev.Type, transcript.OutcomeSkipped, "a compaction that did not apply ("+or(d.Outcome, "failed")+"): the client kept its history")
		return nil
	case !started:
		st.warn(line, "session.compaction_complete "+ev.ID+": no session.compaction_start with its compactionAttemptId; it covers the whole history")
		covers = append([]string(nil), st.order...)
	}
	if len(covers) == 0 {
		st.sink.Count(ev.Type, transcript.OutcomeSkipped, "a compaction of an empty history")
		return nil
	}
	n := transcript.Node{ID: "summary_" + ev.ID, Predecessor: st.sysID, Role: transcript.RoleUser, Name: "context/summary",
		Content: transcript.TextContent(transcript.SummaryPrefix + compactionMessage(covers, st.users, d.SummaryContent)), CreatedAt: ev.Timestamp}
	n.SetMeta("compaction", true)
	n.SetMeta("covers_ids", covers)
	n.SetMeta("source", "copilot session.compaction_complete")
	n.SetMeta("copilot_compaction", map[string]any{"trigger": d.Trigger, "pre_tokens": d.PreCompactionTokens,
		"post_tokens": d.PostCompactionToks, "checkpoint": d.CheckpointNumber, "summary": d.SummaryContent})
	if err := st.sink.Node(n); err != nil {
		return err
	}
	st.sink.Count(ev.Type, transcript.OutcomeImported, "")
	return nil
}

// compactionMessage is the user message Copilot CLI 1.0.102 sends in
// place of the history it compacted: a notice, the user messages it
// replaced as the user typed them, and the summary (read from its
// requests: testdata/interop/copilot).
func compactionMessage(covers []string, users map[string]string, summary string) string {
	var b strings.Builder
	b.WriteString("Some of the conversation history has been summarized to free up context.\n\n")
	first := true
	for _, id := range covers {
		text, ok := users[id]
		if !ok {
			continue
		}
		if first {
			b.WriteString("You were originally given instructions from a user over one or more turns. Here were the user messages:\n")
			first = false
		}
		b.WriteString("<user_message>\n" + text + "\n</user_message>\n")
	}
	if !first {
		b.WriteString("\n")
	}
	b.WriteString("Here is a summary of the prior context:\n<summary>\n" + summary + "\n</summary>\n")
	return b.String()
}

func or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

package transcript

import (
	"encoding/json"
	"fmt"
)

// Compaction events in events.jsonl (docs/COMPACT.md, "Events"): compact
// writes them, verify checks them against the summaries, export reads the
// figures of the active summary back.
const (
	EventCompactionStarted  = "compaction_started"
	EventCompactionFinished = "compaction_finished"
	EventCompactionFailed   = "compaction_failed"
)

// CompactionEvent is one compaction record. Which fields a record carries
// depends on its kind (Type, and NoOp for compaction_finished); MarshalJSON
// writes exactly that key set, so a zero that is meaningful (a no-op's
// summarised_count 0, a fast run's duration_ms 0) is written while fields
// of another kind are not.
type CompactionEvent struct {
	Type string `json:"type"`
	// At is RFC 3339 from the compaction's clock.
	At         string `json:"at"`
	Summarizer string `json:"summarizer"`
	// TokensBefore is the rendered total before (started, finished).
	TokensBefore int `json:"tokens_before"`
	// Target and Covering are the plan's retained-token target and the
	// number of ids the summary will cover (started).
	Target   int `json:"target"`
	Covering int `json:"covering"`
	// NoOp, Reason: a finished compaction that wrote no summary and why.
	NoOp   bool   `json:"no_op"`
	Reason string `json:"reason"`
	// SummaryID and the figures below describe the summary a finished,
	// non-no-op compaction wrote. SummarisedCount is nil when the record
	// has no summarised_count (verify reports that).
	SummaryID        string `json:"summary_id"`
	SummarisedCount  *int   `json:"summarised_count"`
	TokensAfter      int    `json:"tokens_after"`
	RawHistoryTokens int    `json:"raw_history_tokens"`
	SummaryTokens    int    `json:"summary_tokens"`
	CompactedTurns   int    `json:"compacted_turns"`
	NewlyCovered     int    `json:"newly_covered"`
	// Survival is how many of the covered turns' facts the summary's view
	// keeps, per kind (finished with a summary; docs/COMPACT.md §6). nil
	// in records written before it existed.
	Survival *FactSurvival `json:"survival,omitempty"`
	// Error is why a compaction failed (failed).
	Error      string `json:"error"`
	DurationMS int64  `json:"duration_ms"`
}

// The key set of each kind. Fields are in key order: the records were
// first written from maps, whose keys encoding/json sorts, and these
// shapes keep events.jsonl byte-identical to them.
type (
	startedEvent struct {
		At           string `json:"at"`
		Covering     int    `json:"covering"`
		Summarizer   string `json:"summarizer"`
		Target       int    `json:"target"`
		TokensBefore int    `json:"tokens_before"`
		Type         string `json:"type"`
	}
	noOpEvent struct {
		At              string `json:"at"`
		DurationMS      int64  `json:"duration_ms"`
		NoOp            bool   `json:"no_op"`
		Reason          string `json:"reason"`
		SummarisedCount int    `json:"summarised_count"`
		Summarizer      string `json:"summarizer"`
		TokensAfter     int    `json:"tokens_after"`
		TokensBefore    int    `json:"tokens_before"`
		Type            string `json:"type"`
	}
	finishedEvent struct {
		At               string        `json:"at"`
		CompactedTurns   int           `json:"compacted_turns"`
		DurationMS       int64         `json:"duration_ms"`
		NewlyCovered     int           `json:"newly_covered"`
		NoOp             bool          `json:"no_op"`
		RawHistoryTokens int           `json:"raw_history_tokens"`
		SummarisedCount  int           `json:"summarised_count"`
		Summarizer       string        `json:"summarizer"`
		SummaryID        string        `json:"summary_id"`
		SummaryTokens    int           `json:"summary_tokens"`
		Survival         *FactSurvival `json:"survival,omitempty"`
		TokensAfter      int           `json:"tokens_after"`
		TokensBefore     int           `json:"tokens_before"`
		Type             string        `json:"type"`
	}
	failedEvent struct {
		At         string `json:"at"`
		DurationMS int64  `json:"duration_ms"`
		Error      string `json:"error"`
		Summarizer string `json:"summarizer"`
		Type       string `json:"type"`
	}
)

// MarshalJSON writes the key set of e's kind.
func (e CompactionEvent) MarshalJSON() ([]byte, error) {
	count := 0
	if e.SummarisedCount != nil {
		count = *e.SummarisedCount
	}
	switch {
	case e.Type == EventCompactionStarted:
		return json.Marshal(startedEvent{At: e.At, Covering: e.Covering, Summarizer: e.Summarizer,
			Target: e.Target, TokensBefore: e.TokensBefore, Type: e.Type})
	case e.Type == EventCompactionFinished && e.NoOp:
		return json.Marshal(noOpEvent{At: e.At, DurationMS: e.DurationMS, NoOp: true, Reason: e.Reason,
			SummarisedCount: count, Summarizer: e.Summarizer, TokensAfter: e.TokensAfter,
			TokensBefore: e.TokensBefore, Type: e.Type})
	case e.Type == EventCompactionFinished:
		return json.Marshal(finishedEvent{At: e.At, CompactedTurns: e.CompactedTurns, DurationMS: e.DurationMS,
			NewlyCovered: e.NewlyCovered, RawHistoryTokens: e.RawHistoryTokens, SummarisedCount: count,
			Summarizer: e.Summarizer, SummaryID: e.SummaryID, SummaryTokens: e.SummaryTokens, Survival: e.Survival,
			TokensAfter: e.TokensAfter, TokensBefore: e.TokensBefore, Type: e.Type})
	case e.Type == EventCompactionFailed:
		return json.Marshal(failedEvent{At: e.At, DurationMS: e.DurationMS, Error: e.Error,
			Summarizer: e.Summarizer, Type: e.Type})
	}
	return nil, fmt.Errorf("%q is not a compaction event type", e.Type)
}

// FactSurvival is the survival of a summary's facts, overall and per kind
// (audit's figures; the kinds are docs/COMPACT.md §6's). Kinds holds every
// kind, empty ones included (100%).
type FactSurvival struct {
	Kept        int                     `json:"kept"`
	Kinds       map[string]KindSurvival `json:"kinds"`
	SurvivalPct float64                 `json:"survival_pct"`
	Total       int                     `json:"total"`
}

// KindSurvival is one kind's kept/total.
type KindSurvival struct {
	Kept        int     `json:"kept"`
	SurvivalPct float64 `json:"survival_pct"`
	Total       int     `json:"total"`
}

// MinKindPct is the lowest survival of a kind that has facts (100 when
// none has): the figure --min-survival gates on.
func (f *FactSurvival) MinKindPct() float64 {
	low := 100.0
	for _, k := range f.Kinds {
		if k.Total > 0 && k.SurvivalPct < low {
			low = k.SurvivalPct
		}
	}
	return low
}

package openai

import (
	"regexp"
	"strings"
)

// The lines that open and close the fact ledger ctxfold's hook hands a
// client's summariser (hook.KeepOpen, hook.KeepClose: docs/HOOKS.md, "The
// fact ledger"), each on a line of its own.
const (
	keepOpen  = "<ctxfold-keep>"
	keepClose = "</ctxfold-keep>"
)

// summaryOf is the fake's answer to a compaction request: SummaryText,
// which keeps none of the conversation's facts, then — as a summariser
// told to keep every line of a ctxfold-keep block does — the lines of
// each such block the request holds, word for word.
func summaryOf(request string) string {
	kept := keptLines(request)
	if len(kept) == 0 {
		return SummaryText
	}
	return SummaryText + "\n\nFacts to keep:\n" + strings.Join(kept, "\n")
}

// keptLines are the lines between a keepOpen line and the next keepClose
// line, for every block in text.
func keptLines(text string) []string {
	var out []string
	in := false
	for _, l := range strings.Split(text, "\n") {
		switch strings.TrimSpace(l) {
		case keepOpen:
			in = true
			continue
		case keepClose:
			in = false
			continue
		}
		if in {
			out = append(out, l)
		}
	}
	return out
}

// reInjection starts the context ctxfold's hook adds after a client's
// compaction (hook.Compose), which quotes the user's requests, markers
// included.
var reInjection = regexp.MustCompile(`^ctxfold: [\w .-]+'s compaction summary dropped \d+ of the \d+ facts`)

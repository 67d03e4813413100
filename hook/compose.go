package hook

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ctxfold/ctxfold/audit"
	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/estimate"
)

// Item is one line of the injected context: a dropped fact or a pinned
// node's text, with the nodes it came from.
type Item struct {
	Label   string
	Text    string
	NodeIDs []string
}

// maxItemRunes bounds one item: a request is quoted verbatim up to it.
const maxItemRunes = 2000

// dropped lists what the audited summary lost, most valuable first: the
// text of pinned nodes it no longer carries verbatim (the user asked for
// them explicitly), then the missing facts in audit.Rank order, a request
// quoted whole from its node rather than as the audit's clipped fact.
func dropped(g *dag.Graph, r *audit.Result) ([]Item, error) {
	var pinned []string
	for _, p := range r.PinnedNodes {
		if !p.Kept {
			pinned = append(pinned, p.ID)
		}
	}
	var missing []audit.Fact
	for _, f := range r.Facts {
		if !f.Kept {
			missing = append(missing, f.Fact)
		}
	}
	return itemsOf(g, pinned, audit.Rank(missing))
}

func label(f audit.Fact) string {
	if audit.IsCorrection(f) {
		return "correction"
	}
	return string(f.Kind)
}

// ComposeOptions configure Compose.
type ComposeOptions struct {
	// Encoding counts tokens (estimate.Text); Budget caps the result.
	Encoding string
	Budget   int
	// Total and Missing are the audit's figures for the first line.
	Total, Missing int
	// Client names the client ("Claude Code"); Transcript the file, for
	// the recall hint.
	Client     string
	Transcript string
}

// Composed is the injected context.
type Composed struct {
	Text string
	// Shown is how many items it carries (an item quoted inside an
	// earlier one counts), Tokens its size.
	Shown  int
	Tokens int
}

// Compose writes items under a one-line header, in order, while the whole
// stays within the budget: an item that does not fit is skipped (a shorter
// later one may), and an item already quoted inside an earlier one (a path
// of a request shown verbatim) is not repeated. Nothing is composed when
// there are no items.
func Compose(items []Item, o ComposeOptions) (Composed, error) {
	if len(items) == 0 {
		return Composed{}, nil
	}
	client := o.Client
	if client == "" {
		client = "The client"
	}
	header := func(shown int) string {
		rest := "the most important follow"
		if shown == len(items) {
			rest = "they follow"
		}
		return fmt.Sprintf("ctxfold: %s's compaction summary dropped %d of the %d facts of the turns it folded; "+
			"%s, quoted from those turns (node ids in brackets). Recall more with the ctxfold MCP tools "+
			"search_history and read_turns (or `ctxfold search %s`).", client, o.Missing, o.Total, rest, o.Transcript)
	}
	used, err := estimate.Text(o.Encoding, header(len(items))+"\n")
	if err != nil {
		return Composed{}, err
	}
	body, shown, covered, err := fitItems(items, o.Encoding, o.Budget-used, func(it Item, text string) string {
		return fmt.Sprintf("- %s [%s]: %s\n", it.Label, idList(it.NodeIDs), text)
	})
	if err != nil {
		return Composed{}, err
	}
	if shown == 0 {
		return Composed{}, nil
	}
	text := header(covered) + "\n" + strings.TrimRight(body, "\n")
	tokens, err := estimate.Text(o.Encoding, text)
	return Composed{Text: text, Shown: covered, Tokens: tokens}, err
}

// fitItems writes items a line each (line formats one, its text clipped)
// while their tokens (counted with encoding enc) stay within budget: an
// item that does not fit is skipped (a shorter later one may), and one
// already quoted inside an earlier one (a path of a request shown
// verbatim) is not repeated but counts as covered. shown is how many
// lines it wrote.
func fitItems(items []Item, enc string, budget int, line func(it Item, text string) string) (body string, shown, covered int, err error) {
	var b strings.Builder
	used := 0
	for _, it := range items {
		text := clipRunes(oneLineIfShort(it.Text), maxItemRunes)
		if text == "" || strings.Contains(oneLine(b.String()), oneLine(it.Text)) {
			covered++
			continue
		}
		l := line(it, text)
		n, err := estimate.Text(enc, l)
		if err != nil {
			return "", 0, 0, err
		}
		if used+n > budget {
			continue
		}
		used += n
		b.WriteString(l)
		shown++
		covered++
	}
	return b.String(), shown, covered, nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// oneLineIfShort keeps a multi-line text's lines (a request the user
// wrote over several lines) but indents them under the item.
func oneLineIfShort(s string) string {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "\n") {
		return s
	}
	return strings.ReplaceAll(s, "\n", "\n  ")
}

func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// maxIDs is how many node ids an item names: a fact repeated all over a
// long session would otherwise carry thousands.
const maxIDs = 3

func idList(ids []string) string {
	if len(ids) <= maxIDs {
		return strings.Join(ids, ",")
	}
	return strings.Join(ids[:maxIDs], ",") + fmt.Sprintf(",+%d more", len(ids)-maxIDs)
}

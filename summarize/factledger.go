package summarize

import (
	"sort"
	"strconv"
	"strings"

	"github.com/ctxfold/ctxfold/audit"
	"github.com/ctxfold/ctxfold/estimate"
)

// Fact sections: one per kind of audit.Fact, in audit.Rank's order
// (docs/COMPACT.md §3). Each item is one fact on one line with the ids of
// the nodes it came from.
const (
	secFactRequests = "User requests"
	secFactConstr   = "Constraints and user preferences"
	secFactErrors   = "Errors and failing tests"
	secFactCommands = "Commands run"
	secFactChanged  = "Files changed"
	secFactModified = "Files modified"
	secFactPaths    = "Files and paths"
	secFactURLs     = "URLs"
	secFactIdents   = "Identifiers"
	secFactNumbers  = "Numbers"
	// secLedger is the section Ledger appends to a model's summary: the
	// facts it dropped.
	secLedger = "Fact ledger"
)

// factSections are the fact sections in the order they are written.
var factSections = []string{secFactRequests, secFactConstr, secFactErrors, secFactChanged, secFactCommands,
	secFactModified, secFactPaths, secFactURLs, secFactIdents, secFactNumbers, secLedger}

// maxLineIDs is how many source ids a fact line names; more are "+N".
const maxLineIDs = 3

// IDShortener maps node ids to the shortest prefix of at least 8
// characters that no other id of the set shares (as git abbreviates
// hashes); an id of 8 characters or fewer stays whole.
type IDShortener map[string]string

// NewIDShortener prepares the short forms of every id the facts name.
func NewIDShortener(facts []audit.Fact) IDShortener {
	set := map[string]bool{}
	for _, f := range facts {
		for _, id := range f.NodeIDs {
			set[id] = true
		}
	}
	ids := make([]string, 0, len(set))
	for id := range set {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	lcp := func(a, b string) int {
		n := 0
		for n < len(a) && n < len(b) && a[n] == b[n] {
			n++
		}
		return n
	}
	out := IDShortener{}
	for i, id := range ids {
		need := 8
		if i > 0 {
			need = max(need, lcp(id, ids[i-1])+1)
		}
		if i+1 < len(ids) {
			need = max(need, lcp(id, ids[i+1])+1)
		}
		if need >= len(id) {
			out[id] = id
		} else {
			out[id] = id[:need]
		}
	}
	return out
}

// Short is id's short form (id itself when unknown).
func (s IDShortener) Short(id string) string {
	if v, ok := s[id]; ok {
		return v
	}
	return id
}

// FactLine is one fact as a summary lists it: its text (an instruction in
// double quotes, as the user's words) and, in brackets, the short ids of
// the nodes it came from.
func FactLine(f audit.Fact, ids IDShortener) string {
	text := strings.ReplaceAll(f.Text, "\n", " ")
	if f.Kind == audit.KindInstruction {
		text = quote(text)
	}
	var b strings.Builder
	b.WriteString(text)
	if len(f.NodeIDs) > 0 {
		b.WriteString(" [")
		for k, id := range f.NodeIDs {
			if k == maxLineIDs {
				b.WriteString(" +" + strconv.Itoa(len(f.NodeIDs)-maxLineIDs))
				break
			}
			if k > 0 {
				b.WriteString(" ")
			}
			b.WriteString(ids.Short(id))
		}
		b.WriteString("]")
	}
	return b.String()
}

// stripFactIDs removes the " [ids]" a fact line ends with.
func stripFactIDs(line string) string {
	if strings.HasSuffix(line, "]") {
		if i := strings.LastIndex(line, " ["); i > 0 {
			return line[:i]
		}
	}
	return line
}

// factSection is the section a fact is listed under; modified are the
// paths a writing tool named.
func factSection(f audit.Fact, modified map[string]bool) string {
	switch f.Kind {
	case audit.KindRequest:
		return secFactRequests
	case audit.KindInstruction:
		return secFactConstr
	case audit.KindError:
		return secFactErrors
	case audit.KindCommand:
		return secFactCommands
	case audit.KindChange:
		return secFactChanged
	case audit.KindPath:
		if modified[f.Text] {
			return secFactModified
		}
		return secFactPaths
	case audit.KindURL:
		return secFactURLs
	case audit.KindIdentifier:
		return secFactIdents
	}
	return secFactNumbers
}

// coveredBy reports whether a detail fact (identifier, number, URL) is
// already carried by text the summary holds: listing it again would spend
// the budget on a duplicate. A path a listed change names (changed) is
// carried by the change's line. Requests, instructions, errors, commands
// and other paths are always listed on their own line.
func coveredBy(f audit.Fact, m *audit.Matcher, changed map[string]bool) bool {
	switch f.Kind {
	case audit.KindIdentifier, audit.KindNumber, audit.KindURL:
		return m.Has(f)
	case audit.KindPath:
		return changed[f.Text]
	}
	return false
}

// Ledger appends to a summary the facts it lacks, most valuable first
// (audit.Rank), one line each under "## Fact ledger", as many as fit in
// room tokens; it returns the text and how many facts did not fit.
// missing must already be ranked.
func Ledger(text string, missing []audit.Fact, room int, enc string) (string, int, error) {
	if len(missing) == 0 {
		return text, 0, nil
	}
	if enc == "" {
		enc = estimate.O200kBase
	}
	ids := NewIDShortener(missing)
	head := "\n\n## " + secLedger + "\n"
	used, err := estimate.Text(enc, strings.TrimRight(text, "\n")+head)
	if err != nil {
		return "", 0, err
	}
	var lines []string
	for _, f := range missing {
		line := "- " + FactLine(f, ids) + "\n"
		c, err := estimate.Text(enc, line)
		if err != nil {
			return "", 0, err
		}
		if used+c > room {
			continue // a shorter, lower-ranked fact may still fit
		}
		used += c
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return text, len(missing), nil
	}
	return strings.TrimRight(text, "\n") + head + strings.Join(lines, ""), len(missing) - len(lines), nil
}

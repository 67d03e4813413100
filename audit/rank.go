package audit

import "sort"

// rankOfKind orders the kinds by what losing them costs the next turn:
// what the user asked for and how, then what went wrong, what the agent changed and what was run,
// then where the work happened, then the details (docs/COMPACT.md §6).
// Every budgeted fact list (a summary's fact section, a hook's injected
// context) is cut from the end of this order.
var rankOfKind = map[Kind]int{
	KindRequest:     0,
	KindInstruction: 1,
	KindError:       3,
	KindChange:      4,
	KindCommand:     5,
	KindPath:        6,
	KindURL:         7,
	KindIdentifier:  8,
	KindNumber:      9,
}

// IsCorrection reports whether an instruction fact is the user correcting
// the agent ("no, …", "actually …"): it ranks right after the requests and
// instructions, before errors.
func IsCorrection(f Fact) bool {
	return f.Kind == KindInstruction && reCorrect.MatchString(f.Text)
}

// Rank returns facts ordered by value, most valuable first: requests,
// instructions, corrections, errors, changes, commands, paths, URLs, identifiers,
// numbers. The order within a rank is the order of first appearance, so
// the result is deterministic. facts is not modified.
func Rank(facts []Fact) []Fact {
	out := append([]Fact(nil), facts...)
	sort.SliceStable(out, func(i, j int) bool { return rankOf(out[i]) < rankOf(out[j]) })
	return out
}

func rankOf(f Fact) int {
	if IsCorrection(f) {
		return 2
	}
	if r, ok := rankOfKind[f.Kind]; ok {
		return r
	}
	return len(rankOfKind) + 1
}

package live

import "fmt"

// classify says how the file relates to what the cache consumed: never
// seen, unchanged, grown with the same prefix, or rewritten (with why).
func classify(old state, haveOld bool, prefixSum string, size int64) (update, reason string) {
	switch {
	case !haveOld:
		return Fresh, ""
	case size < old.Consumed:
		return Fresh, fmt.Sprintf("the file is shorter than the %d bytes consumed (truncated or rewritten)", old.Consumed)
	case prefixSum != old.PrefixHash:
		return Fresh, fmt.Sprintf("the first %d bytes changed since they were imported (the file was rewritten)", old.Consumed)
	case size == old.Consumed:
		return Unchanged, ""
	}
	return Appended, ""
}

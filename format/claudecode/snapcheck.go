package claudecode

import "hash/maphash"

// What decodeSnap checks beyond lengths and index ranges (docs/LIVE.md,
// "Hostile files": a crafted resume.bin whose hash state.json was made to
// name): counts and the streamed messages' nodes are never negative, ids are unique, the predecessor and
// caller links hold no cycle (the planner walks them to a root), and a
// group names a node that is its own group's head. A state that fails is
// refused (ErrCannotResume) and the file imported afresh; a real one
// always passes.

// snapSound reports whether the decoded columns of s describe a state the
// planner could have saved.
func snapSound(s *snap) bool {
	// Counts are never negative, and a streamed message's entry names the
	// node its lines merge into, never none (planAssistant reads it).
	for _, cols := range [][]int32{s.CallsN, s.ResultsN, s.Rest.SentN, s.MsgVals} {
		for _, v := range cols {
			if v < 0 {
				return false
			}
		}
	}
	if !distinctIDs(s.ID) {
		return false
	}
	for _, g := range s.Group {
		if g >= 0 && s.Group[g] != g {
			return false
		}
	}
	return acyclic(s.Pred) && acyclic(s.Caller)
}

// acyclic: following link from any node (link[i] a node index, or none)
// reaches none. Each node is visited once: O(n).
func acyclic(link []int32) bool {
	const (
		unseen = iota
		onPath
		done
	)
	state := make([]uint8, len(link))
	for start := range link {
		i := int32(start)
		for i >= 0 && state[i] == unseen {
			state[i] = onPath
			i = link[i]
		}
		if i >= 0 && state[i] == onPath {
			return false
		}
		for j := int32(start); j >= 0 && state[j] == onPath; j = link[j] {
			state[j] = done
		}
	}
	return true
}

// distinctIDs: no non-empty id twice. It compares 64-bit hashes in an
// open-addressing table (a map of the 38,000 strings of a 100 MB session
// took 4 ms of every refresh); two ids of equal hash count as a
// duplicate, which refuses a sound state once in about 2⁶⁴/n² — the file
// is then imported afresh, never misread.
func distinctIDs(ids []string) bool {
	size := 1
	for size < 2*len(ids) {
		size *= 2
	}
	slots := make([]uint64, size)
	clear(slots) // written before probed: see estimate's newRankMap
	seed := maphash.MakeSeed()
	for _, id := range ids {
		if id == "" {
			continue
		}
		h := maphash.String(seed, id) | 1 // 0 marks an empty slot
		for i := h & uint64(size-1); ; i = (i + 1) & uint64(size-1) {
			if slots[i] == 0 {
				slots[i] = h
				break
			}
			if slots[i] == h {
				return false
			}
		}
	}
	return true
}

package claudecode

// What decodeSnap checks beyond lengths and index ranges (docs/LIVE.md, \"Hostile files\": a
// crafted resume.bin whose hash state.json was made to name): counts are
// never negative, ids are unique, the predecessor and caller links hold no
// cycle (the planner walks them to a root), and a group names a node that
// is its own group's head. A state that fails is refused
// (ErrCannotResume) and the file imported afresh; a real one always passes.

// snapSound reports whether the decoded columns of s describe a state the
// planner could have saved.
func snapSound(s *snap) bool {
	for _, cols := range [][]int32{s.CallsN, s.ResultsN, s.Rest.SentN} {
		for _, v := range cols {
			if v < 0 {
				return false
			}
		}
	}
	seen := make(map[string]struct{}, len(s.ID))
	for _, id := range s.ID {
		if id == "" {
			continue
		}
		if _, dup := seen[id]; dup {
			return false
		}
		seen[id] = struct{}{}
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

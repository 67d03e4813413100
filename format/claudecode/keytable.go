package claudecode

// The planner's id indexes (uuidNode, skipParent, ids, msgs) as a
// saved state keeps them: a refresh from a resume point of a 100 MB
// session restored four Go maps of tens of thousands of entries each —
// most of its restore — to look up a few hundred keys, and saved them
// again by ranging over them. A keyTable keeps what it was restored from
// as the saved columns, sorted by key and searched in place, and only
// what the planning since added, changed or removed in maps over them;
// saving merges the two in key order (docs/BENCHMARKS.md, "step 4").

import (
	"cmp"
	"slices"
	"sort"
)

// keyTable maps id keys to V.
type keyTable[V any] struct {
	// keys (ascending) and vals are the frozen part, never written.
	keys []key
	vals []V
	// set holds what was added or changed since; gone what was removed
	// of the frozen part.
	set  map[key]V
	gone map[key]bool
	n    int
}

func newKeyTable[V any]() *keyTable[V] { return &keyTable[V]{set: map[key]V{}} }

// frozenTable is a table of sorted columns (checked by the caller).
func frozenTable[V any](keys []key, vals []V) *keyTable[V] {
	return &keyTable[V]{keys: keys, vals: vals, set: map[key]V{}, n: len(keys)}
}

// find is k's index in the frozen part, or -1.
func (t *keyTable[V]) find(k key) int {
	i := sort.Search(len(t.keys), func(i int) bool { return t.keys[i] >= k })
	if i < len(t.keys) && t.keys[i] == k && !t.gone[k] {
		return i
	}
	return -1
}

func (t *keyTable[V]) get(k key) (V, bool) {
	if v, ok := t.set[k]; ok {
		return v, true
	}
	if i := t.find(k); i >= 0 {
		return t.vals[i], true
	}
	var zero V
	return zero, false
}

func (t *keyTable[V]) has(k key) bool {
	_, ok := t.get(k)
	return ok
}

func (t *keyTable[V]) put(k key, v V) {
	if _, ok := t.set[k]; !ok && t.find(k) < 0 {
		t.n++
	}
	t.set[k] = v
}

func (t *keyTable[V]) remove(k key) {
	_, inSet := t.set[k]
	frozen := t.find(k) >= 0
	if !inSet && !frozen {
		return
	}
	delete(t.set, k)
	if frozen {
		if t.gone == nil {
			t.gone = map[key]bool{}
		}
		t.gone[k] = true
	}
	t.n--
}

func (t *keyTable[V]) len() int { return t.n }

// freeze merges what was set and removed into the frozen part, in key
// order, and returns it: the columns a saved state holds. Later saves
// merge only what changes after this one.
func (t *keyTable[V]) freeze() ([]key, []V) {
	if len(t.set) == 0 && len(t.gone) == 0 {
		return t.keys, t.vals
	}
	added := make([]key, 0, len(t.set))
	for k := range t.set {
		added = append(added, k)
	}
	slices.Sort(added)
	keys, vals := make([]key, 0, t.n), make([]V, 0, t.n)
	i := 0
	for _, k := range added {
		j := i + sort.Search(len(t.keys)-i, func(x int) bool { return t.keys[i+x] >= k })
		keys, vals = t.keep(keys, vals, i, j)
		if i = j; i < len(t.keys) && t.keys[i] == k {
			i++ // changed: the set value stands
		}
		keys, vals = append(keys, k), append(vals, t.set[k])
	}
	keys, vals = t.keep(keys, vals, i, len(t.keys))
	t.keys, t.vals, t.set, t.gone = keys, vals, map[key]V{}, nil
	return keys, vals
}

// keep appends the frozen entries [i, j) not removed.
func (t *keyTable[V]) keep(keys []key, vals []V, i, j int) ([]key, []V) {
	if len(t.gone) == 0 {
		return append(keys, t.keys[i:j]...), append(vals, t.vals[i:j]...)
	}
	for ; i < j; i++ {
		if !t.gone[t.keys[i]] {
			keys, vals = append(keys, t.keys[i]), append(vals, t.vals[i])
		}
	}
	return keys, vals
}

// ascending: every value is above the one before it (a saved table is
// searched by halving).
func ascending[T cmp.Ordered](v []T) bool {
	for i := 1; i < len(v); i++ {
		if v[i] <= v[i-1] {
			return false
		}
	}
	return true
}

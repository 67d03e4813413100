package claudecode

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// A keyTable answers as a map given the same puts and removes would,
// whether its entries are frozen (restored, or merged by an earlier
// freeze) or set since, and freeze returns exactly the map's entries in
// key order.
func TestKeyTableIsAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		want := map[key]int32{}
		// Few distinct keys, so puts hit frozen, set and removed ones.
		keyOf := func() key { return key(1 + rng.IntN(60)) }
		var tb *keyTable[int32]
		if round%2 == 0 {
			tb = newKeyTable[int32]()
		} else {
			var ks []key
			var vs []int32
			for k := key(1); k <= 60; k += key(1 + rng.IntN(4)) {
				ks, vs = append(ks, k), append(vs, int32(k)*10)
				want[k] = int32(k) * 10
			}
			tb = frozenTable(ks, vs)
		}
		for op := range 300 {
			k := keyOf()
			switch rng.IntN(10) {
			case 0, 1, 2, 3:
				v := int32(rng.IntN(1000))
				tb.put(k, v)
				want[k] = v
			case 4, 5:
				tb.remove(k)
				delete(want, k)
			case 6:
				keys, vals := tb.freeze()
				if !ascending(keys) || len(keys) != len(vals) || len(keys) != len(want) {
					t.Fatalf("round %d op %d: freeze gave %d keys (ascending %v), %d values; want %d", round, op, len(keys), ascending(keys), len(vals), len(want))
				}
				for i, fk := range keys {
					if want[fk] != vals[i] {
						t.Fatalf("round %d op %d: frozen %d = %d, want %d", round, op, fk, vals[i], want[fk])
					}
				}
			default:
				v, ok := tb.get(k)
				wv, wok := want[k]
				if v != wv || ok != wok || tb.has(k) != wok {
					t.Fatalf("round %d op %d: get(%d) = %d, %v; want %d, %v", round, op, k, v, ok, wv, wok)
				}
			}
			if tb.len() != len(want) {
				t.Fatalf("round %d op %d: len %d, want %d", round, op, tb.len(), len(want))
			}
		}
		keys, _ := tb.freeze()
		if !slices.Equal(keys, slices.Sorted(func(yield func(key) bool) {
			for k := range want {
				if !yield(k) {
					return
				}
			}
		})) {
			t.Fatalf("round %d: the frozen keys are not the map's", round)
		}
	}
}

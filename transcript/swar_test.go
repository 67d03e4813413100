package transcript

import (
	"math/rand/v2"
	"testing"
)

func naivePlainRun(b []byte, i int) int {
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
			return i
		}
	}
	return i
}

func naiveQuoteOrEscape(b []byte, i int) int {
	for ; i < len(b) && b[i] != '"' && b[i] != '\\'; i++ {
	}
	return i
}

func naiveStringStop(b []byte, i int) (int, bool) {
	high := false
	for ; i < len(b) && b[i] != '"' && b[i] != '\\' && b[i] >= 0x20; i++ {
		high = high || b[i] >= 0x80
	}
	return i, high
}

// TestWordScans compares the eight-bytes-at-a-time scans with a loop
// over single bytes: every stop byte at every position of a word, after
// bytes that borrow (0x00, 0x1f, 0x20, 0x21, 0x7f, 0x80, 0xff), and random
// runs.
func TestWordScans(t *testing.T) {
	stops := []byte{'"', '\\', 0x00, 0x01, 0x1f, 0x80, 0xc3, 0xff}
	fill := []byte{'a', ' ', '!', '#', '[', ']', 0x7f, '~'}
	check := func(b []byte) {
		for i := 0; i <= len(b); i++ {
			if got, want := plainRun(b, i), naivePlainRun(b, i); got != want {
				t.Fatalf("plainRun(%q, %d) = %d, want %d", b, i, got, want)
			}
			if got, want := plainRun(string(b), i), naivePlainRun(b, i); got != want {
				t.Fatalf("plainRun(%q, %d) = %d, want %d", b, i, got, want)
			}
			j, high := StringStop(b, i)
			if wj, wh := naiveStringStop(b, i); j != wj || high != wh {
				t.Fatalf("StringStop(%q, %d) = %d, %v; want %d, %v", b, i, j, high, wj, wh)
			}
			if got, want := nextQuoteOrEscape(b, i), naiveQuoteOrEscape(b, i); got != want {
				t.Fatalf("nextQuoteOrEscape(%q, %d) = %d, want %d", b, i, got, want)
			}
		}
	}
	for _, f := range fill {
		for _, s := range append(stops, 'x') {
			for pos := range 20 {
				b := make([]byte, 20)
				for k := range b {
					b[k] = f
				}
				b[pos] = s
				check(b)
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := make([]byte, r.IntN(40))
		for k := range b {
			if r.IntN(8) == 0 {
				b[k] = stops[r.IntN(len(stops))]
			} else {
				b[k] = byte(0x20 + r.IntN(0x60))
			}
		}
		check(b)
	}
}

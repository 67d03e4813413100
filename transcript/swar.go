package transcript

// This file finds the bytes a JSON string's scanner must stop at eight at
// a time (the has-less-than and has-zero-byte bit tricks): most of a
// stored line is text copied as is, and a loop over single bytes was the
// decoder's and the writer's largest cost after the importers' own.

import (
	"encoding/binary"
	"math/bits"
)

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// zeroBytes flags (in bit 7 of each byte) the bytes of w that are zero;
// the lowest flag is exact, higher ones may follow from its borrow.
func zeroBytes(w uint64) uint64 { return (w - ones) &^ w & highs }

// nextQuoteOrEscape returns the index of the first '"' or '\\' in b at or
// after i, or len(b).
func nextQuoteOrEscape(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		if stop := zeroBytes(w^(ones*'"')) | zeroBytes(w^(ones*'\\')); stop != 0 {
			return i + bits.TrailingZeros64(stop)/8
		}
	}
	for ; i < len(b) && b[i] != '"' && b[i] != '\\'; i++ {
	}
	return i
}

// plainRun returns the index of the first byte of b at or after i that a
// JSON string cannot hold as is (a quote, a backslash, a control byte) or
// that needs a look as UTF-8 (over 0x7f), or len(b).
func plainRun[T string | []byte](b T, i int) int {
	for ; i+8 <= len(b); i += 8 {
		w := uint64(b[i]) | uint64(b[i+1])<<8 | uint64(b[i+2])<<16 | uint64(b[i+3])<<24 |
			uint64(b[i+4])<<32 | uint64(b[i+5])<<40 | uint64(b[i+6])<<48 | uint64(b[i+7])<<56
		stop := zeroBytes(w^(ones*'"')) | zeroBytes(w^(ones*'\\')) | ((w-ones*0x20)&^w)&highs | w&highs
		if stop != 0 {
			return i + bits.TrailingZeros64(stop)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
			return i
		}
	}
	return i
}

// StringStop returns the index of the first quote, backslash or control
// byte of b at or after i, or len(b): where a scanner of a JSON string
// must look (its end, an escape, an error). high says a byte over 0x7f
// came before it.
func StringStop(b []byte, i int) (j int, high bool) {
	var seen uint64
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		stop := zeroBytes(w^(ones*'"')) | zeroBytes(w^(ones*'\\')) | ((w-ones*0x20)&^w)&highs
		if stop != 0 {
			n := bits.TrailingZeros64(stop) / 8
			seen |= w & (1<<(8*n) - 1)
			return i + n, seen&highs != 0
		}
		seen |= w
	}
	for ; i < len(b); i++ {
		c := b[i]
		if c == '"' || c == '\\' || c < 0x20 {
			break
		}
		seen |= uint64(c)
	}
	return i, seen&highs != 0
}

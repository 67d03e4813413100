package claudecode

import "testing"

// The reference vector of the SipHash paper (key 00..0f, message 00..0e):
// the planner's keys are SipHash-2-4, not something that merely looks
// like it.
func TestSipHashVector(t *testing.T) {
	k := hashKey{0x0706050403020100, 0x0f0e0d0c0b0a0908}
	msg := make([]byte, 15)
	for i := range msg {
		msg[i] = byte(i)
	}
	if got, want := k.sum64(string(msg)), uint64(0xa129ca6149be45e5); got != want {
		t.Fatalf("sum64 = %#x, want %#x", got, want)
	}
	if got, want := k.sum64(""), uint64(0x726fdb47dd0e0e31); got != want {
		t.Fatalf("sum64(\"\") = %#x, want %#x", got, want)
	}
}

package report

import (
	"strings"
	"testing"
)

func TestWrap(t *testing.T) {
	line := "calibrated estimate: 886 tokens (0.8% of the input budget): ×1.341 from a7, measured 850 vs estimated 634"
	got := Wrap(line, 40)
	for _, l := range strings.Split(got, "\n") {
		if visibleWidth(l) > 40 {
			t.Errorf("line over 40 columns: %q", l)
		}
	}
	if strings.Join(strings.Fields(got), " ") != line {
		t.Errorf("words changed: %q", got)
	}
	if !strings.HasPrefix(strings.Split(got, "\n")[1], "  ") {
		t.Errorf("continuation not indented: %q", got)
	}
	// Colour takes no column; a line that fits is unchanged.
	red := "\x1b[31m" + strings.Repeat("█", 30) + "\x1b[0m 0.5% of the window"
	if Wrap(red, 50) != red {
		t.Errorf("a fitting coloured line was wrapped: %q", Wrap(red, 50))
	}
	if Wrap(line, 0) != line {
		t.Error("width 0 changed the line")
	}
	// A word longer than the width is kept whole.
	long := strings.Repeat("x", 50) + " tail"
	if got := Wrap(long, 20); got != strings.Repeat("x", 50)+"\n  tail" {
		t.Errorf("long word: %q", got)
	}
}

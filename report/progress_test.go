package report

import (
	"bytes"
	"sync"
	"testing"
	"time"
)

func TestProgressSilentWhenPipedOrJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		tty  bool
		json bool
	}{{"piped", false, false}, {"json on a tty", true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			ios, _, _, errOut := Test()
			ios.StderrTTY, ios.JSON = tc.tty, tc.json
			p := NewProgress(ios, "estimating", 3)
			p.Add(3)
			p.Done()
			p.Done()
			if errOut.Len() != 0 {
				t.Fatalf("stderr = %q, want nothing", errOut.String())
			}
		})
	}
}

func TestProgressLine(t *testing.T) {
	var buf bytes.Buffer
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	p := newProgress(&buf, func() time.Time { return now }, "estimating", 40)
	p.Add(12)
	now = t0.Add(3*time.Second + 400*time.Millisecond)
	p.draw()
	want := "\restimating [######--------------] 12/40  0:03\x1b[K"
	if buf.String() != want {
		t.Fatalf("frame = %q, want %q", buf.String(), want)
	}
	// Past the total the bar stays full and the count is honest.
	p.Add(30)
	if got := p.line(75 * time.Minute); got != "estimating [####################] 42/40  1:15:00" {
		t.Fatalf("line = %q", got)
	}
}

func TestProgressSpinnerWithoutTotal(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, time.Now, "importing", 0)
	if got := p.line(2 * time.Second); got != "importing ⠋  0:02" {
		t.Fatalf("waiting line = %q", got)
	}
	p.Add(5)
	if got := p.line(61 * time.Second); got != "importing ⠋ 5  1:01" {
		t.Fatalf("line = %q", got)
	}
	p.frame++
	if got := p.line(0); got != "importing ⠙ 5  0:00" {
		t.Fatalf("second frame = %q", got)
	}
}

func TestProgressDoneErasesLine(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, time.Now, "x", 2)
	go p.loop()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); p.Add(1) }()
	}
	wg.Wait()
	p.draw()
	p.Done()
	p.Done()
	if p.n.Load() != 8 {
		t.Fatalf("count = %d, want 8", p.n.Load())
	}
	if !bytes.HasPrefix(buf.Bytes(), []byte("\rx [")) || !bytes.HasSuffix(buf.Bytes(), []byte("\r\x1b[K")) {
		t.Fatalf("stderr = %q, want a frame, then the line erased", buf.String())
	}
}

// Work finished before the first frame leaves stderr untouched.
func TestProgressQuickWorkLeavesNoTrace(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, time.Now, "x", 2)
	p.Add(2)
	close(p.stopped) // no loop was started: nothing drew
	p.Done()
	if buf.Len() != 0 {
		t.Fatalf("stderr = %q, want nothing", buf.String())
	}
}

// Interrupt erases a drawn line before fn writes, and does not redraw by
// itself; on silent streams it just runs fn.
func TestProgressInterrupt(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, time.Now, "searching", 10)
	p.draw()
	buf.Reset()
	err := p.Interrupt(func() error { buf.WriteString("hit\n"); return nil })
	if err != nil || buf.String() != "\r\x1b[Khit\n" {
		t.Fatalf("interrupt wrote %q, %v", buf.String(), err)
	}
	buf.Reset()
	p.Interrupt(func() error { buf.WriteString("hit\n"); return nil })
	if buf.String() != "hit\n" {
		t.Fatalf("second interrupt wrote %q: the line was already erased", buf.String())
	}
	ios, _, _, errOut := Test()
	ran := false
	NewProgress(ios, "x", 1).Interrupt(func() error { ran = true; return nil })
	if !ran || errOut.Len() != 0 {
		t.Fatalf("silent progress: ran=%v stderr=%q", ran, errOut.String())
	}
}

// TestProgressGrowingTotalAndStages: a bar whose total grows as sessions
// open (thousands separated), then a new stage with its own label.
func TestProgressGrowingTotalAndStages(t *testing.T) {
	var buf bytes.Buffer
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := newProgress(&buf, func() time.Time { return t0 }, "estimating", 0)
	p.AddTotal(40000)
	p.Add(10000)
	p.AddTotal(60000)
	p.draw()
	if want := "\restimating [##------------------] 10,000/100,000  0:00\x1b[K"; buf.String() != want {
		t.Fatalf("frame = %q, want %q", buf.String(), want)
	}
	buf.Reset()
	p.Restart("summarizing (extractive)", 0)
	p.draw()
	if want := "\rsummarizing (extractive) ⠙  0:00\x1b[K"; buf.String() != want {
		t.Fatalf("frame = %q, want %q", buf.String(), want)
	}
}

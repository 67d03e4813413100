package report

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Progress shows long work on stderr: a bar with counts when the total is
// known, a spinner with a count otherwise, and the elapsed time. It draws
// only when stderr is a terminal and --json is off (IOStreams.
// ProgressEnabled); otherwise every method is a cheap no-op, so commands
// call it unconditionally. Add is safe from many goroutines.
//
//	p := report.NewProgress(ios, "estimating", len(dirs))
//	defer p.Done()
//	for … { …; p.Add(1) }
type Progress struct {
	label atomic.Pointer[string]
	total atomic.Int64
	n     atomic.Int64

	w       io.Writer
	now     func() time.Time
	start   time.Time
	every   time.Duration
	stop    chan struct{}
	stopped chan struct{}
	once    sync.Once
	mu      sync.Mutex // serialises drawing
	frame   int
	width   int
	// shown: a frame is on screen now (not erased by Interrupt).
	shown bool
}

// progressDelay: work that finishes sooner shows nothing at all, so fast
// commands never flash a bar.
const progressDelay = 300 * time.Millisecond

// NewProgress starts a reporter for total units of work (0 or less: unknown,
// a spinner). It draws every 100ms after an initial delay until Done.
func NewProgress(ios *IOStreams, label string, total int) *Progress {
	if ios == nil || !ios.ProgressEnabled() {
		p := &Progress{}
		p.label.Store(&label)
		p.total.Store(int64(total))
		return p
	}
	p := newProgress(ios.ErrOut, time.Now, label, total)
	go p.loop()
	return p
}

// newProgress is a drawing reporter without its ticker: tests call draw.
func newProgress(w io.Writer, now func() time.Time, label string, total int) *Progress {
	p := &Progress{w: w, now: now, every: 100 * time.Millisecond, width: 20}
	p.label.Store(&label)
	p.total.Store(int64(total))
	p.start = now()
	p.stop, p.stopped = make(chan struct{}), make(chan struct{})
	return p
}

func (p *Progress) loop() {
	defer close(p.stopped)
	select {
	case <-p.stop:
		return
	case <-time.After(progressDelay):
	}
	t := time.NewTicker(p.every)
	defer t.Stop()
	for {
		p.draw()
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
	}
}

// Add records n more units done.
func (p *Progress) Add(n int) { p.n.Add(int64(n)) }

// SetTotal changes the total when it becomes known late (a file's size
// after opening it, say).
func (p *Progress) SetTotal(total int) { p.total.Store(int64(total)) }

// AddTotal grows the total as more work is found (the nodes of each
// session as it is opened), so one bar covers work within and across
// sessions.
func (p *Progress) AddTotal(n int) { p.total.Add(int64(n)) }

// Restart shows a new stage of the same work: a new label and total, the
// count back at zero; the clock keeps running.
func (p *Progress) Restart(label string, total int) {
	p.label.Store(&label)
	p.n.Store(0)
	p.total.Store(int64(total))
}

// Done stops drawing and erases the line, leaving stderr as it was (work
// done before the first frame leaves no trace at all). It is safe to call
// more than once.
func (p *Progress) Done() {
	p.once.Do(func() {
		if p.w == nil {
			return
		}
		close(p.stop)
		<-p.stopped
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.shown {
			fmt.Fprint(p.w, "\r\x1b[K")
		}
	})
}

func (p *Progress) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprint(p.w, "\r"+p.line(p.now().Sub(p.start))+"\x1b[K")
	p.frame++
	p.shown = true
}

// Interrupt runs fn with the progress line erased and drawing paused, for
// output to the same terminal mid-work (a result line on stdout); the
// next tick draws it again.
func (p *Progress) Interrupt(fn func() error) error {
	if p.w == nil {
		return fn()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
	return fn()
}

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// line is the text of one frame: "label [######------] 12/40  0:03" with a
// total, "label ⠋ 12  0:03" without, "label ⠋  0:03" with nothing counted.
func (p *Progress) line(elapsed time.Duration) string {
	n, total := p.n.Load(), p.total.Load()
	label := *p.label.Load()
	clock := formatElapsed(elapsed)
	if total <= 0 {
		spin := spinnerFrames[p.frame%len(spinnerFrames)]
		if n == 0 {
			// Waiting with nothing to count (a summarizer call).
			return fmt.Sprintf("%s %s  %s", label, spin, clock)
		}
		return fmt.Sprintf("%s %s %s  %s", label, spin, Thousands(int(n)), clock)
	}
	done := min(n, total)
	filled := int(done * int64(p.width) / total)
	bar := strings.Repeat("#", filled) + strings.Repeat("-", p.width-filled)
	return fmt.Sprintf("%s [%s] %s/%s  %s", label, bar, Thousands(int(n)), Thousands(int(total)), clock)
}

// formatElapsed is m:ss, or h:mm:ss past an hour.
func formatElapsed(d time.Duration) string {
	s := int(d / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

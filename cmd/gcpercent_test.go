package cmd

import (
	"runtime/debug"
	"testing"
)

func TestSetGCPercent(t *testing.T) {
	orig := debug.SetGCPercent(100)
	defer debug.SetGCPercent(orig)
	setGCPercent(func(string) string { return "" })
	if got := debug.SetGCPercent(100); got != defaultGCPercent {
		t.Errorf("no GOGC: collector at %d%%, want %d%%", got, defaultGCPercent)
	}
	setGCPercent(func(k string) string {
		if k == "GOGC" {
			return "200"
		}
		return ""
	})
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC set: collector changed to %d%%", got)
	}
}

// A live refresh runs with the collector at liveGCPercent and puts the
// command's setting back; GOGC still wins.
func TestLiveGC(t *testing.T) {
	orig := debug.SetGCPercent(defaultGCPercent)
	defer debug.SetGCPercent(orig)
	restore := liveGC(func(string) string { return "" })
	if got := debug.SetGCPercent(liveGCPercent); got != liveGCPercent {
		t.Errorf("during the refresh: collector at %d%%, want %d%%", got, liveGCPercent)
	}
	restore()
	if got := debug.SetGCPercent(defaultGCPercent); got != defaultGCPercent {
		t.Errorf("after the refresh: collector at %d%%, want %d%%", got, defaultGCPercent)
	}
	restore = liveGC(func(k string) string {
		if k == "GOGC" {
			return "300"
		}
		return ""
	})
	if got := debug.SetGCPercent(defaultGCPercent); got != defaultGCPercent {
		t.Errorf("GOGC set: collector changed to %d%%", got)
	}
	restore()
}

// A refresh from a resume point runs with the collector held back up to
// resumeGCLimit and puts both settings back; GOGC still wins.
func TestResumeGC(t *testing.T) {
	orig := debug.SetGCPercent(liveGCPercent)
	defer debug.SetGCPercent(orig)
	origLimit := debug.SetMemoryLimit(-1)
	restore := resumeGC(func(string) string { return "" })()
	if got := debug.SetGCPercent(liveGCPercent); got != resumeGCPercent {
		t.Errorf("during the refresh: collector at %d%%, want %d%% (held back, not off: turning it off waits for a collection in progress)", got, resumeGCPercent)
	}
	debug.SetGCPercent(resumeGCPercent)
	if got := debug.SetMemoryLimit(-1); got != resumeGCLimit {
		t.Errorf("during the refresh: memory limit %d, want %d", got, resumeGCLimit)
	}
	restore()
	if got := debug.SetGCPercent(liveGCPercent); got != liveGCPercent {
		t.Errorf("after the refresh: collector at %d%%, want %d%%", got, liveGCPercent)
	}
	if got := debug.SetMemoryLimit(-1); got != origLimit {
		t.Errorf("after the refresh: memory limit %d, want %d", got, origLimit)
	}
	if resumeGC(func(k string) string {
		if k == "GOGC" {
			return "300"
		}
		return ""
	}) != nil {
		t.Error("GOGC set: the refresh still changes the collector")
	}
}

package estimate

import (
	"context"
	"errors"
	"testing"

	"github.com/ctxfold/ctxfold/store"
)

// TestMeasureFallbackIsItsError: when an append changes what calibration
// reads, tailRun.measure gives no result and its one error value is the
// typed fallbackReason, whose text is the SessionResult.Fallback the full
// path then reports.
func TestMeasureFallbackIsItsError(t *testing.T) {
	s := measuredFixture(t, "compacted", SessionOptions{})
	s.appendLines("a9", `{"id":"a9","predecessor":"a8","role":"assistant","content":"ok","usage":{"input_tokens":500,"output_tokens":2}}`)
	k, err := viewCacheKey(s.dir, Options{}, "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	maxLine := effectiveMaxLine(store.OpenOptions{})
	tail, why := openTail(s.dir, k, maxLine)
	if tail == nil {
		t.Fatalf("openTail: %s", why)
	}
	defer tail.close()
	if why := tail.decode(maxLine); why != "" {
		t.Fatalf("decode: %s", why)
	}
	if why := tail.link(); why != "" {
		t.Fatalf("link: %s", why)
	}
	res, vc, sidecar, err := tail.measure(context.Background(), Options{}.ForSession(tail.meta, ""), k.key)
	var reason fallbackReason
	if !errors.As(err, &reason) || res != nil || vc != nil || sidecar != nil {
		t.Fatalf("measure: result %v, error %T %v; want only a fallbackReason", res != nil, err, err)
	}
	const want = "usage recorded on the spine of a session with summaries, for the first time"
	if string(reason) != want {
		t.Fatalf("reason %q, want %q", reason, want)
	}
	if r := Session(context.Background(), s.dir, SessionOptions{}); r.Path != PathFull || r.Fallback != want {
		t.Fatalf("Session: path %s, fallback %q, want the full path because %q", r.Path, r.Fallback, want)
	}
}

package cmd

import (
	"context"
	"os"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/live"
)

// How the status line read the transcript (StatusLine.Read).
const (
	readFull = "full"
	readTail = "tail"
)

// tailMinFile is the default of --tail-min-bytes (docs/LIVE.md, "The
// tail"): below it the whole file's cache session is quick to build and
// also gives the raw count.
const tailMinFile = 8 << 20

// tailStatusline is the status answered from the transcript's tail, when
// the file is big, records usage, and its tail gives the whole history's
// number; ok false leaves it to the full path (any error included: the
// full path reports its own).
func tailStatusline(ctx context.Context, opts *statuslineOptions, hook *statusHook) (StatusLine, bool) {
	if opts.TailMinBytes <= 0 {
		return StatusLine{}, false
	}
	if fi, err := os.Stat(hook.TranscriptPath); err != nil || !fi.Mode().IsRegular() || fi.Size() < opts.TailMinBytes {
		return StatusLine{}, false
	}
	so := estimate.SessionOptions{Estimate: opts.Est, DefaultModel: opts.DefaultModel, Open: opts.Open}
	so.Estimate.Model = hookModel(opts, hook)
	var st StatusLine
	hookWindow := applyClientWindow(&st, hook, &so.Estimate)
	restore := liveGC(opts.Getenv)
	a, err := estimate.FromTail(ctx, hook.TranscriptPath, estimate.TailOptions{
		Live: live.Options{CacheDir: opts.CacheDir, Store: opts.Store}, Session: so})
	restore()
	if err != nil {
		return StatusLine{}, false
	}
	defer a.Entry.Close()
	st.SchemaVersion, st.File, st.Session = statuslineSchemaVersion, a.Entry.Transcript, a.Entry.Session
	st.Update, st.ParsedBytes, st.Read, st.TailFrom = a.Entry.TailUpdate, a.Entry.ParsedBytes, readTail, a.Entry.Start
	st.SessionID, st.Cwd = hook.SessionID, hook.Cwd
	st.Status = estimate.TailStatus(a, so.Estimate.CompactAt)
	if hookWindow {
		st.WindowSource = windowFromHook
	}
	st.DisplayName = hook.Model.DisplayName
	if st.DisplayName == "" {
		st.DisplayName = st.Model
	}
	st.Compactions = a.Compactions
	return st, true
}

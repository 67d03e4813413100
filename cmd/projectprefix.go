package cmd

import (
	"context"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/live"
	"github.com/ctxfold/ctxfold/projectprefix"
)

// withProjectPrefix gives a transcript file's session that has recorded
// no request yet what its project's newest earlier session's first
// request carried beside its transcript, in place of the client's prior
// (projectprefix).
func withProjectPrefix(ctx context.Context, e *live.Entry, res *estimate.SessionResult, lo live.Options, so estimate.SessionOptions) {
	if e == nil || res.Err != nil || res.Result == nil || so.Head != "" || so.Estimate.NoCalibrate {
		return
	}
	memo := lo.CacheDir
	if memo == "" {
		memo, _ = live.DefaultCacheDir()
	}
	projectprefix.Apply(ctx, projectprefix.Target{File: e.File, Session: e.Session, Format: e.Format}, res.Result,
		projectprefix.Options{Live: lo, Session: so, MemoDir: memo})
}

package estimate

import (
	"context"
	"fmt"
	"sync"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/transcript"
)

// ForSession resolves the model a command budgets a session for: o.Model
// (an explicit choice), else the model the session records, else fallback
// (the configured model) — the one order every command and compact use.
// The window the session records is filled in unless o sets one.
func (o Options) ForSession(meta transcript.Meta, fallback string) Options {
	switch {
	case o.Model != "":
	case meta.Model != "":
		o.Model = meta.Model
	default:
		o.Model = fallback
	}
	if o.RecordedWindow <= 0 {
		o.RecordedWindow = RecordedWindow(meta)
	}
	return o
}

// SessionOptions configure Session.
type SessionOptions struct {
	// Estimate counts the view; its Model is the explicit choice only
	// (ForSession resolves the rest). Its Warn is not used: warnings are
	// returned.
	Estimate Options
	// DefaultModel is the fallback after the session's own model.
	DefaultModel string
	// Head measures the view from this node instead of HEAD.
	Head string
	Open transcript.OpenOptions
}

// SessionResult is one session's measurement, or why there is none.
type SessionResult struct {
	Result *Result
	// Warnings are the session's read warnings, the model's family
	// warning and counting warnings, in the order they arose.
	Warnings []string
	Err      error
}

// Session measures the rendered view of the session in dir: the stored
// view of an unchanged session (DIR/cache/estimate.view, unless
// Estimate.NoCache), else dag.Open, render.Build and View, storing the
// result for next time when the session read without warnings.
func Session(ctx context.Context, dir string, opts SessionOptions) (out SessionResult) {
	explicit := opts.Estimate.Model
	e := opts.Estimate
	e.Model = ""
	// The key is taken before reading, so a result is never stored under
	// a newer key.
	var key string
	if !e.NoCache {
		key, _ = ViewCacheKey(dir, e, opts.Head, explicit, opts.DefaultModel)
		if res, ok := CachedView(dir, key); key != "" && ok {
			res.Session = dir
			out.Result = res
			if w := res.ModelWarning(); w != "" {
				out.Warnings = append(out.Warnings, w)
			}
			return out
		}
	}
	g, err := dag.Open(dir, opts.Open)
	if err != nil {
		out.Err = err
		return out
	}
	defer g.S.Close()
	for _, w := range g.S.Warnings {
		out.Warnings = append(out.Warnings, w.String())
	}
	view, err := render.Build(g, opts.Head, false)
	if err != nil {
		out.Err = err
		return out
	}
	e.Model = explicit
	e = e.ForSession(g.S.Meta, opts.DefaultModel)
	if key != "" {
		defer func() {
			if out.Err == nil && len(g.S.Warnings) == 0 {
				if err := StoreView(dir, key, out.Result); err != nil {
					out.Warnings = append(out.Warnings, "view cache not saved: "+err.Error())
				}
			}
		}()
	}
	var mu sync.Mutex
	e.Warn = func(m string) {
		mu.Lock()
		out.Warnings = append(out.Warnings, m)
		mu.Unlock()
	}
	if e.Model == "" && e.Window == 0 {
		out.Err = fmt.Errorf("%s: %w", dir, &UnknownModelError{})
		return out
	}
	res, err := View(ctx, view, e)
	if err != nil {
		out.Err = fmt.Errorf("%s: %w", dir, err)
		return out
	}
	res.Session = dir
	out.Result = res
	if w := res.ModelWarning(); w != "" {
		out.Warnings = append(out.Warnings, w)
	}
	return out
}

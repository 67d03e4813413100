package estimate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sync"

	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// ForSession resolves the model a command budgets a session for: o.Model
// (an explicit choice), else the model the session records, else fallback
// (the configured model) — the one order every command and compact use.
// The window the session records is filled in unless o sets one.
//
// A session that records no model, with none configured, is budgeted for
// the default model of the client that wrote it (ClientDefaultModel: a
// Claude Code transcript before its first reply records none) and
// ModelAssumed says so.
func (o Options) ForSession(meta store.Meta, fallback string) Options {
	switch {
	case o.Model != "":
	case meta.Model != "":
		o.Model = meta.Model
	case fallback != "":
		o.Model = fallback
	case o.Window <= 0:
		// With --window the window alone budgets, as before.
		o.Model = ClientDefaultModel(meta)
		o.ModelAssumed = o.Model != ""
	}
	if o.RecordedWindow <= 0 {
		o.RecordedWindow = RecordedWindow(meta)
		if o.RecordedWindow > 0 {
			o.RecordedWindowSource = recordedWindowSource(meta)
		}
	}
	if o.Client == "" {
		o.Client = ImportedFrom(meta)
	}
	return o
}

// clientDefaults are the models the clients use when the user picks none,
// keyed by the importer's format name (session.json's imported_from).
var clientDefaults = map[string]string{
	"claude-code": "claude-sonnet-4-5",
	"codex":       "gpt-5-codex",
	"gemini":      "gemini-3.8-flash", // Gemini CLI 0.61.0's default (docs/ESTIMATE.md)
}

// ClientDefaultModel is the default model of the client whose transcript
// the session was imported from, "" when the session names no client or
// the client has no single default.
func ClientDefaultModel(meta store.Meta) string {
	return clientDefaults[ImportedFrom(meta)]
}

// ImportedFrom is the importer's name of the session's client
// (session.json's imported_from.format), "" when it names none.
func ImportedFrom(meta store.Meta) string {
	var from struct {
		Format string `json:"format"`
	}
	if raw, ok := meta.Extra["imported_from"]; !ok || json.Unmarshal(raw, &from) != nil {
		return ""
	}
	return from.Format
}

// reAnnounced is Claude Code's attachment naming the model before the
// first reply: "You are powered by the model named Opus 5.5. The exact
// model ID is claude-opus-5-5."
var reAnnounced = regexp.MustCompile(`The exact model ID is ([A-Za-z0-9][A-Za-z0-9._:/\[\]-]*[A-Za-z0-9\]])`)

// ForView is o with an assumed model (ForSession) replaced by the model
// an attachment of the view names, when one does (announcedModel): every
// command that budgets a session resolves its model the same way.
func (o Options) ForView(v *render.View) Options {
	if o.ModelAssumed {
		if m := announcedModel(v); m != "" {
			o.Model, o.ModelAssumed = m, false
		}
	}
	return o
}

// AssumedWarning is the warning of an assumed model ("" when o's model
// was not assumed), as estimate's result gives it (Result.ModelWarning).
func (o Options) AssumedWarning() string {
	if !o.ModelAssumed {
		return ""
	}
	r := Result{Model: o.Model, ModelAssumed: true}
	return r.ModelWarning()
}

// announcedModel is the model an attachment in the view names, "" when
// none does: what a transcript before its first reply holds of its model.
func announcedModel(v *render.View) string {
	found := ""
	errFound := errors.New("found")
	_ = v.Nodes(func(_ int, n *transcript.Node) error {
		if m := reAnnounced.FindStringSubmatch(n.Content.PlainText()); m != nil {
			found = m[1]
			return errFound
		}
		return nil
	})
	return found
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
	Open store.OpenOptions
}

// SessionResult is one session's measurement, or why there is none.
type SessionResult struct {
	Result *Result
	// Warnings are the session's read warnings, the model's family
	// warning and counting warnings, in the order they arose.
	Warnings []string
	Err      error
	// Path says how the Result was made (PathView, PathIncremental,
	// PathFull); Fallback, on PathFull, why the stored view could not be
	// extended ("" when there was none to try). For tests and diagnostics:
	// not part of estimate's output.
	Path     string
	Fallback string
	// Summaries is the number of summary nodes in the session (compactions
	// so far), -1 when not known (a stored view without the basis of an
	// incremental run).
	Summaries int
}

// Session measures the rendered view of the session in dir: the stored
// view of an unchanged session (DIR/cache/estimate.view, unless
// Estimate.NoCache); after a pure append, the stored figures plus the new
// nodes (incremental.go); else dag.Open, render.Build and View, storing
// the result for next time when the session read without warnings.
func Session(ctx context.Context, dir string, opts SessionOptions) (out SessionResult) {
	explicit := opts.Estimate.Model
	e := opts.Estimate
	e.Model = ""
	out.Summaries = -1
	// The key is taken before reading, so a result is never stored under
	// a newer key.
	var k viewKey
	if !e.NoCache {
		k, _ = viewCacheKey(dir, e, opts.Head, explicit, opts.DefaultModel)
		if vc, ok := readViewCache(dir); k.key != "" && ok && vc.Key == k.key {
			res := vc.Result
			res.Session = dir
			out.Result, out.Path = res, PathView
			if vc.Basis != nil {
				out.Summaries = vc.Basis.Summaries
			}
			if w := res.ModelWarning(); w != "" {
				out.Warnings = append(out.Warnings, w)
			}
			return out
		}
		if k.key != "" && opts.Head == "" {
			ie := e
			ie.Model = explicit
			inc, why := incremental(ctx, dir, k, ie, opts)
			if inc != nil {
				return *inc
			}
			out.Fallback = string(why)
		}
	}
	return full(ctx, dir, opts, k, explicit, out)
}

// full is Session's full path: index, render, count.
func full(ctx context.Context, dir string, opts SessionOptions, k viewKey, explicit string, in SessionResult) (out SessionResult) {
	out = in
	e := opts.Estimate
	e.Model = ""
	key := k.key
	out.Path = PathFull
	g, err := dag.Open(dir, opts.Open)
	if err != nil {
		out.Err = err
		return out
	}
	defer g.S.Close()
	out.Summaries = 0
	for i := range g.S.Len() {
		if g.S.IsSummary(i) {
			out.Summaries++
		}
	}
	for _, w := range g.S.Warnings {
		out.Warnings = append(out.Warnings, w.String())
	}
	view, err := render.Build(g, opts.Head, false)
	if err != nil {
		out.Err = err
		return out
	}
	e.Model = explicit
	e = e.ForSession(g.S.Meta, opts.DefaultModel).ForView(view)
	var st *viewState
	if key != "" {
		defer func() {
			if out.Err == nil && len(g.S.Warnings) == 0 {
				if err := storeFull(dir, k, opts, view, st, out.Result); err != nil {
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
	var res *Result
	res, st, err = measureView(ctx, view, e)
	if err != nil {
		out.Err = fmt.Errorf("%s: %w", dir, err)
		return out
	}
	res.Session = dir
	res.ModelAssumed = e.ModelAssumed
	out.Result = res
	if w := res.ModelWarning(); w != "" {
		out.Warnings = append(out.Warnings, w)
	}
	return out
}

// storeFull stores a full run's Result with, when the session is in a
// state an incremental run can start from, its basis and sidecar.
func storeFull(dir string, k viewKey, opts SessionOptions, v *render.View, st *viewState, res *Result) error {
	vc := viewCache{Key: k.key, Result: res}
	if opts.Head != "" || st == nil {
		return storeView(dir, vc, nil)
	}
	ident, err := store.StatNodes(v.Graph.S.Dir)
	if err != nil {
		return storeView(dir, vc, nil)
	}
	base, err := baseOf(k.meta, k.inputs, fileIdentity(ident), effectiveMaxLine(opts.Open))
	if err != nil {
		return storeView(dir, vc, nil)
	}
	// The key was taken from session.json before Open read it again: the
	// basis must describe the state measured, in every field the Result
	// depends on.
	var km store.Meta
	sm := v.Graph.S.Meta
	if json.Unmarshal(k.meta, &km) != nil || km.Head != sm.Head || km.NodesBytes == nil || sm.NodesBytes == nil ||
		*km.NodesBytes != *sm.NodesBytes || km.ActiveSummaryID != sm.ActiveSummaryID || km.Model != sm.Model ||
		RecordedWindow(km) != RecordedWindow(sm) {
		return storeView(dir, vc, nil)
	}
	b, recs, err := newBasis(v, st, base, km.NodesHashState)
	if err != nil || b == nil {
		return storeView(dir, vc, nil)
	}
	vc.Basis = b
	var reqs []MatchedRequest
	if b.Calib != nil {
		reqs = b.Calib.reqs
	}
	return storeView(dir, vc, encodeSidecar(k.key, recs, reqs))
}

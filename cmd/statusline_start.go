package cmd

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/osfile"
	"github.com/ctxfold/ctxfold/render"
)

// windowFromHook is the window_source of a status line whose window is the
// client's context_window_size (the hook's JSON), not --window.
const windowFromHook = "client"

// hookModel is the model the status line budgets: --model, else the
// client's model.id when ctxfold knows it, else "" (the transcript's own
// model, then the config's default). An id ctxfold cannot resolve — a new
// alias, a garbled or hostile string — must not blank the line when the
// transcript names a model it knows.
func hookModel(opts *statuslineOptions, hook *statusHook) string {
	if opts.Model != "" {
		return opts.Model
	}
	if id := hook.Model.ID; id != "" {
		if _, ok := estimate.ResolveModel(id, opts.Est.Models); ok {
			return id
		}
	}
	return ""
}

// applyClientWindow copies the client's own figures into st and, unless
// --window was given, budgets with the client's window; true when it did.
func applyClientWindow(st *StatusLine, hook *statusHook, o *estimate.Options) bool {
	cw := hook.ContextWindow
	if cw == nil {
		return false
	}
	st.ClientWindow = cw.Size
	if cw.UsedPercentage != nil {
		st.ClientPct = *cw.UsedPercentage
	}
	if u := cw.CurrentUsage; u != nil {
		st.ClientTokens = u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
	}
	if o.Window == 0 && cw.Size > 0 {
		o.Window = cw.Size
		return true
	}
	return false
}

// startOfSession is the status line before the client wrote its
// transcript (the first turn has not happened): the model and its
// window, 0%.
func startOfSession(opts *statuslineOptions, hook *statusHook) (StatusLine, error) {
	st := StatusLine{SchemaVersion: statuslineSchemaVersion, File: hook.TranscriptPath, Update: "none", Read: "none",
		SessionID: hook.SessionID, Cwd: hook.Cwd}
	o := opts.Est
	o.Model = hookModel(opts, hook)
	if o.Model == "" {
		o.Model = opts.DefaultModel
	}
	if o.Model == "" {
		o.Model = hook.Model.ID
	}
	hookWindow := applyClientWindow(&st, hook, &o)
	st.Model = o.Model
	st.CompactAt = 100 * o.CompactAt
	if st.CompactAt <= 0 {
		st.CompactAt = 100 * estimate.DefaultCompactAt
	}
	st.Basis = estimate.BasisRaw
	if b, err := estimate.Budget(o); err == nil {
		st.Window, st.InputBudget, st.WindowSource = b.Window, b.InputBudget, b.WindowSource
		if hookWindow {
			st.WindowSource = windowFromHook
		}
	}
	st.ToCompact = st.CompactAt
	st.DisplayName = hook.Model.DisplayName
	if st.DisplayName == "" {
		st.DisplayName = st.Model
	}
	return st, nil
}

// contentSafe is st with every field that comes from content (the
// transcript, the hook) neutralised as render.TextSafe does, for --format:
// the template is the user's, its values are not (an SGR sequence in a
// display name would hide the rest of the line, U+202E reverse it).
func contentSafe(st StatusLine) StatusLine {
	for _, p := range []*string{&st.DisplayName, &st.Model, &st.File, &st.Session, &st.SessionID, &st.Cwd, &st.Update, &st.Basis, &st.WindowSource} {
		*p = render.TextSafe(*p)
	}
	return st
}

// The prompt prefix a client sends before any transcript content (its
// system prompt and tool definitions) is not in a fresh transcript: after
// /clear the next request carries it although the transcript holds a few
// lines. The status line remembers, per working directory and model, the
// prefix the latest calibrated session inferred (its prefix_tokens,
// docs/ESTIMATE.md "The anchor") in statusline-prefix.json in the cache
// directory, and adds it to a session that has no recorded request yet
// (budget_basis "inferred_prefix").
const (
	prefixFile       = "statusline-prefix.json"
	basisPrefix      = "inferred_prefix"
	maxPrefixEntries = 64
)

type prefixEntry struct {
	Tokens int   `json:"tokens"`
	At     int64 `json:"at"`
}

func prefixKey(cwd, model string) string { return cwd + "\x00" + model }

// rememberOrApplyPrefix stores the prefix of a calibrated session, or adds
// the remembered one to a session without recorded usage.
func rememberOrApplyPrefix(opts *statuslineOptions, hook *statusHook, st *StatusLine, r *estimate.Result) {
	if r == nil || opts.Est.NoCalibrate {
		return
	}
	if c := r.Calibration; c != nil && c.Anchor == estimate.MethodProject {
		return // the project's own earlier session, read from disk (projectprefix), beats the memory
	}
	path := filepath.Join(opts.CacheDir, prefixFile)
	known := readPrefixes(path)
	// A calibration from recorded requests is remembered; one from the
	// prior (no request recorded yet: estimate's table of what the client
	// sends, docs/ACCURACY.md "The prior") gives way to the prefix this
	// folder's own sessions inferred, which holds the user's own additions
	// (CLAUDE.md, MCP tools, hooks).
	if c := r.Calibration; c != nil && c.Requests > 0 {
		// What a fresh session's first request carries is what this
		// session's first one did (FirstUnrecordedTokens: the user's
		// CLAUDE.md and hooks included; docs/ACCURACY.md "Held-out real
		// transcripts"), known when the whole transcript was read; a tail
		// gives the client's prefix alone.
		prefix := c.PrefixTokens
		if st.Read == readFull && c.FirstUnrecordedTokens > 0 {
			prefix = c.FirstUnrecordedTokens
		}
		if prefix <= 0 {
			return
		}
		k := prefixKey(hook.Cwd, st.Model)
		if e, ok := known[k]; ok && e.Tokens == prefix {
			return
		}
		known[k] = prefixEntry{Tokens: prefix, At: time.Now().Unix()}
		known[prefixKey("", st.Model)] = known[k]
		writePrefixes(path, known)
		return
	}
	e, ok := known[prefixKey(hook.Cwd, st.Model)]
	if !ok {
		e, ok = known[prefixKey("", st.Model)]
	}
	if !ok || e.Tokens <= 0 {
		return
	}
	st.PrefixTokens = e.Tokens
	st.Tokens = st.RawTokens + e.Tokens
	st.Basis = basisPrefix
	if st.InputBudget > 0 {
		st.Pct = 100 * float64(st.Tokens) / float64(st.InputBudget)
		st.ShouldCompact = st.Pct >= st.CompactAt
	}
	st.ToCompact = st.CompactAt - st.Pct
}

// readPrefixes reads the remembered prefixes; anything unreadable is none
// (the file is a cache). It is opened as every cache file is: a regular
// file, no symlink, bounded.
func readPrefixes(path string) map[string]prefixEntry {
	out := map[string]prefixEntry{}
	f, err := osfile.OpenNoFollow(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return out
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > 1<<20 {
		return out
	}
	b := make([]byte, 1<<20)
	n, _ := f.Read(b)
	_ = json.Unmarshal(b[:n], &out)
	return out
}

// writePrefixes replaces the file atomically, keeping the newest entries.
func writePrefixes(path string, known map[string]prefixEntry) {
	if len(known) > maxPrefixEntries {
		keys := make([]string, 0, len(known))
		for k := range known {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return known[keys[i]].At > known[keys[j]].At })
		for _, k := range keys[maxPrefixEntries:] {
			delete(known, k)
		}
	}
	b, err := json.Marshal(known)
	if err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".statusline-prefix-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if errors.Join(werr, cerr) != nil || os.Rename(tmp.Name(), path) != nil {
		_ = os.Remove(tmp.Name())
	}
}

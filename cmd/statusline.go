package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"text/template"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/live"
	"github.com/ctxfold/ctxfold/osfile"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/store"
)

type statuslineOptions struct {
	IO *report.IOStreams
	// In is the hook's JSON (stdin).
	In       io.Reader
	Format   string
	Width    int
	CacheDir string
	Est      estimate.Options
	// Model is an explicit --model; DefaultModel the config's.
	Model        string
	DefaultModel string
	JSON         bool
	Store        store.WriteOptions
	Open         store.OpenOptions
	// Getenv reads the environment (GOGC for the refresh's collector).
	Getenv func(string) string
	// TailMinBytes is the transcript size from which the status line
	// answers from its tail (statusline_tail.go); 0 never does.
	TailMinBytes int64
	// MaxBytes caps the cache (cache-max-bytes; live.Options.MaxBytes).
	MaxBytes int64
	// The flags Est, Model and DefaultModel are resolved from.
	ModelFlags   modelFlags
	CompactAtPct float64
}

// statusHook is the part of Claude Code's statusLine JSON ctxfold reads.
type statusHook struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	Model          struct {
		ID          string `json:"id"`
		DisplayName string `json:"display_name"`
	} `json:"model"`
	ContextWindow *struct {
		Size           int      `json:"context_window_size"`
		UsedPercentage *float64 `json:"used_percentage"`
		CurrentUsage   *struct {
			InputTokens              int `json:"input_tokens"`
			CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
			CacheReadInputTokens     int `json:"cache_read_input_tokens"`
		} `json:"current_usage"`
	} `json:"context_window"`
}

// StatusLine is what the status line shows and what --format and --json
// see: estimate's figures for the live session plus what the hook said.
type StatusLine struct {
	SchemaVersion int `json:"schema_version"`
	estimate.Status
	// DisplayName is the client's name for the model ("Opus 4.1"), else
	// the model id.
	DisplayName string `json:"display_name"`
	// Compactions is how many summary nodes the session holds.
	Compactions int    `json:"compactions"`
	SessionID   string `json:"session_id,omitempty"`
	Cwd         string `json:"cwd,omitempty"`
	// File is the transcript; Session the cache session ctxfold keeps for
	// it ("" before the first turn), and Update how it was brought up to
	// date (live.Entry; "none" before the first turn).
	File    string `json:"file"`
	Session string `json:"session"`
	Update  string `json:"update"`
	// ParsedBytes is how many bytes of File the refresh parsed.
	ParsedBytes int64 `json:"parsed_bytes"`
	// Read is "full" (File's whole cache session) or "tail" (a cache
	// session of File's tail from byte TailFrom on, statusline_tail.go).
	Read     string `json:"read"`
	TailFrom int64  `json:"tail_from,omitempty"`
	// ClientWindow, ClientPct and ClientTokens are the client's own
	// figures, when the hook carried them (0 otherwise).
	ClientWindow int     `json:"client_window,omitempty"`
	ClientPct    float64 `json:"client_used_pct,omitempty"`
	ClientTokens int     `json:"client_tokens,omitempty"`
	// PrefixTokens is the prompt prefix added to a session that has no
	// recorded request yet (budget_basis "inferred_prefix"; see
	// statusline_start.go), 0 otherwise.
	PrefixTokens int `json:"prefix_tokens,omitempty"`
}

// statuslineSchemaVersion is the README's JSON contract, as for every
// other command (report.JSON stamps it).
const statuslineSchemaVersion = report.SchemaVersion

// statusPlaceholder is printed instead of a line when anything failed: the
// hook must never fail, and the error is in the log.
const statusPlaceholder = "ctxfold: n/a (statusline.log)"

const statuslineLong = `Read Claude Code's statusLine JSON on stdin (transcript_path, model,
session_id, cwd and, when present, the client's own context_window figures),
bring a cache session for the transcript up to date (imported afresh the
first time, then with import --append while the file only grows; a file whose
imported bytes changed is imported afresh), and print one line:

  Opus 4.1 ███░░░░░ 43% 86k/200k ↻1 37→80%

the model, the calibrated occupancy of the input budget with a bar (green,
yellow from 60%, red from 80%, as estimate's; no colour with NO_COLOR or
--color never), tokens/window, how many compactions the session holds, and
how many percentage points remain before --compact-at. The line never exceeds
--width columns (default 40). The window is the client's context_window_size
when the hook carries it, unless --window is given.

A Claude Code transcript of at least --tail-min-bytes (default 8 MiB) is
answered from its tail, never imported whole: a copy of its last MiB (more
when that holds too few recorded requests) has its own cache session, and the
calibrated figure is the one the whole file gives (--json: "read": "tail";
raw_tokens is 0). Right after a compaction, until the next reply, and for
other clients' files, the whole file is read.

The cache lives in $XDG_CACHE_HOME/ctxfold (else ~/.cache/ctxfold;
--cache-dir overrides). The command never fails the hook: on any error it
prints a short placeholder, exits 0 and appends the error to statusline.log
in the cache directory.

--format is a Go text/template over the StatusLine fields (see --json for
them: .DisplayName .Pct .Tokens .Window .InputBudget .Compactions .ToCompact
.CompactAt .ClientPct .SessionID …) with the functions bar N (an N-cell bar,
coloured), short N (86k, 1.2M) and pct F (43%).

Claude Code's ~/.claude/settings.json:
  {"statusLine": {"type": "command", "command": "ctxfold statusline", "padding": 0}}`

func newStatuslineCmd(f *Factory, runF func(*statuslineOptions) error) *cobra.Command {
	opts := &statuslineOptions{IO: f.IO, Getenv: f.Getenv}
	cmd := &cobra.Command{
		Use:   "statusline",
		Short: "One-line context occupancy for Claude Code's statusLine hook",
		Long: statuslineLong +
			exitStatusHelp("  statusline itself always exits 0: a failure prints the placeholder and is\n  logged, since the hook must not fail."),
		Example: `  echo '{"transcript_path":"s.jsonl","model":{"id":"claude-sonnet-4-5"}}' | ctxfold statusline
  ctxfold statusline --format '{{.DisplayName}} {{pct .Pct}} ({{.Compactions}} compactions)'
  ctxfold statusline --json < hook.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.In = f.IO.In
			if opts.CacheDir == "" {
				opts.CacheDir, _ = f.cacheDir()
			}
			opts.JSON = f.IO.JSON
			// A bad cache-max-bytes must not fail the hook: the default cap.
			if mb, err := f.cacheMaxBytes(); err == nil {
				opts.MaxBytes = mb
			}
			opts.Store = f.writeOptions("statusline")
			opts.Open = f.openOptions()
			opts.ModelFlags.recordExplicit(cmd)
			est, fallback, err := f.resolveModelOptions(opts.ModelFlags)
			if err == nil {
				compactAt := opts.CompactAtPct
				if compactAt <= 0 || compactAt > 100 {
					err = errorf("--compact-at must be a percentage in (0, 100], got %v", compactAt)
				}
				est.CompactAt = compactAt / 100
			}
			opts.Model, opts.DefaultModel = est.Model, fallback
			est.Model = ""
			opts.Est = est
			if runF != nil {
				if err != nil {
					return err
				}
				return runF(opts)
			}
			runStatusline(cmd.Context(), opts, err)
			return nil
		},
	}
	// A bad flag must not fail the hook either.
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		dir, _ := f.cacheDir()
		runStatusline(c.Context(), &statuslineOptions{IO: f.IO, CacheDir: dir}, err)
		return nil
	})
	fl := cmd.Flags()
	addSetupMarkerFlag(fl) // setup's marker (docs/HOOKS.md)
	addModelFlags(cmd, &opts.ModelFlags)
	fl.StringVar(&opts.Format, "format", "", "a Go text/template over the status fields instead of the default line")
	fl.IntVar(&opts.Width, "width", 40, "never print more than this many columns")
	fl.Int64Var(&opts.TailMinBytes, "tail-min-bytes", tailMinFile, "answer from the transcript's tail when it is at least this big (0: never)")
	fl.StringVar(&opts.CacheDir, "cache-dir", "", "cache directory (default $XDG_CACHE_HOME/ctxfold, else ~/.cache/ctxfold)")
	fl.Float64Var(&opts.CompactAtPct, "compact-at", 100*estimate.DefaultCompactAt, "budget percentage at which a session should compact")
	_ = cmd.RegisterFlagCompletionFunc("model", fixedCompletion(estimate.KnownModels()...))
	_ = cmd.MarkFlagDirname("cache-dir")
	return cmd
}

// runStatusline prints exactly one line, whatever happens.
func runStatusline(ctx context.Context, opts *statuslineOptions, setupErr error) {
	line, err := "", setupErr
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error: %v", r)
			line = ""
		}
		if err != nil {
			logStatusError(opts.CacheDir, err)
			line = statusPlaceholder
		}
		fmt.Fprintln(opts.IO.Out, line)
	}()
	if err != nil {
		return
	}
	line, err = statusline(ctx, opts)
}

func statusline(ctx context.Context, opts *statuslineOptions) (string, error) {
	hook, err := readHook(opts.In)
	if err != nil {
		return "", err
	}
	if hook.TranscriptPath == "" {
		return "", errors.New("the hook JSON has no transcript_path")
	}
	if opts.CacheDir == "" {
		return "", errors.New("no cache directory: set XDG_CACHE_HOME or HOME, or give --cache-dir")
	}
	if _, err := os.Stat(hook.TranscriptPath); errors.Is(err, fs.ErrNotExist) && hook.Model.ID != "" {
		// Before the first turn Claude Code names a transcript it has not
		// written yet: the model and what its first request will carry.
		st, err := startOfSession(opts, hook)
		if err != nil {
			return "", err
		}
		return showStatus(opts, st)
	}
	so := estimate.SessionOptions{Estimate: opts.Est, DefaultModel: opts.DefaultModel, Open: opts.Open}
	so.Estimate.Model = hookModel(opts, hook)
	var st StatusLine
	hookWindow := applyClientWindow(&st, hook, &so.Estimate)
	ts, err := measureTranscript(ctx, hook.TranscriptPath, live.Options{CacheDir: opts.CacheDir, MaxBytes: opts.MaxBytes, Store: opts.Store, ResumeGC: resumeGC(opts.Getenv),
		Prepare: estimate.Warm, Input: input.Options{Env: clientEnv(opts.Getenv)}}, so, opts.TailMinBytes,
		func() func() { return liveGC(opts.Getenv) })
	if err != nil {
		return "", err
	}
	defer ts.Close() // the session stays this commit while it is read
	st.SchemaVersion, st.Status, st.Compactions, st.SessionID, st.Cwd = statuslineSchemaVersion, ts.Status, ts.Compactions, hook.SessionID, hook.Cwd
	st.File, st.Session, st.Update, st.ParsedBytes, st.Read, st.TailFrom = ts.File, ts.Session, ts.Update, ts.ParsedBytes, ts.Read, ts.TailFrom
	if hookWindow {
		st.WindowSource = windowFromHook
	}
	st.DisplayName = hook.Model.DisplayName
	if st.DisplayName == "" {
		st.DisplayName = st.Model
	}
	// From the tail the client's prefix is not known (docs/LIVE.md).
	if ts.Result != nil {
		rememberOrApplyPrefix(opts, hook, &st, ts.Result)
	}
	return showStatus(opts, st)
}

// showStatus is the line (or the JSON object) for st.
func showStatus(opts *statuslineOptions, st StatusLine) (string, error) {
	pal := statusPalette(opts.IO)
	switch {
	case opts.JSON:
		b, err := report.JSONLine(st)
		return string(b), err
	case opts.Format != "":
		return formatStatus(opts.Format, contentSafe(st), pal)
	}
	return defaultStatus(st, pal, opts.Width), nil
}

// readHook reads the hook's JSON; a hook that never closes stdin is not
// waited for forever.
func readHook(in io.Reader) (*statusHook, error) {
	if in == nil {
		return nil, errors.New("no stdin")
	}
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(in, 1<<20))
		done <- result{b, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(5 * time.Second):
		return nil, errors.New("no hook JSON on stdin within 5s")
	}
	if r.err != nil {
		return nil, r.err
	}
	var h statusHook
	if err := json.Unmarshal(r.b, &h); err != nil {
		return nil, fmt.Errorf("the hook JSON on stdin: %w", err)
	}
	return &h, nil
}

func countSummaries(dir string, o store.OpenOptions) (int, error) {
	s, err := store.Open(dir, o)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	n := 0
	for i := range s.Len() {
		if s.IsSummary(i) {
			n++
		}
	}
	return n, nil
}

func quietStreams() *report.IOStreams {
	return &report.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard, ColorMode: "never"}
}

// statusPalette colours unless NO_COLOR (or TERM=dumb) or --color never:
// the hook's stdout is a pipe, but Claude Code shows ANSI colour.
func statusPalette(ios *report.IOStreams) report.Palette {
	c := *ios
	if c.ColorMode != "never" && !c.NoColorEnv {
		c.ColorMode = "always"
	}
	return report.NewPalette(&c)
}

// shortCount is n with a k or M suffix: 950, 86k, 1.2M.
func shortCount(n int) string {
	switch {
	case n >= 10_000_000:
		return fmt.Sprintf("%dM", (n+500_000)/1_000_000)
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%dk", (n+500)/1000)
	}
	return fmt.Sprint(n)
}

func pctText(p float64) string { return fmt.Sprintf("%.0f%%", p) }

// statusBar is an n-cell bar of the budget share, coloured as estimate's:
// a cell is filled per 1/n of the budget, rounded to the nearest cell, so
// 0% (and 1.45% of 8 cells) is an empty bar and no share reads as more
// than it is (estimate's bar marks any occupancy with a cell; a status
// line of 8 cells would show 12.5%).
func statusBar(pal report.Palette, pct float64, n int) string {
	ratio := math.Max(0, math.Min(pct/100, 1))
	filled := int(math.Round(ratio * float64(n)))
	bar := strings.Repeat("█", filled)
	switch {
	case ratio >= 0.80:
		bar = pal.Red(bar)
	case ratio >= 0.60:
		bar = pal.Yellow(bar)
	case filled > 0:
		bar = pal.Green(bar)
	}
	return bar + pal.Dim(strings.Repeat("░", n-filled))
}

// defaultStatus is "Model ███░░░░░ 43% 86k/200k ↻1 37→80%", shortened to
// width columns: the model name is cut first, then fields are dropped
// from the right.
func defaultStatus(st StatusLine, pal report.Palette, width int) string {
	if width <= 0 {
		width = 40
	}
	type part struct{ plain, styled string }
	barCells := 8
	bar := part{strings.Repeat("x", barCells), statusBar(pal, st.Pct, barCells)}
	parts := []part{bar, {pctText(st.Pct), pctText(st.Pct)}}
	if st.Window > 0 {
		t := shortCount(st.Tokens) + "/" + shortCount(st.Window)
		parts = append(parts, part{t, t})
	} else {
		t := shortCount(st.Tokens) + " tok"
		parts = append(parts, part{t, t})
	}
	c := fmt.Sprintf("↻%d", st.Compactions)
	parts = append(parts, part{c, pal.Dim(c)})
	if st.InputBudget > 0 {
		d := fmt.Sprintf("%.0f→%.0f%%", st.ToCompact, st.CompactAt)
		ds := d
		if st.ToCompact <= 0 {
			d = "compact!"
			ds = pal.Red(d)
		}
		parts = append(parts, part{d, ds})
	}
	cols := func(ps []part) int {
		n := 0
		for _, p := range ps {
			n += utf8.RuneCountInString(p.plain) + 1
		}
		return n
	}
	name := render.TextSafe(st.DisplayName)
	name = strings.Join(strings.Fields(name), " ")
	// Drop fields from the right until the line fits with at least a
	// short model name.
	for len(parts) > 2 && cols(parts)+min(6, utf8.RuneCountInString(name)) > width {
		parts = parts[:len(parts)-1]
	}
	room := width - cols(parts)
	name = truncateRunes(name, room)
	var b strings.Builder
	if name != "" {
		b.WriteString(pal.Bold(name))
		b.WriteByte(' ')
	}
	for i, p := range parts {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(p.styled)
	}
	return b.String()
}

// truncateRunes cuts s to at most n runes, ending with … when cut.
func truncateRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	if n == 1 {
		return string(r[:1])
	}
	return string(r[:n-1]) + "…"
}

func formatStatus(format string, st StatusLine, pal report.Palette) (string, error) {
	t, err := template.New("statusline").Funcs(template.FuncMap{
		"bar":   func(n int) string { return statusBar(pal, st.Pct, max(1, min(n, 100))) },
		"short": shortCount,
		"pct":   pctText,
	}).Parse(format)
	if err != nil {
		return "", fmt.Errorf("--format: %w", err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, st); err != nil {
		return "", fmt.Errorf("--format: %w", err)
	}
	// One line, whatever the template wrote; transcript text (a display
	// name, a path) cannot smuggle control characters to the terminal.
	out, _, _ := strings.Cut(b.String(), "\n")
	return safeStyled(out), nil
}

// safeStyled drops control characters except the SGR colour sequences
// the palette itself writes.
func safeStyled(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == 0x1b && strings.HasPrefix(s[i:], "\x1b[") {
			j := i + 2
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';') {
				j++
			}
			if j < len(s) && s[j] == 'm' {
				b.WriteString(s[i : j+1])
				i = j + 1
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// logStatusError appends err to statusline.log in the cache directory,
// keeping the log under 1 MiB; failing to log is silent (the hook must
// not fail).
func logStatusError(cacheDir string, err error) {
	if cacheDir == "" {
		return
	}
	if os.MkdirAll(cacheDir, 0o700) != nil {
		return
	}
	p := filepath.Join(cacheDir, "statusline.log")
	if st, e := os.Lstat(p); e == nil && st.Size() > 1<<20 {
		_ = os.Rename(p, p+".1")
	}
	f, e := osfile.OpenNoFollow(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if e != nil {
		return
	}
	defer f.Close()
	// The error may quote a hostile transcript_path or model id: escaped,
	// so reading the log cannot drive the terminal.
	msg := render.TextSafe(strings.ReplaceAll(err.Error(), "\n", " "))
	fmt.Fprintf(f, "%s %s\n", time.Now().UTC().Format(time.RFC3339), msg)
}

// cacheDir is ctxfold's cache root from the factory's environment.
func (f *Factory) cacheDir() (string, error) {
	getenv := f.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	return live.CacheDirFrom(getenv)
}

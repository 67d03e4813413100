package hook

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ctxfold/ctxfold/audit"
	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/live"
	"github.com/ctxfold/ctxfold/store"
)

// Options configure Run.
type Options struct {
	// CacheDir is ctxfold's cache root (live.DefaultCacheDir).
	CacheDir string
	Store    store.WriteOptions
	Open     store.OpenOptions
	// BudgetTokens caps the injected context; 0: BudgetShare of the
	// model's window.
	BudgetTokens int
	// BudgetShare is the share of the window used when BudgetTokens is 0
	// (DefaultBudgetShare when 0).
	BudgetShare float64
	// Model overrides the model the budget and the tokenizer come from
	// (else the hook's model, else the session's).
	Model string
	// Client names the client in the injected line ("Claude Code").
	Client string
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// ResumeGC is passed to the refresh (live.Options.ResumeGC).
	ResumeGC func() (restore func())
	// Env is the user's environment, where a dialect whose sessions live
	// in a store of several finds the one a hook input names
	// (Dialect.Format).
	Env input.Env
	// Emit prints the hook's output. Run calls it while it holds the
	// state's lock, after the injection is recorded as claimed and before
	// it is recorded as delivered: concurrent hooks of one session never
	// print the same compaction twice, and a run killed before it printed
	// leaves the claim unconfirmed, so the next prompt injects it. Nil:
	// the output is Result.Output, taken as delivered.
	Emit func(out []byte) error
}

// DefaultBudgetShare is the default budget of the injected facts: 2% of
// the window (4,000 tokens of a 200k window).
const DefaultBudgetShare = 0.02

// minBudget is the least budget a window share gives.
const minBudget = 256

// Injection is one compaction whose dropped facts were injected.
type Injection struct {
	SummaryID string    `json:"summary_id"`
	At        time.Time `json:"at"`
	Event     string    `json:"event"`
	// Facts is how many facts the covered turns hold, Missing how many the
	// client's summary (and the kept tail) dropped, Shown how many of those
	// (and pinned texts) the context carries, in Tokens of Budget.
	Facts   int `json:"facts"`
	Missing int `json:"missing"`
	Shown   int `json:"shown"`
	Tokens  int `json:"tokens"`
	Budget  int `json:"budget"`
	// Unconfirmed is set while the injection is claimed but not yet
	// printed (Options.Emit): found by a later run, its printing run died.
	Unconfirmed bool `json:"unconfirmed,omitempty"`
}

// Result is what one hook run did.
type Result struct {
	Event string
	// Transcript is the transcript the run read (the input's, or the one
	// the client's dialect found: Dialect.Transcript).
	Transcript string
	// Output is the JSON to print on stdout (nil: print nothing).
	Output []byte
	// Update is how the cache session was brought up to date ("" not
	// touched).
	Update string
	// Injected is set when this run injected a compaction's facts.
	Injected *Injection
	// Context is the injected text.
	Context string
	// Ledger is set when this run handed the client's summariser the fact
	// ledger (Dialect.Ledger), LedgerText the block.
	Ledger     *LedgerRun
	LedgerText string
}

// Run handles one hook event:
//   - PreCompact: the cache session is brought up to date, so every turn
//     the client is about to fold is in ctxfold's store; a compaction is
//     pending. A client that lets the hook add to its summariser's request
//     (Dialect.Ledger) gets the fact ledger of those turns as the output.
//   - SessionStart with source compact, PostCompact: a compaction is
//     pending; if the client already wrote its record, it is audited and its
//     dropped facts injected (SessionStart only).
//   - UserPromptSubmit: only while a compaction is pending, its record is
//     audited and its dropped facts injected. Claude Code 2.1.328 writes the
//     record after SessionStart and PostCompact ran (docs/HOOKS.md), so this
//     is where they reach the model there.
//
// Any other event does nothing. Run prints only through Options.Emit,
// under the state's lock; without it the caller prints Result.Output.
func Run(ctx context.Context, in Input, opts Options) (*Result, error) {
	res := &Result{Event: in.Event}
	d := DialectOf(opts.Client)
	relevant, prompt := d.handles(in)
	if !relevant {
		return res, nil
	}
	if opts.CacheDir == "" {
		return nil, errors.New("no cache directory")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	abs, session, err := locate(&in, d, opts.Env)
	if err != nil {
		return nil, err
	}
	res.Transcript = in.TranscriptPath
	sp := statePath(opts.CacheDir, stateKey(abs, session))
	if prompt && !loadState(sp, abs).Pending {
		if idle, err := d.idle(ctx, sp, abs, opts.Now); idle {
			return res, err
		}
	}
	unlock, err := lockState(ctx, sp)
	if err != nil {
		return nil, err
	}
	defer unlock()
	st := loadState(sp, abs)
	if prompt && !st.Pending {
		return res, nil // another prompt's hook injected it meanwhile
	}
	entry, err := live.Open(ctx, abs, live.Options{CacheDir: opts.CacheDir, Store: opts.Store, ResumeGC: opts.ResumeGC,
		Input: input.Options{SessionID: session, Env: opts.Env}})
	if err != nil {
		return nil, err
	}
	defer entry.Close()
	res.Update = entry.Update
	g, err := dag.Open(entry.Session, opts.Open)
	if err != nil {
		return nil, err
	}
	defer g.S.Close()
	active := activeSummaryID(g)
	if !st.Pending {
		st.Pending, st.Before, st.PendingSince = true, active, opts.Now().UTC()
	}
	if in.Event == EventPreCompact && d.Ledger {
		return res, handLedger(ctx, g, entry.Session, in, opts, st, sp, res)
	}
	if in.Event == EventPreCompact || in.Event == EventPostCompact || active == "" || active == st.Before {
		return res, st.save(sp)
	}
	if prev := st.find(active); prev != nil && !prev.Unconfirmed {
		st.Pending = false
		return res, st.save(sp)
	}
	st.forget(active) // claimed by a run that died before it printed
	inj, text, err := inject(ctx, g, entry.Session, active, in, opts)
	if err != nil {
		return nil, err
	}
	res.Injected, res.Context = inj, text
	if text == "" {
		st.Pending, st.Injected = false, append(st.Injected, *inj)
		return res, st.save(sp)
	}
	out, err := d.output(in, text)
	if err != nil {
		return nil, err
	}
	return res, deliver(st, sp, *inj, out, res, opts.Emit)
}

// deliver records the injection as claimed, prints it (emit) and records
// it as delivered; a print that fails gives the claim back.
func deliver(st *state, sp string, inj Injection, out []byte, res *Result, emit func([]byte) error) error {
	inj.Unconfirmed = true
	st.Injected = append(st.Injected, inj)
	if err := st.save(sp); err != nil {
		return err // not printed: it would be injected again next time
	}
	if emit == nil {
		res.Output = out
	} else if err := emit(out); err != nil {
		st.forget(inj.SummaryID)
		_ = st.save(sp)
		return fmt.Errorf("printing the injection: %w", err)
	}
	st.Pending = false
	st.Injected[len(st.Injected)-1].Unconfirmed = false
	res.Injected.Unconfirmed = false
	return st.save(sp)
}

// inject audits summary id and composes the context of what it dropped.
func inject(ctx context.Context, g *dag.Graph, dir, id string, in Input, opts Options) (*Injection, string, error) {
	pins, err := g.S.Pins()
	if err != nil {
		return nil, "", err
	}
	results, err := audit.Run(ctx, g, audit.Options{SummaryID: id, Pinned: pins})
	if err != nil {
		return nil, "", err
	}
	r := results[0]
	enc, budget := budgetFor(ctx, dir, in, opts)
	items, err := dropped(g, r)
	if err != nil {
		return nil, "", err
	}
	c, err := Compose(items, ComposeOptions{Encoding: enc, Budget: budget, Total: r.Total,
		Missing: r.Total - r.Kept, Client: opts.Client, Transcript: recallArg(in)})
	if err != nil {
		return nil, "", err
	}
	return &Injection{SummaryID: id, At: opts.Now().UTC(), Event: in.clientEvent(), Facts: r.Total,
		Missing: r.Total - r.Kept, Shown: c.Shown, Tokens: c.Tokens, Budget: budget}, c.Text, nil
}

// budgetFor resolves the tokenizer and the budget from the model's window
// through estimate (the calibrated window the status line uses); a model
// estimate cannot resolve falls back to o200k_base and a 200k window.
func budgetFor(ctx context.Context, dir string, in Input, opts Options) (string, int) {
	share := opts.BudgetShare
	if share <= 0 {
		share = DefaultBudgetShare
	}
	so := estimate.SessionOptions{Open: opts.Open}
	so.Estimate.Model = opts.Model
	if so.Estimate.Model == "" {
		so.Estimate.Model = in.Model
	}
	enc, window := estimate.O200kBase, 200_000
	out := estimate.Session(ctx, dir, so)
	if out.Err != nil && so.Estimate.Model != "" {
		so.Estimate.Model = "" // a model name the table does not know: the session's
		out = estimate.Session(ctx, dir, so)
	}
	if out.Err == nil && out.Result != nil {
		if out.Result.Encoding != "" {
			enc = out.Result.Encoding
		}
		if out.Result.Window > 0 {
			window = out.Result.Window
		}
	}
	if opts.BudgetTokens > 0 {
		return enc, opts.BudgetTokens
	}
	return enc, max(minBudget, int(share*float64(window)))
}

// activeSummaryID is the id of g's active summary, "" when none.
func activeSummaryID(g *dag.Graph) string {
	if a := g.ActiveSummary(); a >= 0 {
		if n, err := g.S.Node(a); err == nil {
			return n.ID
		}
	}
	return ""
}

package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctxfold/ctxfold/audit"
	"github.com/ctxfold/ctxfold/compact"
	"github.com/ctxfold/ctxfold/dag"
	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/export"
	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/store"
)

// uncompactFileOptions are uncompact FILE --export's: the client's
// transcript, read (never written) and handed back as a new session of
// that client with its own latest compaction taken back.
type uncompactFileOptions struct {
	File       string
	To         export.Target
	ClientHome string
	Import     importer.Options
	Estimate   estimate.SessionOptions
	Export     export.Options
	Open       store.OpenOptions
	// Recompact compacts the covered turns again with ctxfold's compact
	// (Compact's targets and summarizer) before the export.
	Recompact bool
	Compact   compact.Options
}

// uncompactFileJSON is the --json object of uncompact FILE --export.
type uncompactFileJSON struct {
	File      string `json:"file"`
	SessionID string `json:"session_id"`
	Output    string `json:"output"`
	Resume    string `json:"resume"`
	compact.UndoResult
	Tokens int `json:"tokens"`
	Budget int `json:"input_budget"`
	// Recompact is what --recompact did (absent without it).
	Recompact *recompactJSON `json:"recompact,omitempty"`
}

// recompactJSON reports the re-compaction of a client's compaction: the
// summary ctxfold wrote in place of the client's, and how many of the
// facts 'ctxfold audit' found the client's summary dropped it keeps.
type recompactJSON struct {
	Outcome       string `json:"outcome"`
	Reason        string `json:"reason,omitempty"`
	SummaryID     string `json:"summary_id"`
	Covered       int    `json:"covered"`
	TokensBefore  int    `json:"tokens_before"`
	TokensAfter   int    `json:"tokens_after"`
	ClientDropped int    `json:"client_dropped"`
	// KeptOfDropped counts the client-dropped facts the new view carries;
	// StillMissing lists the others.
	KeptOfDropped int          `json:"kept_of_client_dropped"`
	StillMissing  []audit.Fact `json:"still_missing"`
}

// tooBigError: the history handed back whole does not fit the model's
// input budget (exit 5); nothing was written.
type tooBigError struct {
	File           string
	Tokens, Budget int
	// Recompacted: the figures are of the view after --recompact.
	Recompacted bool
}

func (e *tooBigError) Error() string {
	if e.Recompacted {
		return fmt.Sprintf("%s: the history recompacted by ctxfold is still %d tokens, over the model's input budget of %d: the client could not send it", e.File, e.Tokens, e.Budget)
	}
	return fmt.Sprintf("%s: the history without its compaction is %d tokens, over the model's input budget of %d: the client could not send it", e.File, e.Tokens, e.Budget)
}

func (e *tooBigError) Hint() string {
	if e.Recompacted {
		return "give a smaller --keep-tokens or --max-summary-tokens"
	}
	return "add --recompact (ctxfold's fact-keeping summary in place of the client's), or import it (ctxfold import FILE -o DIR), then 'ctxfold uncompact DIR', 'ctxfold compact DIR' with ctxfold's fact-keeping summary, and 'ctxfold export DIR'"
}

// runUncompactFile imports the transcript into a scratch session, takes
// its latest compaction back, checks the whole history fits the window and
// exports it as a new session of the same client beside the original,
// which is never touched.
func runUncompactFile(ctx context.Context, ios *report.IOStreams, jsonOut bool, o uncompactFileOptions) error {
	scratch, err := os.MkdirTemp("", "ctxfold-uncompact-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	o.Import.Files, o.Import.Out = []string{o.File}, filepath.Join(scratch, "s")
	if _, err := importer.Import(ctx, o.Import); err != nil {
		return err
	}
	// What the client's summary dropped, before it is taken back.
	var dropped []audit.Fact
	if o.Recompact {
		if dropped, err = missingFacts(ctx, o.Import.Out, o.Open); err != nil {
			return err
		}
	}
	res, err := compact.Undo(ctx, compact.UndoOptions{Dir: o.Import.Out, Store: o.Import.Store, Now: o.Export.Now})
	if err != nil {
		return err
	}
	if res.NoOp {
		return &compact.UndoError{Dir: o.File, ID: "", Msg: "holds no compaction of its client to take back"}
	}
	var rc *recompactJSON
	if o.Recompact {
		if rc, err = recompact(ctx, o, dropped); err != nil {
			return err
		}
	}
	measured := estimate.Session(ctx, o.Import.Out, o.Estimate)
	if measured.Err != nil {
		return measured.Err
	}
	tokens, budget := measured.Result.Total, measured.Result.InputBudget
	if c := measured.Result.Calibration; c != nil && c.CalibratedTotal > 0 {
		tokens = c.CalibratedTotal
	}
	if budget > 0 && tokens > budget {
		return &tooBigError{File: o.File, Tokens: tokens, Budget: budget, Recompacted: o.Recompact}
	}
	out, err := exportScratch(ctx, o)
	if err != nil {
		return err
	}
	if jsonOut {
		return report.JSON(ios.Out, uncompactFileJSON{File: o.File, SessionID: out.SessionID, Output: out.Path,
			Resume: out.Resume, UndoResult: res, Tokens: tokens, Budget: budget, Recompact: rc})
	}
	fmt.Fprintf(ios.Out, "undone: %s no longer stands in for its %d turns (%d tokens, input budget %d)\n",
		render.TextSafe(res.Undone), res.Covered, tokens, budget)
	if rc != nil && rc.SummaryID != "" {
		fmt.Fprintf(ios.Out, "recompacted: %s stands in for %d turns (%d → %d tokens); it keeps %d of the %d facts the client's summary dropped\n",
			render.TextSafe(rc.SummaryID), rc.Covered, rc.TokensBefore, rc.TokensAfter, rc.KeptOfDropped, rc.ClientDropped)
	} else if rc != nil {
		fmt.Fprintf(ios.Out, "not recompacted (%s): the whole history is handed back\n", render.TextSafe(rc.Reason))
	}
	fmt.Fprintf(ios.Out, "wrote %s (%d lines); %s is unchanged\n", render.TextSafe(out.Path), out.Lines, render.TextSafe(o.File))
	fmt.Fprintf(ios.Out, "resume: %s\n", render.TextSafe(out.Resume))
	return nil
}

// exportScratch writes the scratch session as a new session of the
// client where it looks for it, under a fresh id.
func exportScratch(ctx context.Context, o uncompactFileOptions) (*export.Result, error) {
	g, err := dag.Open(o.Import.Out, o.Open)
	if err != nil {
		return nil, err
	}
	defer g.S.Close()
	o.Export.SessionID = export.NewUUID()
	if o.Export.CWD == "" {
		head, _, _, err := input.Peek(o.File, 64<<10)
		if err == nil {
			o.Export.CWD = input.FirstString(head, "cwd", nil)
		}
	}
	path := clientPathFor(o.To, o.ClientHome, o.Export)
	if o.To == export.Gemini {
		path = geminiBeside(&o)
	}
	var res *export.Result
	err = export.WriteFile(path, false, func(w io.Writer) error {
		res, err = export.Export(ctx, g, w, o.To, o.Export)
		return err
	})
	if err != nil {
		return nil, err
	}
	res.Path, res.ClientPath, res.Resume = path, path, export.ResumeCommand(o.To, res.SessionID)
	if o.To != export.Codex && o.Export.CWD != "" {
		res.Resume = fmt.Sprintf("(cd %s && %s)", shellQuote(o.Export.CWD), res.Resume)
	}
	return res, nil
}

// geminiBeside is where a Gemini CLI session goes: beside FILE when FILE is
// in a chats folder of Gemini CLI (its projectHash and its project folder
// are then the original's), else where the CLI looks for the current
// directory's sessions.
func geminiBeside(o *uncompactFileOptions) string {
	chats := filepath.Dir(o.File)
	if filepath.Base(chats) != "chats" {
		if o.Export.CWD == "" {
			o.Export.CWD, _ = os.Getwd()
		}
		return clientPathFor(export.Gemini, o.ClientHome, o.Export)
	}
	if head, _, _, err := input.Peek(o.File, 64<<10); err == nil {
		o.Export.ProjectHash = input.FirstString(head, "projectHash", nil)
	}
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(chats), ".project_root")); err == nil {
		o.Export.CWD = strings.TrimSpace(string(b))
	}
	return filepath.Join(chats, export.GeminiFileName(o.Export.SessionID, o.Export.Now()))
}

// recompact runs ctxfold's compact on the scratch session, its client's
// summary taken back, and audits the new summary against what the
// client's dropped.
func recompact(ctx context.Context, o uncompactFileOptions, dropped []audit.Fact) (*recompactJSON, error) {
	co := o.Compact
	co.Dir, co.Store, co.Open, co.Now = o.Import.Out, o.Import.Store, o.Open, o.Export.Now
	co.Estimate, co.DefaultModel = o.Estimate.Estimate, o.Estimate.DefaultModel
	res, err := compact.Compact(ctx, co)
	if err != nil {
		return nil, err
	}
	out := &recompactJSON{Outcome: res.Outcome, Reason: res.Reason, ClientDropped: len(dropped), StillMissing: []audit.Fact{}}
	if res.Outcome != compact.OutcomeSucceeded {
		return out, nil
	}
	out.SummaryID, out.Covered, out.TokensBefore, out.TokensAfter = res.SummaryID, len(res.CoversIDs), res.TokensBefore, res.TokensAfter
	missing, err := missingFacts(ctx, o.Import.Out, o.Open)
	if err != nil {
		return nil, err
	}
	lost := map[string]bool{}
	for _, f := range missing {
		lost[string(f.Kind)+"\x00"+f.Text] = true
	}
	for _, f := range dropped {
		if lost[string(f.Kind)+"\x00"+f.Text] {
			out.StillMissing = append(out.StillMissing, f)
		} else {
			out.KeptOfDropped++
		}
	}
	return out, nil
}

// missingFacts are the facts 'ctxfold audit' finds the active summary
// of dir dropped (none without an active summary).
func missingFacts(ctx context.Context, dir string, open store.OpenOptions) ([]audit.Fact, error) {
	g, err := dag.Open(dir, open)
	if err != nil {
		return nil, err
	}
	defer g.S.Close()
	if g.ActiveSummary() < 0 {
		return nil, nil
	}
	results, err := audit.Run(ctx, g, audit.Options{})
	if err != nil || len(results) == 0 {
		return nil, err
	}
	var out []audit.Fact
	for _, k := range results[0].Kinds {
		out = append(out, k.Missing...)
	}
	return out, nil
}

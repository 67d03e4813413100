package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

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
}

// tooBigError: the history handed back whole does not fit the model's
// input budget (exit 5); nothing was written.
type tooBigError struct {
	File           string
	Tokens, Budget int
}

func (e *tooBigError) Error() string {
	return fmt.Sprintf("%s: the history without its compaction is %d tokens, over the model's input budget of %d: the client could not send it", e.File, e.Tokens, e.Budget)
}

func (e *tooBigError) Hint() string {
	return "import it (ctxfold import FILE -o DIR), then 'ctxfold uncompact DIR', 'ctxfold compact DIR' with ctxfold's fact-keeping summary, and 'ctxfold export DIR'"
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
	res, err := compact.Undo(ctx, compact.UndoOptions{Dir: o.Import.Out, Store: o.Import.Store, Now: o.Export.Now})
	if err != nil {
		return err
	}
	if res.NoOp {
		return &compact.UndoError{Dir: o.File, ID: "", Msg: "holds no compaction of its client to take back"}
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
		return &tooBigError{File: o.File, Tokens: tokens, Budget: budget}
	}
	out, err := exportScratch(ctx, o)
	if err != nil {
		return err
	}
	if jsonOut {
		return report.JSON(ios.Out, uncompactFileJSON{File: o.File, SessionID: out.SessionID, Output: out.Path,
			Resume: out.Resume, UndoResult: res, Tokens: tokens, Budget: budget})
	}
	fmt.Fprintf(ios.Out, "undone: %s no longer stands in for its %d turns (%d tokens, input budget %d)\n",
		render.TextSafe(res.Undone), res.Covered, tokens, budget)
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
	path := export.ClaudeCodePath(o.ClientHome, o.Export.CWD, o.Export.SessionID)
	if o.To == export.Codex {
		path = export.CodexPath(o.ClientHome, o.Export.SessionID, o.Export.Now())
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
	if o.To == export.ClaudeCode && o.Export.CWD != "" {
		res.Resume = fmt.Sprintf("(cd %s && %s)", shellQuote(o.Export.CWD), res.Resume)
	}
	return res, nil
}

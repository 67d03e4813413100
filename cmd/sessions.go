package cmd

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/live"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
)

type sessionsOptions struct {
	IO     *report.IOStreams
	JSON   bool
	Client string
	// Measure is how many of the newest sessions are measured through
	// their cache sessions (occupancy, compactions); -1 all, 0 none.
	Measure    int
	ModelFlags modelFlags
	Env        input.Env
	Live       live.Options
	Estimate   estimate.SessionOptions
	LiveGC     func() func()
}

// sessionLine is one session of `ctxfold sessions`: where the client keeps
// it and, when measured, its calibrated occupancy (the status line's
// figures) and the compactions in it.
type sessionLine struct {
	Client    string `json:"client"`
	File      string `json:"file"`
	SessionID string `json:"session_id,omitempty"`
	Project   string `json:"project,omitempty"`
	Updated   string `json:"updated"`
	Model     string `json:"model,omitempty"`
	Bytes     int64  `json:"bytes"`
	// Measured is false for a session past --measure: the figures below
	// are then absent.
	Measured    bool             `json:"measured"`
	Status      *estimate.Status `json:"status,omitempty"`
	Compactions *int             `json:"compactions,omitempty"`
	ReadError   string           `json:"read_error,omitempty"`
}

func newSessionsCmd(f *Factory, runF func(*sessionsOptions) error) *cobra.Command {
	opts := &sessionsOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List every session of every supported agent on this machine, newest first",
		Long: `List the sessions the agents ctxfold reads keep on this machine, newest first,
so a transcript is found without knowing where each agent hides it: client,
last activity, project directory, model, and for the newest --measure sessions
the calibrated occupancy (the status line's figure, through the same cache
estimate FILE uses) and the compactions so far. The FILE column is what the
other commands take (estimate FILE, render FILE, audit FILE …), and SESSION the
client's id, which they take as --session ID when FILE is a database.

Where each client keeps its sessions (each client's own variable moves it):
  claude-code  $CLAUDE_CONFIG_DIR or ~/.claude: projects/<project>/<id>.jsonl
  codex        $CODEX_HOME or ~/.codex: sessions/YYYY/MM/DD/rollout-*.jsonl[.zst],
               archived_sessions/
  gemini       ~/.gemini/tmp/<project>/chats/session-*.jsonl
  qwen-code    $QWEN_RUNTIME_DIR, $QWEN_HOME or ~/.qwen: projects/<project>/chats/<id>.jsonl
  copilot      $COPILOT_HOME or ~/.copilot: session-state/<id>/events.jsonl
  droid        $FACTORY_HOME_OVERRIDE or ~: .factory/sessions/<project>/<id>.jsonl
  pi           $PI_CODING_AGENT_SESSION_DIR, $PI_CODING_AGENT_DIR or ~/.pi/agent: sessions/
  opencode     $OPENCODE_DB, or $XDG_DATA_HOME/opencode (~/.local/share/opencode): opencode.db
  kilo         $KILO_DB, or ~/.local/share/kilo: kilo.db
  openclaw     $OPENCLAW_STATE_DIR or ~/.openclaw: agents/<agent>/agent/openclaw-agent.sqlite,
               and the older agents/<agent>/sessions/*.jsonl (pi's format)
  crush        each project's .crush/crush.db that Crush lists in its projects.json
               ($CRUSH_GLOBAL_DATA, $XDG_DATA_HOME/crush or ~/.local/share/crush)
A session in a database is listed with its id: the other commands read the
database as its most recently active session.
A client that is not installed lists nothing. --json prints one object per
session, one per line.` + exitStatusHelp(""),
		Example: `  ctxfold sessions
  ctxfold sessions --client codex --measure 0
  ctxfold estimate "$(ctxfold sessions --json | head -1 | jq -r .file)"`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.resolveSessions(cmd, opts); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runSessions(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Client, "client", "", "list only this client's sessions: "+strings.Join(importer.Finders(), ", "))
	fl.IntVar(&opts.Measure, "measure", 10, "measure the occupancy of the newest N sessions (0: none, -1: all)")
	addModelFlags(cmd, &opts.ModelFlags)
	_ = cmd.RegisterFlagCompletionFunc("client", fixedCompletion(importer.Finders()...))
	return cmd
}

// resolveSessions checks the flags and fills the options: where to look
// (HOME and the clients' variables), the cache and the model options.
func (f *Factory) resolveSessions(cmd *cobra.Command, opts *sessionsOptions) error {
	if opts.Client != "" && !slices.Contains(importer.Finders(), opts.Client) {
		return &UsageError{Err: fmt.Errorf("--client must be one of %s, got %q", strings.Join(importer.Finders(), ", "), opts.Client)}
	}
	if opts.Measure < -1 {
		return &UsageError{Err: fmt.Errorf("--measure must be a count ≥ 0, or -1 for all; got %d", opts.Measure)}
	}
	opts.ModelFlags.recordExplicit(cmd)
	est, fallback, err := f.resolveModelOptions(opts.ModelFlags)
	if err != nil {
		return err
	}
	opts.Estimate = estimate.SessionOptions{Estimate: est, DefaultModel: fallback, Open: f.openOptions()}
	if opts.Measure != 0 {
		if opts.Live, err = f.liveOptions(); err != nil {
			return err
		}
	}
	opts.LiveGC = func() func() { return liveGC(f.Getenv) }
	opts.Env = f.clientEnv()
	opts.JSON = f.IO.JSON
	return nil
}

func runSessions(ctx context.Context, opts *sessionsOptions) error {
	found, errs := importer.Find(opts.Env, opts.Client)
	for _, err := range errs {
		warnf(opts.IO.ErrOut, "%s", err)
	}
	lines := make([]sessionLine, len(found))
	progress := report.NewProgress(opts.IO, "measuring (sessions)", measured(opts.Measure, len(found)))
	for i, s := range found {
		lines[i] = sessionLine{Client: s.Client, File: s.File, SessionID: s.SessionID,
			Project: s.Project, Updated: s.Updated.UTC().Format(time.RFC3339), Model: s.Model, Bytes: s.Bytes}
		if i < measured(opts.Measure, len(found)) {
			if err := ctx.Err(); err != nil {
				progress.Done()
				return err
			}
			measureFound(ctx, opts, s, &lines[i])
			progress.Add(1)
		}
	}
	progress.Done()
	if len(found) == 0 && opts.IO.StderrTTY {
		fmt.Fprintln(opts.IO.ErrOut, "no sessions found")
	}
	if opts.JSON {
		for _, l := range lines {
			if err := report.JSON(opts.IO.Out, l); err != nil {
				return err
			}
		}
		return nil
	}
	return writeSessions(opts.IO, lines)
}

// measured is how many of n sessions --measure covers.
func measured(measure, n int) int {
	if measure < 0 {
		return n
	}
	return min(measure, n)
}

// measureFound fills the occupancy and compactions of one session: the
// status line's measurement of its file (from the tail of a large one).
// A session that cannot be read is listed with why, never dropped.
func measureFound(ctx context.Context, opts *sessionsOptions, s input.Found, line *sessionLine) {
	lo := opts.Live
	lo.Input.SessionID = s.SessionID
	ts, err := measureTranscript(ctx, s.File, lo, opts.Estimate, tailMinFile, opts.LiveGC)
	if err != nil {
		line.ReadError = oneLine(err)
		return
	}
	defer ts.Close()
	status, n := ts.Status, ts.Compactions
	line.Measured, line.Status, line.Compactions = true, &status, &n
	if line.Model == "" {
		line.Model = status.Model
	}
}

// oneLine is an error as one line of text (a table cell, a JSON field).
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// writeSessions prints the sessions as a table on a terminal, else as
// tab-separated columns.
func writeSessions(ios *report.IOStreams, lines []sessionLine) error {
	row := func(l sessionLine) []string {
		occ, comp := "-", "-"
		if l.Status != nil {
			occ = strconv.FormatFloat(l.Status.Pct, 'f', 1, 64) + "%"
			comp = strconv.Itoa(*l.Compactions)
		} else if l.ReadError != "" {
			occ = "error"
		}
		return []string{l.Client, l.Updated, render.TextSafe(l.Project), render.TextSafe(l.Model), occ, comp, render.TextSafe(l.File), render.TextSafe(l.SessionID)}
	}
	if !ios.StdoutTTY {
		var b strings.Builder
		for _, l := range lines {
			b.WriteString(strings.Join(row(l), "\t"))
			b.WriteByte('\n')
		}
		_, err := fmt.Fprint(ios.Out, b.String())
		return err
	}
	align := tw.CellAlignment{PerColumn: []tw.Align{tw.AlignLeft, tw.AlignLeft, tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignLeft, tw.AlignLeft}}
	t := tablewriter.NewTable(ios.Out, tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignmentConfig(align), tablewriter.WithRowAlignmentConfig(align))
	t.Header("client", "updated", "project", "model", "occupancy", "compactions", "file", "session")
	for _, l := range lines {
		if err := t.Append(row(l)); err != nil {
			return err
		}
	}
	return t.Render()
}

// Package cmd is the thin cobra/viper wiring of ctxfold: each command binds
// flags into an options struct and calls a run function with no cobra types
// in it. Only this package reads flags, config files, the environment and
// os.Std*; only Main decides the exit code.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
	"github.com/spf13/viper"
	"golang.org/x/term"

	"github.com/ctxfold/ctxfold/live"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/transcript"
)

// Factory holds what every command needs injected: streams, configuration
// and the clock. Tests build one with fake streams.
type Factory struct {
	IO     *report.IOStreams
	Config *viper.Viper
	Now    func() time.Time
	Getenv func(string) string
	// ConfigFile is the file the config was read from ("" when none).
	ConfigFile string
	// Settings are the whitelisted settings with their sources, and
	// ConfigWarnings the config file's unknown keys (cmd/config_load.go).
	Settings       map[string]Setting
	ConfigWarnings []string
	// ctx is Run's context, for the session opens of openOptions.
	ctx context.Context
	// liveFiles maps the cache sessions of this run's transcript file
	// arguments to their files, for errors to name the file (fileHints).
	liveFiles map[string]string
	// liveEntries are the cache entries of transcript-file arguments,
	// held shared until the command ends (live: a refresh by
	// another process waits for the readers of its session).
	liveEntries []*live.Entry
	// prepareLive is live.Options.Prepare for this run's transcript
	// files (estimate sets it: estimate.Warm).
	prepareLive func(session string)
	// liveFrom is --from of a command that reads transcript files: the
	// import format of its file arguments (addFromFlag).
	liveFrom string
	// liveSession is --session of those commands: the session of a
	// database argument ("": the most recently active).
	liveSession string
	// global holds the persistent flags, once loadConfig has resolved
	// them (flag > environment > config file > default).
	global globalFlags
}

// globalFlags are the persistent flags every command inherits. loadConfig
// writes an environment or config-file value into the flag itself, so
// these fields hold the resolved setting (of a command that parses its
// flags: shell completion does not, see loadConfig).
type globalFlags struct {
	JSON         bool
	Color        string
	ConfigFile   string
	LockTimeout  time.Duration
	MaxLineBytes int
}

// interruptGrace is how long a command has to stop after Ctrl-C or SIGTERM.
const interruptGrace = 3 * time.Second

// Main runs ctxfold with the process's arguments and streams and returns
// the exit code. It is the only function that looks at os.Args and os.Std*.
func Main() int {
	setGCPercent(os.Getenv)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	interrupts := make(chan os.Signal, 1)
	signal.Notify(interrupts, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(interrupts)
	go func() {
		if _, ok := <-interrupts; !ok {
			return
		}
		// The first signal cancels the work; commands stop at their next
		// check and exit 130. A second signal ends the process at once,
		// and so does the grace period running out (a command busy in a
		// long computation): every session write is crash-safe, so ending
		// here never leaves a session that does not open.
		cancel()
		signal.Reset(os.Interrupt, syscall.SIGTERM)
		time.Sleep(interruptGrace)
		fmt.Fprintln(os.Stderr, "ctxfold: interrupted")
		os.Exit(ExitInterrupted)
	}()
	ios := &report.IOStreams{
		In:        os.Stdin,
		Out:       os.Stdout,
		ErrOut:    os.Stderr,
		StdoutTTY: isTerminal(os.Stdout),
		StderrTTY: isTerminal(os.Stderr),
		ColorMode: "auto",
	}
	ios.NoColorEnv = report.NoColorFromEnv(os.Getenv)
	if ios.StdoutTTY {
		if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil {
			ios.TerminalWidth = w
		}
	}
	f := &Factory{IO: ios, Now: time.Now, Getenv: os.Getenv}
	return Run(ctx, f, os.Args[1:])
}

func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// Run executes one command line and returns its exit code. Errors are
// printed here, once, as "ctxfold: error: …".
func Run(ctx context.Context, f *Factory, args []string) int {
	return runTree(ctx, f, args, NewRootCmd)
}

// runTree is Run over the command tree newRoot builds: tests build one
// whose command under test has a runF seam (flags → options, not run).
func runTree(ctx context.Context, f *Factory, args []string, newRoot func(*Factory) *cobra.Command) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(f.IO.ErrOut, "ctxfold: internal error: %v\n", r)
			fmt.Fprintf(f.IO.ErrOut, "ctxfold: hint: this is a bug; please report it with the command line and %s\n", versionLine())
			if f.Getenv != nil && f.Getenv("CTXFOLD_DEBUG") != "" {
				fmt.Fprintf(f.IO.ErrOut, "%s", debug.Stack())
			}
			code = ExitInternal
		}
	}()
	f.ctx = ctx
	defer func() {
		for _, e := range f.liveEntries {
			e.Close()
		}
		f.liveEntries = nil
	}()
	if f.Getenv == nil {
		f.Getenv = func(string) string { return "" }
	}
	if f.Now == nil {
		f.Now = time.Now
	}
	if f.Config == nil {
		f.Config = viper.New()
	}
	// stdout is counted: an error after a command wrote its own JSON
	// (estimate's read_error) is not reported twice.
	out := &countingWriter{w: f.IO.Out}
	f.IO.Out = out
	defer func() { f.IO.Out = out.w }()
	root := newRoot(f)
	root.SetArgs(args)
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	c, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, ctx.Err())) {
		fmt.Fprintln(f.IO.ErrOut, "ctxfold: interrupted")
		return ExitInterrupted
	}
	err = f.fileHints(err)
	printError(f.IO.ErrOut, err)
	code = ExitCode(err)
	if out.n == 0 && (f.IO.JSON || jsonAsked(args)) && !protocolCommand(c) {
		printJSONError(out.w, err, code)
	}
	return code
}

// countingWriter counts what a command wrote to stdout.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// jsonAsked: --json is on the command line, for an error before the flags
// were resolved (an unknown flag).
func jsonAsked(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--json" || a == "--json=true" {
			return true
		}
	}
	return false
}

// protocolCommand: a command whose stdout speaks a client's protocol
// (hook, mcp) or is one status line; an error object there would be read
// as a reply.
func protocolCommand(c *cobra.Command) bool {
	if c == nil {
		return false
	}
	switch c.Name() {
	case "hook", "mcp", "statusline", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
		return true
	}
	return c.Parent() != nil && protocolCommand(c.Parent())
}

// jsonError is the --json form of an error: every command with --json
// prints it on stdout when it fails before printing its own object, with
// the exit code unchanged (stderr still has the one-line error).
type jsonError struct {
	Error    string `json:"error"`
	Hint     string `json:"hint,omitempty"`
	ExitCode int    `json:"exit_code"`
}

func printJSONError(w io.Writer, err error, code int) {
	var silent *SilentError
	if errors.As(err, &silent) {
		return
	}
	je := jsonError{Error: strings.ReplaceAll(err.Error(), "\n", " "), ExitCode: code}
	var h interface{ Hint() string }
	if errors.As(err, &h) {
		je.Hint = h.Hint()
	}
	_ = report.JSON(w, je)
}

func printError(w io.Writer, err error) {
	var silent *SilentError
	if errors.As(err, &silent) {
		return
	}
	// An error can quote a node id or a line of the input: neutralise it
	// like every other text output.
	msg := render.TextSafe(strings.ReplaceAll(err.Error(), "\n", " "))
	fmt.Fprintf(w, "ctxfold: error: %s\n", msg)
	var h interface{ Hint() string }
	if errors.As(err, &h) && h.Hint() != "" {
		fmt.Fprintf(w, "ctxfold: hint: %s\n", render.TextSafe(h.Hint()))
	}
}

// NewRootCmd builds the command tree.
func NewRootCmd(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "ctxfold",
		Short: "Inspect, measure, compact and verify LLM conversation transcripts",
		Long: `ctxfold works on session directories: append-only JSONL conversation DAGs
with a HEAD and rolling summaries. It renders what the model reads next turn,
measures its token occupancy, compacts it offline, draws the DAG and verifies
its invariants.` + exitStatusHelp(""),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return f.loadConfig(cmd)
		},
	}
	root.CompletionOptions.HiddenDefaultCmd = false
	pf := root.PersistentFlags()
	pf.BoolVar(&f.global.JSON, "json", false, "print one JSON object (per session) instead of text")
	pf.StringVar(&f.global.Color, "color", "auto", "colour output: auto, always or never")
	pf.StringVar(&f.global.ConfigFile, "config", "", "config file (default $XDG_CONFIG_HOME/ctxfold/config.yaml)")
	pf.DurationVar(&f.global.LockTimeout, "lock-timeout", store.DefaultLockTimeout, "how long a write waits for another writer")
	pf.IntVar(&f.global.MaxLineBytes, "max-line-bytes", transcript.DefaultMaxLineBytes, "longest JSONL line accepted")
	// --version and -v print what `ctxfold version` prints (users try
	// them first); the root command runs only for them, else it shows help.
	var showVersion bool
	root.Flags().BoolVarP(&showVersion, "version", "v", false, "print what 'ctxfold version' prints")
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if !showVersion {
			return cmd.Help()
		}
		return runVersion(cmd.Context(), &versionOptions{IO: f.IO, JSON: f.IO.JSON, BuildInfo: debug.ReadBuildInfo})
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &UsageError{Err: err}
	})
	_ = root.RegisterFlagCompletionFunc("color", fixedCompletion("auto", "always", "never"))

	root.AddCommand(
		newInitCmd(f, nil),
		newAppendCmd(f, nil),
		newRenderCmd(f, nil),
		newCheckoutCmd(f, nil),
		newRepairCmd(f, nil),
		newEstimateCmd(f, nil),
		newCompactCmd(f, nil),
		newVerifyCmd(f, nil),
		newGraphCmd(f, nil),
		newReportCmd(f, nil),
		newImportCmd(f, nil),
		newExportCmd(f, nil),
		newSearchCmd(f, nil),
		newAuditCmd(f, nil),
		newStatuslineCmd(f, nil),
		newHookCmd(f, nil),
		newSetupCmd(f, nil),
		newMCPCmd(f, nil),
		newPinCmd(f, nil),
		newUnpinCmd(f, nil),
		newConfigCmd(f, nil),
		newModelsCmd(f, nil),
		newSessionsCmd(f, nil),
		newDoctorCmd(f, nil),
		newUncompactCmd(f, nil),
		newVersionCmd(f, nil),
		newCacheCmd(f, nil),
	)
	addHiddenCommands(root, f)
	return root
}

// addHiddenCommands finishes the command tree once every command is
// registered: the completion command (ours, not cobra's default, so its
// help has examples and an EXIT STATUS section like every other), flag
// completions for flags other commands define (model names, encodings),
// the model-related flags `config` accepts, and the hidden gen-docs.
func addHiddenCommands(root *cobra.Command, f *Factory) {
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(newCompletionCmd(f, nil), newGenDocsCmd(f, nil))
	for _, c := range root.Commands() {
		if c.Name() == "config" {
			addConfigFlags(root, c)
		}
	}
	registerFlagCompletions(root, f)
}

// exitStatusHelp is the EXIT STATUS section every command's long help ends
// with. extra lists command-specific codes.
func exitStatusHelp(extra string) string {
	s := `

EXIT STATUS
  0    success (a no-op included)
  1    a check failed (verify found violations, --fail-above exceeded)
  2    usage or input error (bad flags, unreadable or malformed session)
  3    compaction failed
  4    session busy (locked) or changed underneath
  5    does not fit (render --fit)
  6    refused: a command that writes was given a cache session (ctxfold's
       copy of a transcript file; import the file into a directory first)
  70   internal error (a bug: please report it)
  74   a write failed on the way to disk (full, read-only, I/O error)
  130  interrupted`
	if extra != "" {
		s += "\n\n" + extra
	}
	return s
}

func fixedCompletion(values ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}

// defaultGCPercent is the collector's target for the command line. A
// command's memory is one session index that lives until it exits plus
// short-lived garbage, so Go's default (collect when the heap has doubled)
// would let the peak reach twice the index; at 25% it stays near it, for a
// few percent of CPU (docs/BENCHMARKS.md, "estimate"). GOGC, when set, wins.
const defaultGCPercent = 25

// liveGCPercent is the collector's target while a transcript file's cache
// session is brought up to date (liveArgs). A refresh after one appended
// turn keeps little live heap but allocates a few MB of planner state and
// index snapshot; at 25% it spends more time collecting than refreshing
// (docs/BENCHMARKS.md, "live sessions"). Even a cold import stays far
// below the index the command then builds.
const liveGCPercent = 100

// liveGC sets the collector to liveGCPercent (unless GOGC is set) and
// returns what puts it back.
func liveGC(getenv func(string) string) (restore func()) {
	if getenv != nil && getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(liveGCPercent)
	return func() { debug.SetGCPercent(old) }
}

// resumeGCLimit is the heap at which the collector runs anyway while it
// is held back for a refresh from a resume point (resumeGC): a refresh of
// a 100 MB session allocates about 60 MB.
const resumeGCLimit = 512 << 20

// resumeGCPercent holds the collector back without turning it off: turning
// it off (a negative percent) waits for a collection in progress to finish
// marking, which stalled some refreshes by tens of milliseconds while the
// prefix hash kept the other core busy (docs/BENCHMARKS.md, "step 4"); at
// 10,000% the next collection waits for a heap a hundred times the live
// one, or for resumeGCLimit.
const resumeGCPercent = 10000

// resumeGC holds the collector back during a refresh from a resume point
// (live.Options.ResumeGC; resumeGCPercent), unless GOGC is set: what it allocates is the
// saved planner state, restored twice and saved again, nearly all garbage
// at its end, and collecting it while it is built cost about 30 ms of
// CPU of a 130 ms refresh (docs/BENCHMARKS.md, "the cold path"). The
// memory limit bounds the heap should a refresh allocate more.
func resumeGC(getenv func(string) string) func() (restore func()) {
	if getenv != nil && getenv("GOGC") != "" {
		return nil
	}
	return func() func() {
		oldLimit := debug.SetMemoryLimit(resumeGCLimit)
		oldPct := debug.SetGCPercent(resumeGCPercent)
		return func() {
			debug.SetGCPercent(oldPct)
			debug.SetMemoryLimit(oldLimit)
		}
	}
}

func setGCPercent(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
}

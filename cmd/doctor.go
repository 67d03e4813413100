package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/importer"
	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/setup"
)

// doctorTimeout bounds each program doctor runs (a client's --version,
// a configured command's version).
const doctorTimeout = 10 * time.Second

type doctorOptions struct {
	IO       *report.IOStreams
	JSON     bool
	Home     string
	Getenv   func(string) string
	Path     string
	CacheDir string
}

// doctorReport is one client's health: `doctor --json` prints one per
// client, one per line.
type doctorReport struct {
	Client    string `json:"client"`
	Installed bool   `json:"installed"`
	Program   string `json:"program,omitempty"`
	Version   string `json:"version,omitempty"`
	// Setup is "complete", "partial" or "none".
	Setup   string        `json:"setup"`
	Entries []doctorEntry `json:"entries"`
	Missing []string      `json:"missing,omitempty"`
	// HooksSeen is the last time ctxfold's hook left a trace for one of
	// this client's sessions (its state after a compaction), "" when none.
	HooksSeen  string          `json:"hooks_seen,omitempty"`
	CacheDir   string          `json:"cache_dir"`
	CacheBytes int64           `json:"cache_bytes"`
	Problems   []doctorProblem `json:"problems"`
}

type doctorEntry struct {
	setup.Entry
	Runs  bool   `json:"runs"`
	Error string `json:"error,omitempty"`
}

type doctorProblem struct {
	Problem string `json:"problem"`
	Hint    string `json:"hint"`
}

func newDoctorCmd(f *Factory, runF func(*doctorOptions) error) *cobra.Command {
	opts := &doctorOptions{IO: f.IO}
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check that ctxfold is set up and runs for every agent on this machine",
		Long: `Check every client ctxfold sets up (Claude Code, Codex, Gemini CLI): whether it is
installed and its version, whether ctxfold's status line, hooks and MCP server are in
its settings (the files 'ctxfold setup' writes), whether each configured command runs
('<command> version'), when ctxfold's hook last left a trace for one of its sessions,
and the size of ctxfold's cache. A client that is not installed is listed as such, not
as a problem; one that is set up only in part, or whose configured command cannot run,
is a problem, each with a hint. --json prints one object per client.` + exitStatusHelp(""),
		Example: `  ctxfold doctor
  ctxfold doctor --json | jq 'select(.problems | length > 0)'`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.IO.JSON
			opts.Home, opts.Path = f.Getenv("HOME"), f.Getenv("PATH")
			opts.Getenv = f.Getenv
			dir, err := f.cacheDir()
			if err != nil {
				return err
			}
			opts.CacheDir = dir
			if runF != nil {
				return runF(opts)
			}
			return runDoctor(cmd.Context(), opts)
		},
	}
}

func runDoctor(ctx context.Context, opts *doctorOptions) error {
	cacheBytes := dirBytes(opts.CacheDir)
	seen := hookTraces(opts.CacheDir)
	problems := 0
	for _, c := range setup.Clients() {
		r := doctorReport{Client: c.Name, CacheDir: opts.CacheDir, CacheBytes: cacheBytes, Entries: []doctorEntry{}, Problems: []doctorProblem{}}
		if t, ok := seen[c.Name]; ok {
			r.HooksSeen = t.UTC().Format(time.RFC3339)
		}
		folder := c.Home(opts.options())
		if r.Program = lookPath(opts.Path, c.Program); r.Program != "" {
			r.Version = programVersion(ctx, r.Program, "--version")
		}
		_, err := os.Stat(folder)
		r.Installed = r.Program != "" || err == nil
		inspectClient(ctx, opts, c.Name, &r)
		problems += len(r.Problems)
		if err := writeDoctor(opts, r); err != nil {
			return err
		}
	}
	if problems > 0 {
		// Each problem was printed with its hint.
		return &SilentError{Code: ExitCheckFailed}
	}
	return nil
}

// inspectClient fills what setup finds in the client's settings and runs
// each configured command once.
func inspectClient(ctx context.Context, opts *doctorOptions, client string, r *doctorReport) {
	in, err := setup.Inspect(client, opts.options())
	if err != nil {
		r.Setup = "unknown"
		r.Problems = append(r.Problems, doctorProblem{err.Error(), "fix the file by hand (it does not parse), then run 'ctxfold doctor' again"})
		return
	}
	r.Missing = in.Missing
	switch {
	case len(in.Entries) == 0:
		r.Setup = "none"
		return
	case len(in.Missing) > 0:
		r.Setup = "partial"
		r.Problems = append(r.Problems, doctorProblem{"set up only in part: missing " + strings.Join(in.Missing, ", "),
			"run 'ctxfold setup " + client + "' again"})
	default:
		r.Setup = "complete"
	}
	ran := map[string]error{}
	for _, e := range in.Entries {
		program := e.Argv[0]
		if !filepath.IsAbs(program) {
			if p := lookPath(opts.Path, program); p != "" {
				program = p
			}
		}
		err, done := ran[program]
		if !done {
			err = runsVersion(ctx, program)
			ran[program] = err
		}
		de := doctorEntry{Entry: e, Runs: err == nil}
		if err != nil {
			de.Error = err.Error()
			what := e.Kind
			if e.Event != "" {
				what += " " + e.Event
			}
			r.Problems = append(r.Problems, doctorProblem{fmt.Sprintf("the %s in %s runs %s, which cannot run: %v", what, e.File, e.Argv[0], err),
				"run 'ctxfold setup " + client + "' again from the ctxfold you want it to run (or give --command)"})
		}
		r.Entries = append(r.Entries, de)
	}
}

// runsVersion runs `program version`: a configured command that answers
// it runs.
func runsVersion(ctx context.Context, program string) error {
	if program == "" || !filepath.IsAbs(program) {
		return fmt.Errorf("%q is not on PATH", program)
	}
	ctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, program, "version").CombinedOutput()
	if err != nil {
		if msg := strings.TrimSpace(string(out)); msg != "" {
			return fmt.Errorf("%w: %s", err, firstLine(msg))
		}
		return err
	}
	return nil
}

// programVersion is the first line a program prints for flag ("" when it
// does not answer within the bound).
func programVersion(ctx context.Context, program, flag string) string {
	ctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, program, flag).Output()
	if err != nil {
		return ""
	}
	return firstLine(strings.TrimSpace(string(out)))
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// hookTraces is, per client, the newest hook state file's time: the hook
// keeps one per transcript once a compaction happened (hook/state.go),
// naming the transcript, whose format says the client.
func hookTraces(cacheDir string) map[string]time.Time {
	out := map[string]time.Time{}
	files, _ := filepath.Glob(filepath.Join(cacheDir, "hook", "*.json"))
	for _, p := range files {
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > 1<<20 {
			continue
		}
		b, _ := os.ReadFile(p)
		var st struct {
			File string `json:"file"`
		}
		if json.Unmarshal(b, &st) != nil || st.File == "" {
			continue
		}
		format, _ := importer.DetectFile(st.File)
		for _, c := range setup.Clients() {
			if c.Format == format {
				if t, ok := out[c.Name]; !ok || fi.ModTime().After(t) {
					out[c.Name] = fi.ModTime()
				}
			}
		}
	}
	return out
}

// dirBytes is the size of the files under dir (0 when there is none).
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

func writeDoctor(opts *doctorOptions, r doctorReport) error {
	if opts.JSON {
		return report.JSON(opts.IO.Out, r)
	}
	pal := report.NewPalette(opts.IO)
	w := opts.IO.Out
	status := pal.Green("ok")
	switch {
	case !r.Installed:
		status = pal.Dim("not installed")
	case len(r.Problems) > 0:
		status = pal.Red(fmt.Sprintf("%d problem(s)", len(r.Problems)))
	case r.Setup == "none":
		status = pal.Yellow("not set up")
	}
	fmt.Fprintf(w, "%s: %s\n", r.Client, status)
	if r.Version != "" {
		fmt.Fprintf(w, "  version: %s\n", r.Version)
	}
	fmt.Fprintf(w, "  setup: %s (%d entries)\n", r.Setup, len(r.Entries))
	if r.HooksSeen != "" {
		fmt.Fprintf(w, "  hooks last seen: %s\n", r.HooksSeen)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "  problem: %s\n  hint: %s\n", p.Problem, p.Hint)
	}
	if r.Setup == "none" && r.Installed {
		fmt.Fprintf(w, "  hint: run 'ctxfold setup %s'\n", r.Client)
	}
	if clients := setup.Clients(); r.Client == clients[len(clients)-1].Name {
		fmt.Fprintf(w, "cache: %s, %s bytes\n", r.CacheDir, report.Thousands(int(r.CacheBytes)))
	}
	return nil
}

// options are setup's for the user's settings of this machine.
func (opts *doctorOptions) options() setup.Options {
	return setup.Options{Scope: setup.ScopeUser, Home: opts.Home, Getenv: opts.Getenv}
}

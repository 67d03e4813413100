package cmd

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/export"
	"github.com/ctxfold/ctxfold/fit"
	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/hook"
	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/report"
	"github.com/ctxfold/ctxfold/report/graph"
	"github.com/ctxfold/ctxfold/setup"
	"github.com/ctxfold/ctxfold/store"
	"github.com/ctxfold/ctxfold/summarize"
	"github.com/ctxfold/ctxfold/transcript"
)

// Flags → options (STYLE 15): each command line runs through the real
// tree — persistent flags, CTXFOLD_* variables and the config file
// resolved by loadConfig — up to the command's runF seam, and the options
// it would run with are checked field by field. Nothing runs, so the
// session arguments need not exist. A refused command line never reaches
// the seam and exits with the usage status.

// flagCase is one command line of a command whose options are T.
type flagCase[T any] struct {
	name string
	args []string
	env  map[string]string
	// refused: the command line is rejected with a message holding this
	// text, and the seam is not reached.
	refused string
	check   func(t *testing.T, o *T)
}

func runFlagCases[T any](t *testing.T, newCmd func(*Factory, func(*T) error) *cobra.Command, cases []flagCase[T]) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, r := flagsToOptions(t, c.env, newCmd, c.args...)
			if c.refused != "" {
				if o != nil || r.Code != ExitUsage || !strings.Contains(r.Stderr, c.refused) {
					t.Fatalf("%v: want refused (exit %d) with %q; got options %v, exit %d, stderr %q", c.args, ExitUsage, c.refused, o != nil, r.Code, r.Stderr)
				}
				return
			}
			if o == nil || r.Code != 0 {
				t.Fatalf("%v: the seam was not reached: exit %d, stderr %q", c.args, r.Code, r.Stderr)
			}
			c.check(t, o)
		})
	}
}

// same fails the test when got differs from want, naming what.
func same(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %#v, want %#v", what, got, want)
	}
}

// configFile writes a config file and returns the environment naming it.
func configFile(t *testing.T, yaml string, env map[string]string) map[string]string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{"CTXFOLD_CONFIG": p}
	for k, v := range env {
		out[k] = v
	}
	return out
}

// transcriptFile is a copy of a small recorded Claude Code transcript.
func transcriptFile(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(claudeInteropTranscripts(t)["compact"])
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestEstimateFlags(t *testing.T) {
	folder := t.TempDir()
	for _, n := range []string{"a.jsonl", "b.jsonl"} {
		if err := os.WriteFile(filepath.Join(folder, n), []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tail := transcriptFile(t)
	runFlagCases(t, newEstimateCmd, []flagCase[estimateOptions]{
		{name: "defaults", args: []string{"estimate", "s"}, check: func(t *testing.T, o *estimateOptions) {
			same(t, "Dirs", o.Dirs, []string{"s"})
			same(t, "Many", o.Many, false)
			same(t, "FailAbove", o.FailAbove, -1.0)
			same(t, "JSON", o.JSON, false)
			e := o.Session.Estimate
			same(t, "CompactAt", e.CompactAt, estimate.DefaultCompactAt)
			same(t, "Model", e.Model, "")
			same(t, "DefaultModel", o.Session.DefaultModel, "")
			same(t, "NodeDetail, NoCache, NoCalibrate", []bool{e.NodeDetail, e.NoCache, e.NoCalibrate}, []bool{false, false, false})
			same(t, "Open.MaxLineBytes", o.Session.Open.MaxLineBytes, transcript.DefaultMaxLineBytes)
		}},
		{name: "every flag", args: []string{"estimate", "s", "--model", "gpt-4o", "--encoding", "cl100k_base", "--window", "1000",
			"--max-output", "100", "--output-cap", "50", "--no-calibrate", "--head", "n3", "--nodes", "--no-cache",
			"--fail-above", "80", "--compact-at", "70", "--json", "--max-line-bytes", "4096"},
			check: func(t *testing.T, o *estimateOptions) {
				e := o.Session.Estimate
				same(t, "Model", e.Model, "gpt-4o")
				same(t, "Encoding", e.Encoding, "cl100k_base")
				same(t, "sizes", []int{e.Window, e.MaxOutput, e.OutputCap}, []int{1000, 100, 50})
				same(t, "NodeDetail, NoCache, NoCalibrate", []bool{e.NodeDetail, e.NoCache, e.NoCalibrate}, []bool{true, true, true})
				same(t, "CompactAt", e.CompactAt, 0.7)
				same(t, "Head", o.Session.Head, "n3")
				same(t, "FailAbove", o.FailAbove, 80.0)
				same(t, "JSON", o.JSON, true)
				same(t, "Open.MaxLineBytes", o.Session.Open.MaxLineBytes, 4096)
			}},
		{name: "environment", args: []string{"estimate", "s"}, env: map[string]string{"CTXFOLD_MODEL": "gpt-4o-mini", "CTXFOLD_WINDOW": "5000", "CTXFOLD_JSON": "true"},
			check: func(t *testing.T, o *estimateOptions) {
				// A configured model is the fallback, not an explicit --model.
				same(t, "Model", o.Session.Estimate.Model, "")
				same(t, "DefaultModel", o.Session.DefaultModel, "gpt-4o-mini")
				same(t, "Window", o.Session.Estimate.Window, 5000)
				same(t, "JSON", o.JSON, true)
			}},
		{name: "config file", args: []string{"estimate", "s"},
			env: configFile(t, "model: claude-sonnet-4\nencoding: cl100k_base\nmax-output: 700\nmodels:\n  mine: {window: 4096}\n", nil),
			check: func(t *testing.T, o *estimateOptions) {
				same(t, "DefaultModel", o.Session.DefaultModel, "claude-sonnet-4")
				same(t, "Encoding", o.Session.Estimate.Encoding, "cl100k_base")
				same(t, "MaxOutput", o.Session.Estimate.MaxOutput, 700)
				same(t, "Models[mine].Window", o.Session.Estimate.Models["mine"].Window, 4096)
			}},
		{name: "flag beats environment", args: []string{"estimate", "s", "--model", "gpt-4o"}, env: map[string]string{"CTXFOLD_MODEL": "gpt-4o-mini"},
			check: func(t *testing.T, o *estimateOptions) {
				same(t, "Model", o.Session.Estimate.Model, "gpt-4o")
				same(t, "DefaultModel", o.Session.DefaultModel, "")
			}},
		{name: "a folder is many", args: []string{"estimate", folder}, check: func(t *testing.T, o *estimateOptions) {
			same(t, "Dirs", o.Dirs, []string{filepath.Join(folder, "a.jsonl"), filepath.Join(folder, "b.jsonl")})
			same(t, "Many", o.Many, true)
			same(t, "OpenArg and LiveGC set", o.OpenArg != nil && o.LiveGC != nil, true)
		}},
		{name: "tail", args: []string{"estimate", "--tail", tail}, env: map[string]string{"XDG_CACHE_HOME": "/cache"}, check: func(t *testing.T, o *estimateOptions) {
			same(t, "Tail, Many", []bool{o.Tail, o.Many}, []bool{true, false})
			same(t, "Dirs", o.Dirs, []string{tail})
			same(t, "TailLive.CacheDir", o.TailLive.CacheDir, "/cache/ctxfold")
			same(t, "Live (nothing imported)", len(o.Live), 0)
		}},
		{name: "tail of a directory", args: []string{"estimate", "--tail", folder}, refused: "--tail reads a transcript file; " + folder + " is not one"},
		{name: "tail with nodes", args: []string{"estimate", "--tail", "--nodes", tail}, refused: "not with --head or --nodes"},
		{name: "compact-at 0", args: []string{"estimate", "s", "--compact-at", "0"}, refused: "--compact-at must be a percentage in (0, 100], got 0"},
		{name: "negative fail-above", args: []string{"estimate", "s", "--fail-above", "-1"}, refused: "--fail-above must be a percentage ≥ 0"},
		{name: "head of two sessions", args: []string{"estimate", "a", "b", "--head", "n1"}, refused: "--head names a node of one session; got 2 sessions"},
		{name: "unknown encoding", args: []string{"estimate", "s", "--encoding", "p50k"}, refused: "--encoding must be o200k_base or cl100k_base"},
		{name: "negative window", args: []string{"estimate", "s", "--window", "-1"}, refused: "--window must not be negative"},
		{name: "bad environment value", args: []string{"estimate", "s"}, env: map[string]string{"CTXFOLD_WINDOW": "big"}, refused: "CTXFOLD_WINDOW: invalid value"},
	})
}

func TestCompactFlags(t *testing.T) {
	file := transcriptFile(t)
	cache := t.TempDir()
	runFlagCases(t, newCompactCmd, []flagCase[compactOptions]{
		{name: "defaults", args: []string{"compact", "s"}, env: map[string]string{"LANG": "zh_CN.UTF-8"}, check: func(t *testing.T, o *compactOptions) {
			same(t, "Dir", o.Compact.Dir, "s")
			same(t, "File", o.File, "")
			same(t, "Summarizers.Name", o.Summarizers.Name, "extractive")
			same(t, "Lang (from LANG)", o.Lang, report.LangZH)
			same(t, "DryRun", o.DryRun, false)
			same(t, "targets", []int{o.Compact.KeepTokens, o.Compact.MaxSummaryTokens}, []int{0, 0})
			same(t, "Store.Command", o.Compact.Store.Command, "compact")
			same(t, "Now is the factory's", o.Compact.Now().Equal(coreNow), true)
		}},
		{name: "every flag", args: []string{"compact", "s", "--keep-tokens", "2000", "--max-summary-tokens", "500", "--dry-run",
			"--if-above", "80", "--min-survival", "95", "--lang", "en", "--summarizer", "exec", "--summarizer-cmd", "cat",
			"--model", "gpt-4o", "--window", "9000", "--json", "--lock-timeout", "3s"},
			env: map[string]string{"LANG": "zh_CN.UTF-8"},
			check: func(t *testing.T, o *compactOptions) {
				c := o.Compact
				same(t, "targets", []int{c.KeepTokens, c.MaxSummaryTokens}, []int{2000, 500})
				same(t, "IfAbove, MinSurvival", []float64{c.IfAbove, c.MinSurvival}, []float64{80, 95})
				same(t, "DryRun, JSON", []bool{o.DryRun, o.JSON}, []bool{true, true})
				same(t, "Lang", o.Lang, report.LangEN)
				same(t, "Summarizers", []string{o.Summarizers.Name, o.Summarizers.Cmd}, []string{"exec", "cat"})
				same(t, "Estimate.Model, Window", []any{c.Estimate.Model, c.Estimate.Window}, []any{"gpt-4o", 9000})
				same(t, "Store.LockTimeout", c.Store.LockTimeout, 3*time.Second)
			}},
		{name: "environment and config", args: []string{"compact", "s"},
			env: configFile(t, "lang: zh\nsummarizer-cmd: ./sum.sh\nmodel: gpt-4o\n",
				map[string]string{"CTXFOLD_SUMMARIZER": "openai", "CTXFOLD_BASE_URL": "http://127.0.0.1:1/v1", "CTXFOLD_API_KEY": "k1"}),
			check: func(t *testing.T, o *compactOptions) {
				s := o.Summarizers
				same(t, "Summarizers", []string{s.Name, s.BaseURL, s.APIKey, s.Cmd}, []string{"openai", "http://127.0.0.1:1/v1", "k1", "./sum.sh"})
				same(t, "Lang", o.Lang, report.LangZH)
				same(t, "DefaultModel", o.Compact.DefaultModel, "gpt-4o")
				same(t, "Estimate.Model", o.Compact.Estimate.Model, "")
			}},
		{name: "a transcript file with --dry-run", args: []string{"compact", file, "--dry-run"}, env: map[string]string{"XDG_CACHE_HOME": cache},
			check: func(t *testing.T, o *compactOptions) {
				same(t, "File", o.File, file)
				same(t, "Dir is a cache session", strings.HasPrefix(o.Compact.Dir, cache), true)
			}},
		{name: "a transcript file", args: []string{"compact", file}, refused: "compact writes a summary node, so it needs a session directory"},
		{name: "keep-tokens 0", args: []string{"compact", "s", "--keep-tokens", "0"}, refused: "--keep-tokens 0: the kept tail needs a positive target"},
		{name: "negative max-summary-tokens", args: []string{"compact", "s", "--max-summary-tokens", "-1"}, refused: "--keep-tokens and --max-summary-tokens must not be negative"},
		{name: "if-above 101", args: []string{"compact", "s", "--if-above", "101"}, refused: "--if-above is a percentage from 0 to 100, got 101"},
		{name: "min-survival -1", args: []string{"compact", "s", "--min-survival", "-1"}, refused: "--min-survival is a percentage from 0 to 100, got -1"},
		{name: "summarizer-cmd without exec", args: []string{"compact", "s", "--summarizer-cmd", "cat"}, refused: "--summarizer-cmd needs --summarizer exec"},
		{name: "exec without a command", args: []string{"compact", "s", "--summarizer", "exec"}, refused: "--summarizer exec needs --summarizer-cmd"},
		{name: "unknown summarizer", args: []string{"compact", "s", "--summarizer", "magic"}, refused: `--summarizer must be extractive, openai or exec, got "magic"`},
		{name: "unknown lang", args: []string{"compact", "s", "--lang", "fr"}, refused: "--lang:"},
	})
}

func TestImportFlags(t *testing.T) {
	runFlagCases(t, newImportCmd, []flagCase[importOptions]{
		{name: "defaults", args: []string{"import", "a.jsonl", "b.jsonl", "-o", "out"}, check: func(t *testing.T, o *importOptions) {
			same(t, "Files", o.Files, []string{"a.jsonl", "b.jsonl"})
			same(t, "Out, From", []string{o.Out, o.From}, []string{"out", "auto"})
			same(t, "Append", o.Append, false)
			same(t, "Session", o.Session, "")
			same(t, "MaxDecompressed", o.MaxDecompressed, int64(input.DefaultMaxDecompressedBytes))
			same(t, "Store.Command", o.Store.Command, "import")
		}},
		{name: "every flag", args: []string{"import", "a.md", "--out", "out", "--from", "aider", "--append", "--session", "2",
			"--max-decompressed-bytes", "1000", "--json", "--max-line-bytes", "999"},
			env: configFile(t, "models:\n  mine: {window: 4096}\n", nil),
			check: func(t *testing.T, o *importOptions) {
				same(t, "From", o.From, "aider")
				same(t, "Append, JSON", []bool{o.Append, o.JSON}, []bool{true, true})
				same(t, "Session", o.Session, "2")
				same(t, "Input.Session", o.inputOptions().Session, 2)
				same(t, "MaxDecompressed", o.MaxDecompressed, int64(1000))
				same(t, "Store.MaxLineBytes", o.Store.MaxLineBytes, 999)
				same(t, "Models[mine].Window", o.Models["mine"].Window, 4096)
			}},
		{name: "no -o", args: []string{"import", "a.jsonl"}, refused: "-o DIR is required"},
		{name: "unknown format", args: []string{"import", "a.jsonl", "-o", "x", "--from", "word"}, refused: `--from must be one of`},
		{name: "negative session", args: []string{"import", "a.jsonl", "-o", "x", "--session", "-1"}, refused: "--session must be a session number from 1 or a session id, got -1"},
		{name: "session id", args: []string{"import", "db", "-o", "x", "--session", "ses_01abc"}, check: func(t *testing.T, o *importOptions) {
			in := o.inputOptions()
			same(t, "Input.Session, SessionID", []any{in.Session, in.SessionID}, []any{0, "ses_01abc"})
		}},
		{name: "zero decompressed", args: []string{"import", "a.jsonl", "-o", "x", "--max-decompressed-bytes", "0"}, refused: "--max-decompressed-bytes must be positive, got 0"},
	})
}

func TestRenderFlags(t *testing.T) {
	file := transcriptFile(t)
	cache := t.TempDir()
	runFlagCases(t, newRenderCmd, []flagCase[renderOptions]{
		{name: "a transcript file", args: []string{"render", file, "--format", "ids"}, env: map[string]string{"XDG_CACHE_HOME": cache}, check: func(t *testing.T, o *renderOptions) {
			same(t, "File", o.File, file)
			same(t, "Dir is a cache session", strings.HasPrefix(o.Dir, cache), true)
			same(t, "Format", o.Format, render.FormatIDs)
		}},
		{name: "defaults", args: []string{"render", "s"}, check: func(t *testing.T, o *renderOptions) {
			same(t, "Dir, File, Head", []string{o.Dir, o.File, o.Head}, []string{"s", "", ""})
			same(t, "Format", o.Format, render.FormatText)
			same(t, "Raw, Fit, Diff, JSON", []bool{o.Raw, o.Fit, o.Diff, o.JSON}, []bool{false, false, false, false})
		}},
		{name: "view flags", args: []string{"render", "s", "--head", "n1", "--raw", "--format", "openai", "--json"}, check: func(t *testing.T, o *renderOptions) {
			same(t, "Head", o.Head, "n1")
			same(t, "Format", o.Format, render.FormatOpenAI)
			same(t, "Raw, JSON", []bool{o.Raw, o.JSON}, []bool{true, true})
		}},
		{name: "fit", args: []string{"render", "s", "--fit", "--model", "gpt-4o", "--window", "8000", "--margin", "500",
			"--max-summary-calls", "3", "--summary-deadline", "5s", "--json-report", "r.json", "--summarizer", "exec", "--summarizer-cmd", "cat"},
			env: map[string]string{"CTXFOLD_MODEL": "ignored"},
			check: func(t *testing.T, o *renderOptions) {
				fo := o.FitOptions
				same(t, "Fit", o.Fit, true)
				same(t, "Estimate.Model, Window", []any{fo.Estimate.Model, fo.Estimate.Window}, []any{"gpt-4o", 8000})
				same(t, "Margin, MaxCalls", []int{fo.Margin, fo.MaxCalls}, []int{500, 3})
				same(t, "Deadline", fo.Deadline, 5*time.Second)
				same(t, "JSONReport", o.JSONReport, "r.json")
				same(t, "Summarizer", fo.Summarizer, summarize.Summarizer(&summarize.Exec{Command: "cat"}))
				same(t, "FitDefaultModel", o.FitDefaultModel, "")
			}},
		{name: "fit defaults", args: []string{"render", "s", "--fit"}, env: map[string]string{"CTXFOLD_MODEL": "gpt-4o"}, check: func(t *testing.T, o *renderOptions) {
			fo := o.FitOptions
			same(t, "Margin, MaxCalls", []int{fo.Margin, fo.MaxCalls}, []int{fit.DefaultMargin, fit.DefaultMaxCalls})
			same(t, "Deadline", fo.Deadline, fit.DefaultDeadline)
			same(t, "Summarizer", fo.Summarizer, summarize.Summarizer(summarize.Extractive{}))
			same(t, "FitDefaultModel", o.FitDefaultModel, "gpt-4o")
		}},
		{name: "diff", args: []string{"render", "s", "--diff", "--model", "gpt-4o", "--encoding", "cl100k_base"}, check: func(t *testing.T, o *renderOptions) {
			same(t, "Diff", o.Diff, true)
			same(t, "DiffEstimate.Model, Encoding", []string{o.DiffEstimate.Model, o.DiffEstimate.Encoding}, []string{"gpt-4o", "cl100k_base"})
			same(t, "DiffExplicitModel", o.DiffExplicitModel, true)
		}},
		{name: "diff with a configured model", args: []string{"render", "s", "--diff"}, env: map[string]string{"CTXFOLD_MODEL": "gpt-4o"}, check: func(t *testing.T, o *renderOptions) {
			same(t, "DiffExplicitModel", o.DiffExplicitModel, false)
			same(t, "FitDefaultModel", o.FitDefaultModel, "gpt-4o")
		}},
		{name: "unknown format", args: []string{"render", "s", "--format", "xml"}, refused: "xml"},
		{name: "margin without fit", args: []string{"render", "s", "--margin", "10"}, refused: "--margin needs --fit"},
		{name: "model without fit", args: []string{"render", "s", "--model", "gpt-4o"}, refused: "--model needs --fit"},
		{name: "diff and raw", args: []string{"render", "s", "--diff", "--raw"}, refused: "--diff and --raw exclude each other"},
		{name: "fit jsonl", args: []string{"render", "s", "--fit", "--format", "jsonl"}, refused: "--fit prints openai, anthropic, gemini, text or ids"},
		{name: "zero summary calls", args: []string{"render", "s", "--fit", "--max-summary-calls", "0"}, refused: "--max-summary-calls and --summary-deadline must be positive"},
		{name: "bad margin", args: []string{"render", "s", "--fit", "--margin", "-5"}, refused: "want a token count of 0 or more, or auto"},
	})
}

func TestGraphFlags(t *testing.T) {
	file := transcriptFile(t)
	cache := t.TempDir()
	runFlagCases(t, newGraphCmd, []flagCase[graphOptions]{
		{name: "a transcript file", args: []string{"graph", file}, env: map[string]string{"XDG_CACHE_HOME": cache}, check: func(t *testing.T, o *graphOptions) {
			same(t, "File", o.File, file)
			same(t, "Dir is a cache session", strings.HasPrefix(o.Dir, cache), true)
		}},
		{name: "defaults", args: []string{"graph", "s"}, check: func(t *testing.T, o *graphOptions) {
			same(t, "Dir, File, Output, Around", []string{o.Dir, o.File, o.Output, o.Around}, []string{"s", "", "", ""})
			same(t, "Format", o.Format, graph.FormatTree)
			same(t, "Depth", o.Depth, defaultAroundDepth)
			same(t, "Expand", o.Expand, false)
		}},
		{name: "every flag", args: []string{"graph", "s", "--format", "dot", "-o", "g.dot", "--expand", "--around", "n1", "--depth", "2",
			"--model", "gpt-4o", "--window", "100"}, env: map[string]string{"CTXFOLD_MODEL": "gpt-4o-mini"},
			check: func(t *testing.T, o *graphOptions) {
				same(t, "Format", o.Format, graph.FormatDOT)
				same(t, "Output, Around", []string{o.Output, o.Around}, []string{"g.dot", "n1"})
				same(t, "Depth", o.Depth, 2)
				same(t, "Expand", o.Expand, true)
				same(t, "Estimate.Model, Window", []any{o.Estimate.Model, o.Estimate.Window}, []any{"gpt-4o", 100})
				same(t, "DefaultModel", o.DefaultModel, "")
			}},
		{name: "json is the json format", args: []string{"graph", "s", "--json"}, check: func(t *testing.T, o *graphOptions) {
			same(t, "Format", o.Format, graph.FormatJSON)
		}},
		{name: "json from the environment", args: []string{"graph", "s"}, env: map[string]string{"CTXFOLD_JSON": "1"}, check: func(t *testing.T, o *graphOptions) {
			same(t, "Format", o.Format, graph.FormatJSON)
		}},
		{name: "json and dot", args: []string{"graph", "s", "--json", "--format", "dot"}, refused: "--json and --format dot disagree"},
		{name: "depth without around", args: []string{"graph", "s", "--depth", "3"}, refused: "--depth needs --around ID"},
		{name: "unknown format", args: []string{"graph", "s", "--format", "svg"}, refused: "svg"},
	})
}

func TestAuditFlags(t *testing.T) {
	file := transcriptFile(t)
	cache := t.TempDir()
	runFlagCases(t, newAuditCmd, []flagCase[auditOptions]{
		{name: "defaults", args: []string{"audit", "s"}, check: func(t *testing.T, o *auditOptions) {
			same(t, "Dir, File, SummaryID", []string{o.Dir, o.File, o.SummaryID}, []string{"s", "", ""})
			same(t, "FailBelow", o.FailBelow, -1.0)
			same(t, "Missing", o.Missing, 10)
			same(t, "All, JSON, Many", []bool{o.All, o.JSON, o.Many}, []bool{false, false, false})
		}},
		{name: "every flag", args: []string{"audit", "s", "--summary", "sum1", "--fail-below", "90", "--missing", "0", "--json"}, check: func(t *testing.T, o *auditOptions) {
			same(t, "SummaryID", o.SummaryID, "sum1")
			same(t, "FailBelow", o.FailBelow, 90.0)
			same(t, "Missing", o.Missing, 0)
			same(t, "JSON", o.JSON, true)
		}},
		{name: "a transcript file", args: []string{"audit", file, "--all"}, env: map[string]string{"XDG_CACHE_HOME": cache}, check: func(t *testing.T, o *auditOptions) {
			same(t, "All", o.All, true)
			same(t, "File", o.File, file)
			same(t, "Dir is a cache session", strings.HasPrefix(o.Dir, cache), true)
		}},
		{name: "several files are many", args: []string{"audit", file, file}, check: func(t *testing.T, o *auditOptions) {
			same(t, "Many", o.Many, true)
			same(t, "Args", o.Args, []string{file, file})
		}},
		{name: "two sessions", args: []string{"audit", "a", "b"}, refused: "audit takes one session directory, or transcript files and folders of them; got 2 sessions"},
		{name: "summary and all", args: []string{"audit", "s", "--summary", "x", "--all"}, refused: "--summary and --all exclude each other"},
		{name: "fail-below 101", args: []string{"audit", "s", "--fail-below", "101"}, refused: "--fail-below is a percentage from 0 to 100, got 101"},
		{name: "negative missing", args: []string{"audit", "s", "--missing", "-1"}, refused: "--missing must not be negative"},
		{name: "a pattern that matches nothing", args: []string{"audit", filepath.Join(t.TempDir(), "*.jsonl")}, refused: "no file matches the pattern"},
	})
}

func TestVerifyFlags(t *testing.T) {
	file := transcriptFile(t)
	cache := t.TempDir()
	runFlagCases(t, newVerifyCmd, []flagCase[verifyOptions]{
		{name: "defaults", args: []string{"verify", "a", "b"}, check: func(t *testing.T, o *verifyOptions) {
			same(t, "Dirs", o.Dirs, []string{"a", "b"})
			same(t, "Strict, JSON, Many", []bool{o.Strict, o.JSON, o.Many}, []bool{false, false, false})
			same(t, "Jobs > 0", o.Jobs > 0, true)
		}},
		{name: "strict json", args: []string{"verify", "--strict", "s", "--json"}, check: func(t *testing.T, o *verifyOptions) {
			same(t, "Strict, JSON", []bool{o.Strict, o.JSON}, []bool{true, true})
		}},
		{name: "a transcript file", args: []string{"verify", file}, env: map[string]string{"XDG_CACHE_HOME": cache}, check: func(t *testing.T, o *verifyOptions) {
			same(t, "Many", o.Many, false)
			same(t, "Live names the file", o.Live[o.Dirs[0]] != nil && o.Live[o.Dirs[0]].File == file, true)
		}},
		{name: "a file among sessions is many", args: []string{"verify", file, "s"}, check: func(t *testing.T, o *verifyOptions) {
			same(t, "Many", o.Many, true)
			same(t, "Dirs", o.Dirs, []string{file, "s"})
			same(t, "OpenArg set", o.OpenArg != nil, true)
		}},
	})
}

func TestSearchFlags(t *testing.T) {
	file := transcriptFile(t)
	cache := t.TempDir()
	runFlagCases(t, newSearchCmd, []flagCase[searchOptions]{
		{name: "defaults", args: []string{"search", "s", "drop tables"}, check: func(t *testing.T, o *searchOptions) {
			same(t, "Dir, Query, Head, File", []string{o.Dir, o.Query, o.Head, o.File}, []string{"s", "drop tables", "", ""})
			same(t, "Regexp, JSON", []bool{o.Regexp, o.JSON}, []bool{false, false})
		}},
		{name: "every flag", args: []string{"search", "s", "-e", "COPY [0-9]+", "--head", "n2", "--json"}, check: func(t *testing.T, o *searchOptions) {
			same(t, "Query, Head", []string{o.Query, o.Head}, []string{"COPY [0-9]+", "n2"})
			same(t, "Regexp, JSON", []bool{o.Regexp, o.JSON}, []bool{true, true})
		}},
		{name: "a transcript file", args: []string{"search", file, "x", "--regexp"}, env: map[string]string{"XDG_CACHE_HOME": cache}, check: func(t *testing.T, o *searchOptions) {
			same(t, "File", o.File, file)
			same(t, "Dir is a cache session", strings.HasPrefix(o.Dir, cache), true)
			same(t, "Regexp", o.Regexp, true)
		}},
		{name: "empty query", args: []string{"search", "s", ""}, refused: "search: QUERY is empty"},
	})
}

func TestExportFlags(t *testing.T) {
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	runFlagCases(t, newExportCmd, []flagCase[exportOptions]{
		{name: "defaults", args: []string{"export", "s", "--to", "claude-code"}, env: map[string]string{"HOME": "/home/u"}, check: func(t *testing.T, o *exportOptions) {
			same(t, "Dir", o.Dir, "s")
			same(t, "To", o.To, export.ClaudeCode)
			same(t, "CWD (the working directory)", o.Export.CWD, cwd)
			same(t, "ClientHome", o.ClientHome, "/home/u/.claude")
			same(t, "Output, Head, SessionID", []string{o.Output, o.Export.Head, o.Export.SessionID}, []string{"", "", ""})
			same(t, "Force", o.Force, false)
		}},
		{name: "every flag", args: []string{"export", "s", "--to", "codex", "--head", "n4", "--session-id", "0199a213-81c0-7800-8aa1-bbab2a035a53",
			"--cwd", "/srv/app", "-o", "-", "--force", "--json"}, env: map[string]string{"CODEX_HOME": "/c"},
			check: func(t *testing.T, o *exportOptions) {
				same(t, "To", o.To, export.Codex)
				same(t, "Head, SessionID, CWD", []string{o.Export.Head, o.Export.SessionID, o.Export.CWD}, []string{"n4", "0199a213-81c0-7800-8aa1-bbab2a035a53", "/srv/app"})
				same(t, "Output", o.Output, "-")
				same(t, "Force, JSON", []bool{o.Force, o.JSON}, []bool{true, true})
				same(t, "ClientHome", o.ClientHome, "/c")
			}},
		{name: "unknown client", args: []string{"export", "s", "--to", "vim"}, refused: "vim"},
	})
}

func TestStatuslineFlags(t *testing.T) {
	runFlagCases(t, newStatuslineCmd, []flagCase[statuslineOptions]{
		{name: "defaults", args: []string{"statusline"}, env: map[string]string{"XDG_CACHE_HOME": "/cache"}, check: func(t *testing.T, o *statuslineOptions) {
			same(t, "Format, CacheDir", []string{o.Format, o.CacheDir}, []string{"", "/cache/ctxfold"})
			same(t, "Width", o.Width, 40)
			same(t, "TailMinBytes", o.TailMinBytes, int64(tailMinFile))
			same(t, "Est.CompactAt", o.Est.CompactAt, estimate.DefaultCompactAt)
			same(t, "Model, DefaultModel", []string{o.Model, o.DefaultModel}, []string{"", ""})
			same(t, "Store.Command", o.Store.Command, "statusline")
		}},
		{name: "every flag", args: []string{"statusline", "--format", "{{.Pct}}", "--width", "30", "--cache-dir", "/c", "--compact-at", "70",
			"--model", "gpt-4o", "--window", "1000", "--json", "--tail-min-bytes", "0"}, env: map[string]string{"CTXFOLD_MODEL": "gpt-4o-mini"},
			check: func(t *testing.T, o *statuslineOptions) {
				same(t, "Format, CacheDir", []string{o.Format, o.CacheDir}, []string{"{{.Pct}}", "/c"})
				same(t, "Width", o.Width, 30)
				same(t, "TailMinBytes", o.TailMinBytes, int64(0))
				same(t, "Est.CompactAt", o.Est.CompactAt, 0.7)
				// The explicit model is kept apart (hookModel); Est.Model is
				// filled per hook.
				same(t, "Model, DefaultModel, Est.Model", []string{o.Model, o.DefaultModel, o.Est.Model}, []string{"gpt-4o", "", ""})
				same(t, "Est.Window", o.Est.Window, 1000)
				same(t, "JSON", o.JSON, true)
			}},
		{name: "configured model", args: []string{"statusline"}, env: configFile(t, "model: gpt-4o\n", nil), check: func(t *testing.T, o *statuslineOptions) {
			same(t, "Model, DefaultModel", []string{o.Model, o.DefaultModel}, []string{"", "gpt-4o"})
		}},
	})
	// A bad --compact-at never reaches the seam (the real command prints
	// its placeholder instead: statusline_test.go).
	if o, r := flagsToOptions(t, nil, newStatuslineCmd, "statusline", "--compact-at", "0"); o != nil || r.Code == 0 {
		t.Errorf("--compact-at 0 reached the seam: exit %d", r.Code)
	}
}

func TestHookFlags(t *testing.T) {
	runFlagCases(t, newHookCmd, []flagCase[hookOptions]{
		{name: "defaults", args: []string{"hook"}, env: map[string]string{"XDG_CACHE_HOME": "/cache"}, check: func(t *testing.T, o *hookOptions) {
			same(t, "CacheDir, Model, Client", []string{o.CacheDir, o.Model, o.Client}, []string{"/cache/ctxfold", "", "Claude Code"})
			same(t, "Timeout", o.Timeout, 50*time.Second)
			same(t, "Budget", o.Budget, 0)
			same(t, "Share", o.Share, 100*hook.DefaultBudgetShare)
			same(t, "Store.Command", o.Store.Command, "hook")
			same(t, "In is stdin", o.In != nil, true)
		}},
		{name: "every flag", args: []string{"hook", "--cache-dir", "/c", "--timeout", "3s", "--budget", "2000", "--budget-share", "2.5",
			"--model", "gpt-4o", "--client", "Codex"}, check: func(t *testing.T, o *hookOptions) {
			same(t, "CacheDir, Model, Client", []string{o.CacheDir, o.Model, o.Client}, []string{"/c", "gpt-4o", "Codex"})
			same(t, "Timeout", o.Timeout, 3*time.Second)
			same(t, "Budget", o.Budget, 2000)
			same(t, "Share", o.Share, 2.5)
		}},
	})
}

func TestSetupFlags(t *testing.T) {
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	runFlagCases(t, newSetupCmd, []flagCase[setupOptions]{
		{name: "defaults", args: []string{"setup", "claude-code"}, env: map[string]string{"HOME": "/home/u"}, check: func(t *testing.T, o *setupOptions) {
			same(t, "Client, Home, Project", []string{o.Client, o.Home, o.Project}, []string{"claude-code", "/home/u", cwd})
			same(t, "Scope", o.Scope, setup.ScopeUser)
			same(t, "DryRun, Uninstall, JSON", []bool{o.DryRun, o.Uninstall, o.JSON}, []bool{false, false, false})
			same(t, "Command set", o.Command != "", true)
		}},
		{name: "every flag", args: []string{"setup", "codex", "--project", "--dir", "/src/app", "--command", "/bin/ctxfold", "--dry-run", "--uninstall", "--json"},
			env: map[string]string{"HOME": "/home/u", "CODEX_HOME": "/cx"},
			check: func(t *testing.T, o *setupOptions) {
				same(t, "Scope", o.Scope, setup.ScopeProject)
				same(t, "Project, Command, CODEX_HOME", []string{o.Project, o.Command, o.Getenv("CODEX_HOME")}, []string{"/src/app", "/bin/ctxfold", "/cx"})
				same(t, "DryRun, Uninstall, JSON", []bool{o.DryRun, o.Uninstall, o.JSON}, []bool{true, true, true})
			}},
		{name: "user and project", args: []string{"setup", "claude-code", "--user", "--project"}, env: map[string]string{"HOME": "/h"}, refused: "--user and --project exclude each other"},
		{name: "no HOME", args: []string{"setup", "claude-code"}, refused: "HOME is not set to an absolute path"},
	})
}

func TestMCPFlags(t *testing.T) {
	runFlagCases(t, newMCPCmd, []flagCase[mcpOptions]{
		{name: "defaults", args: []string{"mcp"}, env: map[string]string{"HOME": "/home/u", "XDG_CACHE_HOME": "/cache"}, check: func(t *testing.T, o *mcpOptions) {
			s := o.Server
			same(t, "Transcript, Session, Model", []string{s.Locate.Transcript, s.Locate.Session, s.Model}, []string{"", "", ""})
			same(t, "Home, CacheDir", []string{s.Locate.Home, s.CacheDir}, []string{"/home/u", "/cache/ctxfold"})
			same(t, "Store.Command", s.Store.Command, "mcp")
			same(t, "Version set", s.Version != "", true)
		}},
		{name: "every flag", args: []string{"mcp", "--transcript", "t.jsonl", "--session", "s", "--cache-dir", "/c", "--model", "gpt-4o"}, check: func(t *testing.T, o *mcpOptions) {
			s := o.Server
			same(t, "Transcript, Session, CacheDir, Model", []string{s.Locate.Transcript, s.Locate.Session, s.CacheDir, s.Model}, []string{"t.jsonl", "s", "/c", "gpt-4o"})
		}},
	})
}

func TestPinFlags(t *testing.T) {
	runFlagCases(t, newPinCmd, []flagCase[pinOptions]{
		{name: "list", args: []string{"pin", "s"}, check: func(t *testing.T, o *pinOptions) {
			same(t, "Dir", o.Dir, "s")
			same(t, "IDs", o.IDs, []string{})
			same(t, "Unpin", o.Unpin, false)
			same(t, "Store.Command", o.Store.Command, "pin")
		}},
		{name: "pin ids", args: []string{"pin", "s", "u1", "u2", "--json"}, check: func(t *testing.T, o *pinOptions) {
			same(t, "IDs", o.IDs, []string{"u1", "u2"})
			same(t, "JSON", o.JSON, true)
			same(t, "Now is the factory's", o.Now().Equal(coreNow), true)
		}},
	})
	runFlagCases(t, newUnpinCmd, []flagCase[pinOptions]{
		{name: "unpin", args: []string{"unpin", "s", "u1"}, check: func(t *testing.T, o *pinOptions) {
			same(t, "IDs", o.IDs, []string{"u1"})
			same(t, "Unpin", o.Unpin, true)
			same(t, "Store.Command", o.Store.Command, "unpin")
		}},
		{name: "no id", args: []string{"unpin", "s"}, refused: "needs at least 2 argument(s)"},
	})
}

// The persistent flags reach every command's options, from the command
// line, the environment or the config file.
func TestCheckoutFlags(t *testing.T) {
	runFlagCases(t, newCheckoutCmd, []flagCase[checkoutOptions]{
		{name: "defaults", args: []string{"checkout", "s"}, check: func(t *testing.T, o *checkoutOptions) {
			same(t, "Dir, ID", []string{o.Dir, o.ID}, []string{"s", ""})
			same(t, "Store", []any{o.Store.Command, o.Store.LockTimeout, o.Store.MaxLineBytes}, []any{"checkout", store.DefaultLockTimeout, transcript.DefaultMaxLineBytes})
			same(t, "Open.MaxLineBytes", o.Open.MaxLineBytes, transcript.DefaultMaxLineBytes)
		}},
		{name: "persistent flags", args: []string{"checkout", "s", "n7", "--json", "--lock-timeout", "2s", "--max-line-bytes", "1000"}, check: func(t *testing.T, o *checkoutOptions) {
			same(t, "ID", o.ID, "n7")
			same(t, "JSON", o.JSON, true)
			same(t, "Store", []any{o.Store.LockTimeout, o.Store.MaxLineBytes}, []any{2 * time.Second, 1000})
			same(t, "Open.MaxLineBytes", o.Open.MaxLineBytes, 1000)
		}},
		{name: "persistent settings from the environment", args: []string{"checkout", "s"},
			env: map[string]string{"CTXFOLD_LOCK_TIMEOUT": "7s", "CTXFOLD_MAX_LINE_BYTES": "2000", "CTXFOLD_JSON": "true"},
			check: func(t *testing.T, o *checkoutOptions) {
				same(t, "JSON", o.JSON, true)
				same(t, "Store", []any{o.Store.LockTimeout, o.Store.MaxLineBytes}, []any{7 * time.Second, 2000})
			}},
		{name: "persistent settings from the config file", args: []string{"checkout", "s"},
			env: configFile(t, "lock-timeout: 9s\nmax-line-bytes: 3000\njson: true\n", nil),
			check: func(t *testing.T, o *checkoutOptions) {
				same(t, "JSON", o.JSON, true)
				same(t, "Store", []any{o.Store.LockTimeout, o.Store.MaxLineBytes}, []any{9 * time.Second, 3000})
			}},
		{name: "three arguments", args: []string{"checkout", "s", "a", "b"}, refused: "takes 1 to 2 arguments, got 3"},
	})
}

func TestAppendFlags(t *testing.T) {
	runFlagCases(t, newAppendCmd, []flagCase[appendOptions]{
		{name: "one node", args: []string{"append", "s", "--role", "tool", "--content", "ok", "--id", "t1", "--predecessor", "a1",
			"--caller", "c1", "--tool-call-id", "call1", "--name", "bash"}, check: func(t *testing.T, o *appendOptions) {
			n := o.Node
			same(t, "Role", n.Role, transcript.RoleTool)
			same(t, "Content", n.Content, transcript.TextContent("ok"))
			same(t, "ids", []string{n.ID, n.Predecessor, n.Caller, n.ToolCallID, n.Name}, []string{"t1", "a1", "c1", "call1", "bash"})
			same(t, "Store.Command", o.Store.Command, "append")
		}},
		{name: "tool calls", args: []string{"append", "s", "--role", "assistant", "--content", "", "--root", "--tool-calls", `[{"id":"c1","name":"bash","arguments":{}}]`},
			check: func(t *testing.T, o *appendOptions) {
				same(t, "Root", o.Root, true)
				same(t, "ToolCalls", len(o.Node.ToolCalls) == 1 && o.Node.ToolCalls[0].ID == "c1", true)
			}},
		{name: "a batch", args: []string{"append", "s", "--file", "-", "--json"}, check: func(t *testing.T, o *appendOptions) {
			same(t, "File", o.File, "-")
			same(t, "JSON", o.JSON, true)
			same(t, "Node", o.Node.Role, transcript.Role(""))
		}},
		{name: "file and role", args: []string{"append", "s", "--file", "b", "--role", "user"}, refused: "--file cannot be combined with --role or --content"},
		{name: "root and predecessor", args: []string{"append", "s", "--role", "user", "--root", "--predecessor", "a"}, refused: "--root cannot be combined with --predecessor"},
		{name: "no role", args: []string{"append", "s", "--content", "x"}, refused: "--role is required (or --file)"},
		{name: "bad role", args: []string{"append", "s", "--role", "robot"}, refused: `--role must be system, user, assistant or tool, got "robot"`},
		{name: "bad tool calls", args: []string{"append", "s", "--role", "assistant", "--tool-calls", "{"}, refused: "--tool-calls: expected a JSON array"},
	})
}

func TestSmallCommandFlags(t *testing.T) {
	runFlagCases(t, newInitCmd, []flagCase[initOptions]{
		{name: "init", args: []string{"init", "s", "--model", "gpt-4o"}, check: func(t *testing.T, o *initOptions) {
			same(t, "Dir, Model", []string{o.Dir, o.Model}, []string{"s", "gpt-4o"})
			same(t, "Store.Command", o.Store.Command, "init")
		}},
		{name: "init with a configured model", args: []string{"init", "s"}, env: map[string]string{"CTXFOLD_MODEL": "claude-sonnet-4"}, check: func(t *testing.T, o *initOptions) {
			same(t, "Model", o.Model, "claude-sonnet-4")
		}},
	})
	runFlagCases(t, newRepairCmd, []flagCase[repairOptions]{
		{name: "repair", args: []string{"repair", "s", "--unlock", "--json"}, check: func(t *testing.T, o *repairOptions) {
			same(t, "Dir", o.Dir, "s")
			same(t, "Unlock, JSON", []bool{o.Unlock, o.JSON}, []bool{true, true})
			same(t, "Store.Command", o.Store.Command, "repair")
		}},
	})
	runFlagCases(t, newConfigCmd, []flagCase[configOptions]{
		{name: "config", args: []string{"config", "--model", "gpt-4o", "--json"}, env: map[string]string{"CTXFOLD_WINDOW": "100"}, check: func(t *testing.T, o *configOptions) {
			same(t, "JSON", o.JSON, true)
			same(t, "model", []any{o.Settings["model"].Value, o.Settings["model"].Source}, []any{"gpt-4o", SourceFlag})
			same(t, "window", []any{o.Settings["window"].Value, o.Settings["window"].Source}, []any{int64(100), SourceEnv})
		}},
	})
	runFlagCases(t, newModelsCmd, []flagCase[modelsOptions]{
		{name: "models", args: []string{"models"}, env: configFile(t, "models:\n  mine: {window: 4096}\n", nil), check: func(t *testing.T, o *modelsOptions) {
			same(t, "Models[mine].Window", o.Models["mine"].Window, 4096)
		}},
	})
	runFlagCases(t, newVersionCmd, []flagCase[versionOptions]{
		{name: "version", args: []string{"version", "--json"}, check: func(t *testing.T, o *versionOptions) {
			same(t, "JSON", o.JSON, true)
		}},
	})
	runFlagCases(t, newCompletionCmd, []flagCase[completionOptions]{
		{name: "completion", args: []string{"completion", "fish"}, check: func(t *testing.T, o *completionOptions) {
			same(t, "Shell", o.Shell, "fish")
			same(t, "Root", o.Root.Name(), "ctxfold")
		}},
	})
	runFlagCases(t, newGenDocsCmd, []flagCase[genDocsOptions]{
		{name: "gen-docs", args: []string{"gen-docs", "--check", "--dir", "/repo"}, check: func(t *testing.T, o *genDocsOptions) {
			same(t, "Dir", o.Dir, "/repo")
			same(t, "Check", o.Check, true)
		}},
	})
}

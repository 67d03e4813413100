package cmd

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/summarize"
)

// modelFlags are the model and budget flags shared by the commands that
// budget a request (addModelFlags). loadConfig writes an environment or
// config-file value into the flag, so the fields hold the resolved
// setting (flag > env > config > default).
type modelFlags struct {
	Model, Encoding              string
	Window, MaxOutput, OutputCap int
	NoCalibrate                  bool
	// ExplicitModel: --model was given on the command line (not by the
	// environment or the config file).
	ExplicitModel bool
}

// addModelFlags declares the model and budget flags into mf.
func addModelFlags(cmd *cobra.Command, mf *modelFlags) {
	fl := cmd.Flags()
	fl.StringVar(&mf.Model, "model", "", "model to budget for (default: the session's recorded model, then the configured model)")
	fl.StringVar(&mf.Encoding, "encoding", "", "count with this encoding: o200k_base or cl100k_base (default: the model's)")
	fl.IntVar(&mf.Window, "window", 0, "context window in tokens (overrides the model's)")
	fl.IntVar(&mf.MaxOutput, "max-output", 0, "output capability in tokens (overrides the model's)")
	fl.IntVar(&mf.OutputCap, "output-cap", 0, "explicit output reserve in tokens, used as given")
	fl.BoolVar(&mf.NoCalibrate, "no-calibrate", false, "do not calibrate against recorded usage: budget on the raw total")
	// --model and --encoding complete through registerFlagCompletions
	// (the model list includes the config's models:).
}

// recordExplicit notes whether --model was given on the command line.
func (mf *modelFlags) recordExplicit(cmd *cobra.Command) {
	mf.ExplicitModel = cmd.Flags().Changed("model")
}

// resolveModelOptions is the one model resolver of the commands that budget
// a request: estimate, compact, graph and render --fit.
// It reads the flags addModelFlags declares and the config's models: table.
//
// The returned options' Model is the explicit --model only (set on the
// command line), and fallback is the model from CTXFOLD_MODEL or the config
// file. The session is opened later, so the caller finishes with
// opts.ForSession(session's meta, fallback) (estimate.Options.ForSession):
// an explicit flag, else the model the session records, else the
// configured one — the order `ctxfold estimate` has always used.
//
// --encoding (from any source) must be a known encoding, and the sizes must
// not be negative; both are *UsageError.
func (f *Factory) resolveModelOptions(mf modelFlags) (opts estimate.Options, fallback string, err error) {
	if mf.ExplicitModel {
		opts.Model = mf.Model
	} else {
		fallback = mf.Model
	}
	opts.Encoding = mf.Encoding
	if opts.Encoding != "" && !validEncoding(opts.Encoding) {
		return opts, "", &UsageError{Err: errorf("--encoding must be %s, got %q", strings.Join(estimate.Encodings, " or "), opts.Encoding)}
	}
	for _, size := range []struct {
		name  string
		value int
		dst   *int
	}{{"window", mf.Window, &opts.Window}, {"max-output", mf.MaxOutput, &opts.MaxOutput}, {"output-cap", mf.OutputCap, &opts.OutputCap}} {
		*size.dst = size.value
		if *size.dst < 0 {
			return opts, "", &UsageError{Err: errorf("--%s must not be negative, got %d", size.name, *size.dst)}
		}
	}
	models, err := f.configModels()
	if err != nil {
		return opts, "", err
	}
	opts.Models = models
	opts.NoCalibrate = mf.NoCalibrate
	return opts, fallback, nil
}

// configModels reads and validates the config's models: table (nil when
// it has none): known encodings and providers, sizes not negative.
func (f *Factory) configModels() (map[string]estimate.Model, error) {
	c := f.Config
	if !c.IsSet("models") {
		return nil, nil
	}
	models := map[string]estimate.Model{}
	if err := c.UnmarshalKey("models", &models); err != nil {
		return nil, &UsageError{Err: errorf("config models: %v", err)}
	}
	for name, m := range models {
		if m.Encoding != "" && !validEncoding(m.Encoding) {
			return nil, &UsageError{Err: errorf("config models.%s.encoding: unknown encoding %q", name, m.Encoding)}
		}
		if !estimate.ValidProvider(m.Provider) {
			return nil, &UsageError{Err: errorf("config models.%s.provider: must be %s, got %q", name, strings.Join(estimate.Providers, ", "), m.Provider)}
		}
		if m.Window < 0 || m.MaxOutput < 0 || m.LongWindow < 0 {
			return nil, &UsageError{Err: errorf("config models.%s: window and max_output must not be negative", name)}
		}
	}
	return models, nil
}

// modelNotice is the warning import and init give up front about the
// model a session records: "" when it resolves exactly or as an alias, the
// family warning when another model stands in, and a plain warning when
// nothing matches (every budgeting command will then need --window).
func modelNotice(model string, models map[string]estimate.Model) string {
	if model == "" {
		return ""
	}
	r, ok := estimate.ResolveModel(model, models)
	if !ok {
		return fmt.Sprintf("model %q is not in the model table and no family matches: estimate, compact and render --fit will need --window (or a models: entry in the config); see ctxfold models", model)
	}
	return r.Warning()
}

// warnFamily prints the one warning of a model that resolved by family
// (estimate.Resolution.Warning): the name was not in the table and
// another model's figures budget it.
func warnFamily(w io.Writer, est estimate.Options) {
	if r, ok := estimate.ResolveModel(est.Model, est.Models); ok {
		if msg := r.Warning(); msg != "" {
			warnf(w, "%s", msg)
		}
	}
}

// summarizerSettings are the summarizer flags compact and render --fit
// share (addSummarizerFlags), resolved as the model flags are.
type summarizerSettings struct {
	Name, Cmd, BaseURL, Model string
	// APIKey comes from CTXFOLD_API_KEY or OPENAI_API_KEY, never a flag.
	APIKey string
	// CmdGiven: --summarizer-cmd was given on the command line (a
	// configured summarizer-cmd is allowed to sit unused).
	CmdGiven bool
	// Warn receives the openai summarizer's retries (stderr).
	Warn io.Writer
}

// addSummarizerFlags declares the summarizer flags into s. The API key is
// never a flag (see apiKey).
func addSummarizerFlags(cmd *cobra.Command, s *summarizerSettings) {
	fl := cmd.Flags()
	fl.StringVar(&s.Name, "summarizer", "extractive", "extractive, openai or exec")
	fl.StringVar(&s.Cmd, "summarizer-cmd", "", "shell command for --summarizer exec (prompt on stdin, summary on stdout)")
	fl.StringVar(&s.BaseURL, "base-url", "", "Chat Completions endpoint for --summarizer openai")
	fl.StringVar(&s.Model, "summary-model", "", "model that writes the summary for --summarizer openai")
	_ = cmd.RegisterFlagCompletionFunc("summarizer", fixedCompletion("extractive", "openai", "exec"))
}

// resolve finishes the settings (flag > env > config): the API key from
// the environment, and validate.
func (s *summarizerSettings) resolve(cmd *cobra.Command, getenv func(string) string) error {
	s.APIKey = apiKey(getenv)
	s.CmdGiven = cmd.Flags().Changed("summarizer-cmd")
	return s.validate()
}

// validate rejects bad combinations: the name is known, exec has a
// command, and an explicit --summarizer-cmd is only given with exec.
func (s summarizerSettings) validate() error {
	switch s.Name {
	case "extractive", "openai":
		if s.Cmd != "" && s.CmdGiven {
			return &UsageError{Err: errors.New("--summarizer-cmd needs --summarizer exec")}
		}
	case "exec":
		if strings.TrimSpace(s.Cmd) == "" {
			return &UsageError{Err: errors.New("--summarizer exec needs --summarizer-cmd")}
		}
	default:
		return &UsageError{Err: fmt.Errorf("--summarizer must be extractive, openai or exec, got %q", s.Name)}
	}
	return nil
}

// build makes the summarizer; defaultModel is the openai summarizer's model
// when --summary-model is not given (the budgeted model, when explicit).
func (s summarizerSettings) build(defaultModel string) (summarize.Summarizer, error) {
	switch s.Name {
	case "openai":
		model := s.Model
		if model == "" {
			model = defaultModel
		}
		if model == "" {
			return nil, &UsageError{Err: errors.New("--summarizer openai needs --summary-model")}
		}
		if s.APIKey == "" && s.BaseURL == "" {
			return nil, &UsageError{Err: errors.New("--summarizer openai needs CTXFOLD_API_KEY or OPENAI_API_KEY (or a --base-url that needs no key)")}
		}
		if s.BaseURL != "" {
			if err := summarize.CheckBaseURL(s.BaseURL); err != nil {
				return nil, &UsageError{Err: err}
			}
		}
		o := &summarize.OpenAI{BaseURL: s.BaseURL, APIKey: s.APIKey, Model: model}
		if w := s.Warn; w != nil {
			o.OnRetry = func(attempt, attempts int, wait time.Duration, err error) {
				warnf(w, "%s", fmt.Sprintf("openai summarizer: attempt %d of %d failed (%v); retrying in %s", attempt, attempts, err, wait))
			}
		}
		return o, nil
	case "exec":
		return &summarize.Exec{Command: s.Cmd}, nil
	}
	return summarize.Extractive{}, nil
}

// apiKey is the summarizer API key: CTXFOLD_API_KEY, else OPENAI_API_KEY.
// It is never a flag, so it never shows in a process list or shell history.
func apiKey(getenv func(string) string) string {
	if k := getenv("CTXFOLD_API_KEY"); k != "" {
		return k
	}
	return getenv("OPENAI_API_KEY")
}

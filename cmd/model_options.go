package cmd

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/summarize"
)

// addModelFlags declares the model and budget flags shared by the commands
// that budget a request.
func addModelFlags(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.String("model", "", "model to budget for (default: the session's recorded model, then the configured model)")
	fl.String("encoding", "", "count with this encoding: o200k_base or cl100k_base (default: the model's)")
	fl.Int("window", 0, "context window in tokens (overrides the model's)")
	fl.Int("max-output", 0, "output capability in tokens (overrides the model's)")
	fl.Int("output-cap", 0, "explicit output reserve in tokens, used as given")
	fl.Bool("no-calibrate", false, "do not calibrate against recorded usage: budget on the raw total")
	// --model and --encoding complete through registerFlagCompletions
	// (the model list includes the config's models:).
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
func (f *Factory) resolveModelOptions(cmd *cobra.Command) (opts estimate.Options, fallback string, err error) {
	c := f.Config
	if cmd.Flags().Changed("model") {
		opts.Model, _ = cmd.Flags().GetString("model")
	} else {
		fallback = c.GetString("model")
	}
	opts.Encoding = c.GetString("encoding")
	if opts.Encoding != "" && !validEncoding(opts.Encoding) {
		return opts, "", &UsageError{Err: errorf("--encoding must be %s, got %q", strings.Join(estimate.Encodings, " or "), opts.Encoding)}
	}
	for name, dst := range map[string]*int{"window": &opts.Window, "max-output": &opts.MaxOutput, "output-cap": &opts.OutputCap} {
		*dst = c.GetInt(name)
		if *dst < 0 {
			return opts, "", &UsageError{Err: errorf("--%s must not be negative, got %d", name, *dst)}
		}
	}
	models, err := f.configModels()
	if err != nil {
		return opts, "", err
	}
	opts.Models = models
	opts.NoCalibrate = c.GetBool("no-calibrate")
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

// addSummarizerFlags declares the summarizer flags compact and render --fit
// share. The API key is never a flag (see apiKey).
func addSummarizerFlags(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.String("summarizer", "extractive", "extractive, openai or exec")
	fl.String("summarizer-cmd", "", "shell command for --summarizer exec (prompt on stdin, summary on stdout)")
	fl.String("base-url", "", "Chat Completions endpoint for --summarizer openai")
	fl.String("summary-model", "", "model that writes the summary for --summarizer openai")
	_ = cmd.RegisterFlagCompletionFunc("summarizer", fixedCompletion("extractive", "openai", "exec"))
}

// summarizerSettings are the summarizer flags, resolved.
type summarizerSettings struct {
	Name, Cmd, BaseURL, Model string
	// APIKey comes from CTXFOLD_API_KEY or OPENAI_API_KEY, never a flag.
	APIKey string
}

// summarizerSettings reads the flags addSummarizerFlags declares (flag >
// env > config) and validates them: the name is known, exec has a command,
// and an explicit --summarizer-cmd is only given with exec.
func (f *Factory) summarizerSettings(cmd *cobra.Command) (summarizerSettings, error) {
	c := f.Config
	s := summarizerSettings{Name: c.GetString("summarizer"), Cmd: c.GetString("summarizer-cmd"),
		BaseURL: c.GetString("base-url"), Model: c.GetString("summary-model"), APIKey: apiKey(f.Getenv)}
	return s, s.validate(cmd.Flags().Changed)
}

// validate rejects bad combinations; changed says whether a flag was given
// on the command line (a configured summarizer-cmd is allowed to sit unused).
func (s summarizerSettings) validate(changed func(string) bool) error {
	switch s.Name {
	case "extractive", "openai":
		if s.Cmd != "" && changed("summarizer-cmd") {
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
		return &summarize.OpenAI{BaseURL: s.BaseURL, APIKey: s.APIKey, Model: model}, nil
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

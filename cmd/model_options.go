package cmd

import (
	"github.com/spf13/cobra"

	"github.com/ctxfold/ctxfold/estimate"
)

// addModelFlags declares the model and budget flags shared by the commands
// that budget a request.
func addModelFlags(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.String("model", "", "model to budget for (default: the session's recorded model)")
	fl.String("encoding", "", "count with this encoding: o200k_base or cl100k_base (default: the model's)")
	fl.Int("window", 0, "context window in tokens (overrides the model's)")
	fl.Int("max-output", 0, "output capability in tokens (overrides the model's)")
	fl.Int("output-cap", 0, "explicit output reserve in tokens, used as given")
}

// modelOptions resolves the model flags (flag > env > config file) and the
// config's models: table into estimate options.
func (f *Factory) modelOptions() (estimate.Options, error) {
	c := f.Config
	e := estimate.Options{Model: c.GetString("model"), Encoding: c.GetString("encoding")}
	for name, dst := range map[string]*int{"window": &e.Window, "max-output": &e.MaxOutput, "output-cap": &e.OutputCap} {
		*dst = c.GetInt(name)
		if *dst < 0 {
			return e, &UsageError{Err: errorf("--%s must not be negative, got %d", name, *dst)}
		}
	}
	if c.IsSet("models") {
		models := map[string]estimate.Model{}
		if err := c.UnmarshalKey("models", &models); err != nil {
			return e, &UsageError{Err: errorf("config models: %v", err)}
		}
		e.Models = models
	}
	return e, nil
}

// apiKey is the summarizer API key: CTXFOLD_API_KEY, else OPENAI_API_KEY.
// It is never a flag, so it never shows in a process list or shell history.
func apiKey(getenv func(string) string) string {
	if k := getenv("CTXFOLD_API_KEY"); k != "" {
		return k
	}
	return getenv("OPENAI_API_KEY")
}

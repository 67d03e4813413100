package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// Where a setting's value came from, in precedence order (highest first):
// flag > environment (CTXFOLD_*) > config file > default.
const (
	SourceFlag    = "flag"
	SourceEnv     = "env"
	SourceFile    = "file"
	SourceDefault = "default"
)

// configKey is one setting the config file and the environment may set.
type configKey struct {
	Name string
	// Usage describes the key when no command defines a flag of that name
	// (models is file-only: a map, not a flag).
	Usage string
}

// configKeys is the whitelist of settings that may come from the config
// file or CTXFOLD_* variables (docs/CONFIG.md documents it; keep the two in
// step). Keys are flag names. Other flags (--head, --fail-above, …) are
// per-invocation and only ever come from the command line: a stray
// CTXFOLD_HEAD in someone's shell must not silently change what a command
// reads. Anything else in the config file is reported as unknown.
var configKeys = []configKey{
	{Name: "json", Usage: "print JSON instead of text"},
	{Name: "color", Usage: "colour output: auto, always or never"},
	{Name: "lock-timeout", Usage: "how long a write waits for another writer"},
	{Name: "max-line-bytes", Usage: "longest JSONL line accepted"},
	{Name: "model", Usage: "model to budget for when a session records none"},
	{Name: "encoding", Usage: "token encoding: o200k_base or cl100k_base"},
	{Name: "window", Usage: "context window override, in tokens"},
	{Name: "max-output", Usage: "output capability override, in tokens"},
	{Name: "lang", Usage: "language of compact's messages: en or zh"},
	{Name: "summarizer", Usage: "extractive, openai or exec (compact, render --fit)"},
	{Name: "summarizer-cmd", Usage: "shell command the exec summarizer runs"},
	{Name: "base-url", Usage: "Chat Completions endpoint of the openai summarizer"},
	{Name: "summary-model", Usage: "model the openai summarizer calls"},
	{Name: "cache-max-bytes", Usage: "size cap of the cache of transcript files (default 2GiB; 0: no cap)"},
	{Name: "models", Usage: "extra or overridden model table entries (config file only)"},
}

// flaglessDefaults are the defaults `ctxfold config` shows for the keys
// no command has a flag for (cacheMaxBytes reads the setting itself).
var flaglessDefaults = map[string]any{"cache-max-bytes": "2GiB"}

// fileOnlyKeys hold structured values: they have no flag and no
// environment form.
var fileOnlyKeys = map[string]bool{"models": true}

func isConfigKey(name string) bool {
	for _, k := range configKeys {
		if k.Name == name {
			return true
		}
	}
	return false
}

// envName is the environment variable of a key: CTXFOLD_ plus the flag name
// in upper case with dashes as underscores (--max-output → CTXFOLD_MAX_OUTPUT).
func envName(key string) string {
	return "CTXFOLD_" + strings.ToUpper(strings.ReplaceAll(key, "-", "_"))
}

// Setting is one resolved configuration value and where it came from.
type Setting struct {
	Key    string
	Value  any
	Source string
	// Env is the variable consulted for the key ("" for file-only keys).
	Env string
}

// loadConfig resolves settings with the precedence flag > environment
// (CTXFOLD_*) > config file > default. Keys are the flag names; in the
// environment dashes become underscores (--max-output → CTXFOLD_MAX_OUTPUT).
// The resolved values are stored in f.Config (viper) and, where the running
// command defines the flag, in the flag itself, so a command reading either
// sees the same value. Where each came from is recorded in f.Settings for
// `ctxfold config`. Unknown keys in the config file are warnings on stderr.
func (f *Factory) loadConfig(cmd *cobra.Command) error {
	v := f.Config
	path, explicit := f.configPath()
	file := viper.New()
	if path != "" {
		if _, err := os.Stat(path); err == nil {
			file.SetConfigFile(path)
			if filepath.Ext(path) == "" {
				file.SetConfigType("yaml")
			}
			if err := file.ReadInConfig(); err != nil {
				return &UsageError{Err: fmt.Errorf("config file %s: %w", path, err)}
			}
			f.ConfigFile = path
		} else if explicit {
			return &UsageError{Err: fmt.Errorf("config file: %w", err)}
		}
	}
	f.ConfigWarnings = unknownConfigKeys(file, path)
	// Shell completion runs this too; its stderr would land in the prompt.
	if cmd.Name() != cobra.ShellCompRequestCmd && cmd.Name() != cobra.ShellCompNoDescRequestCmd {
		for _, w := range f.ConfigWarnings {
			warnf(f.IO.ErrOut, "%s", w)
		}
	}
	if err := v.BindPFlags(cmd.Flags()); err != nil {
		return err
	}
	f.Settings = map[string]Setting{}
	for _, k := range configKeys {
		s, err := f.resolve(cmd, file, k.Name)
		if err != nil {
			return err
		}
		f.Settings[k.Name] = s
	}
	// --color and --json are read back through viper, not f.global: under
	// shell completion (cobra's __complete parses no flags) a CTXFOLD_*
	// or config-file value reaches viper only.
	f.IO.ColorMode = v.GetString("color")
	switch f.IO.ColorMode {
	case "auto", "always", "never":
	default:
		return &UsageError{Err: errorf("--color must be auto, always or never, got %q (from %s)", f.IO.ColorMode, f.Settings["color"].Source)}
	}
	f.IO.JSON = v.GetBool("json")
	return nil
}

// resolve finds one key's value and source. An env or file value for a flag
// the command defines is parsed by that flag, so a bad value is an error
// naming where it came from rather than a silent zero.
func (f *Factory) resolve(cmd *cobra.Command, file *viper.Viper, key string) (Setting, error) {
	s := Setting{Key: key, Source: SourceDefault}
	if !fileOnlyKeys[key] {
		s.Env = envName(key)
	}
	fl := cmd.Flags().Lookup(key)
	var raw any
	switch {
	case fl != nil && fl.Changed:
		s.Source, s.Value = SourceFlag, flagValue(fl)
		return s, nil
	case s.Env != "" && f.Getenv(s.Env) != "":
		s.Source, raw = SourceEnv, f.Getenv(s.Env)
	case file.IsSet(key):
		s.Source, raw = SourceFile, file.Get(key)
	default:
		if fl != nil {
			s.Value = flagValue(fl)
		} else if def := treeFlag(cmd.Root(), key); def != nil {
			s.Value, _ = typedValue(def.Value.Type(), def.DefValue)
		} else if d, ok := flaglessDefaults[key]; ok {
			s.Value = d
		}
		return s, nil
	}
	if fileOnlyKeys[key] {
		f.Config.Set(key, raw)
		s.Value = raw
		return s, nil
	}
	text, err := scalarText(raw)
	if err == nil {
		switch def := treeFlag(cmd.Root(), key); {
		case fl != nil:
			if err = fl.Value.Set(text); err == nil {
				raw = flagValue(fl)
			}
		case def != nil:
			raw, err = typedValue(def.Value.Type(), text)
		}
	}
	if err != nil {
		where := s.Env
		if s.Source == SourceFile {
			where = fmt.Sprintf("config file %s: %s", f.ConfigFile, key)
		}
		return s, &UsageError{Err: fmt.Errorf("%s: invalid value %q: %v", where, fmt.Sprint(raw), err)}
	}
	f.Config.Set(key, raw)
	s.Value = raw
	return s, nil
}

// flagValue is a flag's current value as a plain Go value (a bool, a
// number, a list or a string) for display and for viper.
func flagValue(fl *pflag.Flag) any {
	if sv, ok := fl.Value.(pflag.SliceValue); ok {
		return sv.GetSlice()
	}
	v, err := typedValue(fl.Value.Type(), fl.Value.String())
	if err != nil {
		return fl.Value.String()
	}
	return v
}

// typedValue parses text as a flag of type typ would; types without a
// natural JSON form (durations, strings) stay text.
func typedValue(typ, text string) (any, error) {
	switch typ {
	case "bool":
		return strconv.ParseBool(text)
	case "int", "int8", "int16", "int32", "int64":
		return strconv.ParseInt(text, 10, 64)
	case "uint", "uint8", "uint16", "uint32", "uint64":
		return strconv.ParseUint(text, 10, 64)
	case "float32", "float64":
		return strconv.ParseFloat(text, 64)
	case "duration":
		if _, err := time.ParseDuration(text); err != nil {
			return nil, err
		}
	}
	return text, nil
}

// scalarText turns a config-file value into the text a flag parses.
func scalarText(v any) (string, error) {
	switch x := v.(type) {
	case map[string]any:
		return "", fmt.Errorf("expected a single value, got a map")
	case []any:
		parts := make([]string, len(x))
		for i, p := range x {
			parts[i] = fmt.Sprint(p)
		}
		return strings.Join(parts, ","), nil
	}
	return fmt.Sprint(v), nil
}

// treeFlag finds the first flag named name anywhere in the command tree,
// for the default of a key the running command does not define.
func treeFlag(c *cobra.Command, name string) *pflag.Flag {
	if fl := c.Flags().Lookup(name); fl != nil {
		return fl
	}
	if fl := c.PersistentFlags().Lookup(name); fl != nil {
		return fl
	}
	for _, sub := range c.Commands() {
		if fl := treeFlag(sub, name); fl != nil {
			return fl
		}
	}
	return nil
}

// unknownConfigKeys lists the config file's top-level keys that are not
// settings, with the closest known key as a suggestion.
func unknownConfigKeys(file *viper.Viper, path string) []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range file.AllKeys() {
		top, _, _ := strings.Cut(k, ".")
		if seen[top] || isConfigKey(top) {
			continue
		}
		seen[top] = true
		msg := fmt.Sprintf("config file %s: unknown key %q", path, top)
		if looksSecret(top) {
			msg += " (API keys are read from the environment only: CTXFOLD_API_KEY or OPENAI_API_KEY)"
		} else if near := closestKey(top); near != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", near)
		}
		out = append(out, msg)
	}
	sort.Strings(out)
	return out
}

// looksSecret: a credential put in the config file gets pointed at the
// environment instead of at a similarly spelled setting.
func looksSecret(key string) bool {
	k := strings.ToLower(key)
	return strings.Contains(k, "key") && k != "models" || strings.Contains(k, "token") && !strings.Contains(k, "tokens") || strings.Contains(k, "secret") || strings.Contains(k, "password")
}

// closestKey is the known key within edit distance 2 (or sharing its
// spelling once - and _ are ignored), if any.
func closestKey(s string) string {
	norm := func(x string) string { return strings.NewReplacer("_", "", "-", "").Replace(strings.ToLower(x)) }
	best, bestD := "", 3
	for _, k := range configKeys {
		if norm(k.Name) == norm(s) {
			return k.Name
		}
		if d := editDistance(s, k.Name); d < bestD {
			best, bestD = k.Name, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// configPath is the config file to read: --config, else $CTXFOLD_CONFIG
// (both explicit: a missing file is an error), else the default path.
func (f *Factory) configPath() (path string, explicit bool) {
	path = f.global.ConfigFile
	if path == "" {
		path = f.Getenv("CTXFOLD_CONFIG")
	}
	if path != "" {
		return path, true
	}
	return defaultConfigPath(f.Getenv), false
}

// defaultConfigPath is $XDG_CONFIG_HOME/ctxfold/config.yaml (or the
// platform's user config directory).
func defaultConfigPath(getenv func(string) string) string {
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "ctxfold", "config.yaml")
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, ".config", "ctxfold", "config.yaml")
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "ctxfold", "config.yaml")
}

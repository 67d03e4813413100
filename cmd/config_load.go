package cmd

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// loadConfig resolves settings with the precedence flag > environment
// (CTXFOLD_*) > config file > default. Keys are the flag names; in the
// environment dashes become underscores (--max-output → CTXFOLD_MAX_OUTPUT).
func (f *Factory) loadConfig(cmd *cobra.Command) error {
	v := f.Config
	v.SetEnvPrefix("CTXFOLD")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	path, _ := cmd.Flags().GetString("config")
	if path == "" {
		path = f.Getenv("CTXFOLD_CONFIG")
	}
	explicit := path != ""
	if path == "" {
		path = defaultConfigPath(f.Getenv)
	}
	if path != "" {
		if _, err := os.Stat(path); err == nil {
			v.SetConfigFile(path)
			if filepath.Ext(path) == "" {
				v.SetConfigType("yaml")
			}
			if err := v.ReadInConfig(); err != nil {
				return &UsageError{Err: err}
			}
			f.ConfigFile = path
		} else if explicit {
			return &UsageError{Err: err}
		}
	}
	if err := v.BindPFlags(cmd.Flags()); err != nil {
		return err
	}
	f.IO.ColorMode = v.GetString("color")
	switch f.IO.ColorMode {
	case "auto", "always", "never":
	default:
		return &UsageError{Err: errorf("--color must be auto, always or never, got %q", f.IO.ColorMode)}
	}
	return nil
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

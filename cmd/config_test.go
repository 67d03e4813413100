package cmd

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func writeConfig(t *testing.T, body string) (xdg string) {
	t.Helper()
	xdg = t.TempDir()
	if err := os.MkdirAll(filepath.Join(xdg, "ctxfold"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(xdg, "ctxfold", "config.yaml"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return xdg
}

func setting(t *testing.T, r cliResult, key string) (value any, source string) {
	t.Helper()
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	s, ok := decodeJSON(t, r.Stdout)["settings"].(map[string]any)[key].(map[string]any)
	if !ok {
		t.Fatalf("no setting %q in %s", key, r.Stdout)
	}
	return s["value"], s["source"].(string)
}

// Precedence flag > env > file > default, for a global setting and for a
// model setting another command defines (config accepts it as a flag too).
func TestConfigPrecedence(t *testing.T) {
	xdg := writeConfig(t, "lock-timeout: 3s\nmodel: from-file\n")
	for _, tc := range []struct {
		name       string
		env        map[string]string
		args       []string
		key        string
		wantValue  any
		wantSource string
	}{
		{"default", nil, nil, "lock-timeout", "10s", SourceDefault},
		{"file", map[string]string{"XDG_CONFIG_HOME": xdg}, nil, "lock-timeout", "3s", SourceFile},
		{"env over file", map[string]string{"XDG_CONFIG_HOME": xdg, "CTXFOLD_LOCK_TIMEOUT": "5s"}, nil, "lock-timeout", "5s", SourceEnv},
		{"flag over env", map[string]string{"XDG_CONFIG_HOME": xdg, "CTXFOLD_LOCK_TIMEOUT": "5s"}, []string{"--lock-timeout", "7s"}, "lock-timeout", "7s", SourceFlag},
		{"model default", nil, nil, "model", "", SourceDefault},
		{"model file", map[string]string{"XDG_CONFIG_HOME": xdg}, nil, "model", "from-file", SourceFile},
		{"model env", map[string]string{"XDG_CONFIG_HOME": xdg, "CTXFOLD_MODEL": "from-env"}, nil, "model", "from-env", SourceEnv},
		{"model flag", map[string]string{"XDG_CONFIG_HOME": xdg, "CTXFOLD_MODEL": "from-env"}, []string{"--model", "from-flag"}, "model", "from-flag", SourceFlag},
		{"--config file", map[string]string{"CTXFOLD_CONFIG": filepath.Join(xdg, "ctxfold", "config.yaml")}, nil, "model", "from-file", SourceFile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := cliRun(t, tc.env, false, append([]string{"config", "--json"}, tc.args...)...)
			v, src := setting(t, r, tc.key)
			if v != tc.wantValue || src != tc.wantSource {
				t.Fatalf("%s = %v from %s, want %v from %s", tc.key, v, src, tc.wantValue, tc.wantSource)
			}
		})
	}
}

// The resolved value is what commands use, not just what config prints.
func TestConfigReachesCommands(t *testing.T) {
	xdg := writeConfig(t, "json: true\n")
	r := cliRun(t, map[string]string{"XDG_CONFIG_HOME": xdg}, false, "checkout", "../fixtures/compacted")
	if r.Code != 0 || decodeJSON(t, r.Stdout)["head"] != "a8" {
		t.Fatalf("json from the config file ignored: exit %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	r = cliRun(t, map[string]string{"XDG_CONFIG_HOME": xdg}, false, "checkout", "../fixtures/compacted", "--json=false")
	if r.Stdout != "a8\n" {
		t.Fatalf("--json=false does not win over the file: %q", r.Stdout)
	}
	if r := cliRun(t, map[string]string{"CTXFOLD_JSON": "1"}, false, "version"); decodeJSON(t, r.Stdout)["go_version"] == nil {
		t.Fatalf("CTXFOLD_JSON=1 ignored: %q", r.Stdout)
	}
	// Per-invocation flags are not settings: a stray CTXFOLD_HEAD is ignored.
	r = cliRun(t, map[string]string{"CTXFOLD_HEAD": "a4x"}, false, "render", "../fixtures/compacted", "--format", "ids")
	if r.Code != 0 || strings.Contains(r.Stdout, "a4x") {
		t.Fatalf("CTXFOLD_HEAD changed render: %q", r.Stdout)
	}
}

func TestConfigUnknownKeysAndBadValues(t *testing.T) {
	xdg := writeConfig(t, "modle: gpt-4o\nmax_output: 100\napi_key: sk-x\nmodels:\n  my-model:\n    window: 1000\n")
	r := cliRun(t, map[string]string{"XDG_CONFIG_HOME": xdg}, false, "config")
	if r.Code != 0 {
		t.Fatalf("unknown keys must not fail: exit %d %s", r.Code, r.Stderr)
	}
	for _, want := range []string{`unknown key "modle" (did you mean "model"?)`, `unknown key "max_output" (did you mean "max-output"?)`,
		`unknown key "api_key" (API keys are read from the environment only: CTXFOLD_API_KEY or OPENAI_API_KEY)`} {
		if !strings.Contains(r.Stderr, "ctxfold: warning: config file "+filepath.Join(xdg, "ctxfold", "config.yaml")+": "+want) {
			t.Errorf("stderr lacks %s:\n%s", want, r.Stderr)
		}
	}
	if strings.Contains(r.Stderr, "sk-x") {
		t.Errorf("a secret value was echoed: %s", r.Stderr)
	}
	if strings.Contains(r.Stderr, `"models"`) {
		t.Errorf("models is a known key: %s", r.Stderr)
	}
	if !strings.Contains(r.Stdout, "models\t{\"my-model\":{\"window\":1000}}\tfile\n") {
		t.Errorf("models not shown from the file:\n%s", r.Stdout)
	}
	js := decodeJSON(t, cliRun(t, map[string]string{"XDG_CONFIG_HOME": xdg}, false, "config", "--json").Stdout)
	if w, _ := js["warnings"].([]any); len(w) != 3 {
		t.Errorf("warnings = %v, want 3", js["warnings"])
	}

	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"bad env duration", map[string]string{"CTXFOLD_LOCK_TIMEOUT": "soon"}, nil, "CTXFOLD_LOCK_TIMEOUT: invalid value \"soon\""},
		{"bad file int", map[string]string{"XDG_CONFIG_HOME": writeConfig(t, "max-line-bytes: lots\n")}, nil, "max-line-bytes: invalid value \"lots\""},
		{"bad color from env", map[string]string{"CTXFOLD_COLOR": "pink"}, nil, `--color must be auto, always or never, got "pink" (from env)`},
		{"missing explicit file", nil, []string{"--config", "/nonexistent/c.yaml"}, "config file: stat /nonexistent/c.yaml"},
		{"malformed file", map[string]string{"XDG_CONFIG_HOME": writeConfig(t, "a: [\n")}, nil, "config file "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := cliRun(t, tc.env, false, append([]string{"config"}, tc.args...)...)
			if r.Code != ExitUsage || !strings.Contains(r.Stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", r.Code, r.Stderr, tc.want)
			}
		})
	}
}

func TestConfigTextOutput(t *testing.T) {
	r := cliRun(t, map[string]string{"CTXFOLD_MODEL": "gpt-4o"}, false, "config", "--color", "never")
	lines := strings.Split(r.Stdout, "\n")
	if !strings.HasPrefix(lines[0], "# config file: none (looked for ") {
		t.Errorf("first line = %q", lines[0])
	}
	for _, want := range []string{"color\tnever\tflag", "model\tgpt-4o\tenv CTXFOLD_MODEL", "lock-timeout\t10s\tdefault"} {
		if !strings.Contains(r.Stdout, want+"\n") {
			t.Errorf("piped output lacks %q:\n%s", want, r.Stdout)
		}
	}
	// On a terminal the columns are aligned with spaces, not tabs.
	r = cliRun(t, nil, true, "config", "--color", "never")
	if strings.Contains(r.Stdout, "\t") || !regexp.MustCompile(`\nlock-timeout {2,}10s {2,}default\n`).MatchString(r.Stdout) {
		t.Errorf("tty output:\n%s", r.Stdout)
	}
}

// docs/CONFIG.md documents exactly the whitelist.
func TestConfigDocListsEveryKey(t *testing.T) {
	doc, err := os.ReadFile("../docs/CONFIG.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range configKeys {
		env := "(file only)"
		if !fileOnlyKeys[k.Name] {
			env = "`" + envName(k.Name) + "`"
		}
		if row := "| `" + k.Name + "` | " + env + " |"; !strings.Contains(string(doc), row) {
			t.Errorf("docs/CONFIG.md lacks the row %s", row)
		}
	}
	if n := strings.Count(string(doc), "\n| `"); n != len(configKeys) {
		t.Errorf("docs/CONFIG.md has %d setting rows, the whitelist %d keys", n, len(configKeys))
	}
}

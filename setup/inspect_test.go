package setup

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestInspectFindsWhatSetupInstalled(t *testing.T) {
	for _, client := range []string{ClientClaudeCode, ClientCodex, ClientGemini} {
		t.Run(client, func(t *testing.T) {
			home := t.TempDir()
			codexHome := filepath.Join(home, ".codex")
			o := Options{Scope: ScopeUser, Home: home, Command: "/opt/my tools/ctxfold"}
			before, err := Inspect(client, codexAt(o, codexHome))
			if err != nil || len(before.Entries) != 0 || len(before.Missing) == 0 {
				t.Fatalf("nothing installed: %+v, %v", before, err)
			}
			if _, err := Run(context.Background(), client, codexAt(o, codexHome), false); err != nil {
				t.Fatal(err)
			}
			in, err := Inspect(client, codexAt(o, codexHome))
			if err != nil {
				t.Fatal(err)
			}
			if len(in.Missing) != 0 {
				t.Errorf("missing after install: %v", in.Missing)
			}
			for _, e := range in.Entries {
				if len(e.Argv) < 2 || e.Argv[0] != "/opt/my tools/ctxfold" {
					t.Errorf("%s %s: argv %q", e.Kind, e.Event, e.Argv)
				}
			}
			kinds := map[string]bool{}
			for _, e := range in.Entries {
				kinds[e.Kind] = true
			}
			if !kinds["hook"] || !kinds["mcp_server"] || (client == ClientClaudeCode) != kinds["status_line"] {
				t.Errorf("kinds %v", kinds)
			}
			// A hook the user took out is reported missing.
			hooksFile := map[string]string{
				ClientClaudeCode: filepath.Join(home, ".claude", "settings.json"),
				ClientCodex:      filepath.Join(codexHome, "hooks.json"),
				ClientGemini:     filepath.Join(home, ".gemini", "settings.json"),
			}[client]
			b, _ := os.ReadFile(hooksFile)
			event := map[string]string{ClientClaudeCode: "UserPromptSubmit", ClientCodex: codexHooks[0].event, ClientGemini: geminiHooks[0].event}[client]
			edited := strings.Replace(string(b), `"`+event+`"`, `"Renamed`+event+`"`, 1)
			if edited == string(b) {
				t.Fatalf("no %s in %s", event, b)
			}
			_ = os.WriteFile(hooksFile, []byte(edited), 0o600)
			in, err = Inspect(client, codexAt(o, codexHome))
			if err != nil || !slices.Contains(in.Missing, "hook "+event) {
				t.Errorf("after removing %s: missing %v, %v", event, in.Missing, err)
			}
		})
	}
}

func TestInspectRefusesUnparseable(t *testing.T) {
	home := t.TempDir()
	p := filepath.Join(home, ".gemini", "settings.json")
	_ = os.MkdirAll(filepath.Dir(p), 0o755)
	_ = os.WriteFile(p, []byte("{not json"), 0o600)
	if _, err := Inspect(ClientGemini, Options{Scope: ScopeUser, Home: home}); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("want an error naming %s, got %v", p, err)
	}
}

// codexAt is o with CODEX_HOME set to codexHome.
func codexAt(o Options, codexHome string) Options {
	o.Getenv = func(k string) string {
		if k == "CODEX_HOME" {
			return codexHome
		}
		return ""
	}
	return o
}

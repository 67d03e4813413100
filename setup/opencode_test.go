package setup

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// setup opencode writes the plugin and the MCP server, a second run
// changes nothing, doctor's Inspect finds every entry, and uninstall gives
// back the user's config byte for byte and removes the plugin.
func TestOpenCodeInstallIdempotentUninstall(t *testing.T) {
	for _, c := range []struct {
		client, folder, config, title string
	}{{ClientOpenCode, "opencode", "opencode.json", "OpenCode"}, {ClientKilo, "kilo", "kilo.json", "Kilo"}} {
		t.Run(c.client, func(t *testing.T) {
			h := t.TempDir()
			dir := filepath.Join(h, ".config", c.folder)
			_ = os.MkdirAll(dir, 0o755)
			user := []byte(`{"theme":"x","mcp":{"other":{"type":"local","command":["a"]}}}`)
			cfg := filepath.Join(dir, c.config)
			if err := os.WriteFile(cfg, user, 0o644); err != nil {
				t.Fatal(err)
			}
			o := Options{Scope: ScopeUser, Home: h, Command: "/opt/ctx fold/ctxfold"}
			cl, _ := Lookup(c.client)
			applyPlan(t, cl.Plan, o)
			plugin, err := os.ReadFile(filepath.Join(dir, "plugins", "ctxfold.js"))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{`const CTXFOLD = "/opt/ctx fold/ctxfold";`, `const CLIENT = "` + c.title + `";`,
				`"experimental.session.compacting"`, `"chat.message"`, `"session.compacted"`} {
				if !bytes.Contains(plugin, []byte(want)) {
					t.Errorf("plugin lacks %s", want)
				}
			}
			got, _ := os.ReadFile(cfg)
			if !bytes.Contains(got, []byte(`"CTXFOLD_CLIENT": "`+c.client+`"`)) || !bytes.Contains(got, []byte(`"other": {"type":"local","command":["a"]}`)) {
				t.Errorf("config:\n%s", got)
			}
			for _, ch := range applyPlan(t, cl.Plan, o) {
				if ch.Action != "unchanged" {
					t.Errorf("second install: %s %s", ch.Path, ch.Action)
				}
			}
			in, err := Inspect(c.client, o)
			if err != nil || len(in.Missing) > 0 || len(in.Entries) != 4 || in.Entries[0].Argv[0] != o.Command {
				t.Fatalf("inspect: %+v %v", in, err)
			}
			o.Uninstall = true
			applyPlan(t, cl.Plan, o)
			if got, _ := os.ReadFile(cfg); !bytes.Equal(got, user) {
				t.Errorf("uninstall left\n%s", got)
			}
			if _, err := os.Stat(filepath.Join(dir, "plugins", "ctxfold.js")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the plugin is still there: %v", err)
			}
		})
	}
}

// A plugin file of that name setup did not write is never touched; an
// older plugin of setup's is replaced.
func TestOpenCodeForeignAndOlderPlugin(t *testing.T) {
	h := t.TempDir()
	p := filepath.Join(h, ".config", "opencode", "plugins", "ctxfold.js")
	_ = os.MkdirAll(filepath.Dir(p), 0o755)
	mine := []byte("export const Mine = async () => ({})\n")
	_ = os.WriteFile(p, mine, 0o644)
	o := Options{Scope: ScopeUser, Home: h, Command: "ctxfold"}
	if _, err := OpenCodePlan(o); err == nil || !strings.Contains(err.Error(), "setup did not write") {
		t.Fatalf("a foreign plugin: %v", err)
	}
	o.Uninstall = true
	cs, err := OpenCodePlan(o)
	if err != nil || cs[0].Action != "unchanged" {
		t.Fatalf("uninstall over a foreign plugin: %v %+v", err, cs)
	}
	_ = os.WriteFile(p, []byte(ownHeader+"v0 plugin\n"), 0o644)
	o.Uninstall = false
	cs = applyPlan(t, OpenCodePlan, o)
	if cs[0].Action != "update" {
		t.Fatalf("an older plugin: %s", cs[0].Action)
	}
	if b, _ := os.ReadFile(p); !bytes.Contains(b, []byte("ctxfold "+ownVersion+" plugin")) {
		t.Errorf("not replaced:\n%s", b)
	}
}

// --project writes the project's config and .opencode/plugins.
func TestOpenCodeProjectScope(t *testing.T) {
	p := t.TempDir()
	cs, err := OpenCodePlan(Options{Scope: ScopeProject, Project: p, Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if cs[0].Path != filepath.Join(p, ".opencode", "plugins", "ctxfold.js") || cs[1].Path != filepath.Join(p, "opencode.json") {
		t.Fatalf("paths: %s %s", cs[0].Path, cs[1].Path)
	}
}

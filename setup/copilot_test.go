package setup

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A Copilot CLI mcp-config.json with a server of the user's own, as
// `copilot mcp add` writes it (1.0.102).
const copilotMCPConfig = `{
  "mcpServers": {
    "github": {
      "tools": [
        "*"
      ],
      "type": "local",
      "command": "gh-mcp",
      "args": []
    }
  }
}
`

// copilotAt is o with COPILOT_HOME set to dir.
func copilotAt(o Options, dir string) Options {
	o.Getenv = func(k string) string {
		if k == "COPILOT_HOME" {
			return dir
		}
		return ""
	}
	return o
}

func TestCopilotInstallIdempotentUninstall(t *testing.T) {
	h := t.TempDir()
	dir := filepath.Join(h, "copilot-home") // COPILOT_HOME moves the whole folder
	mcp, hooks := filepath.Join(dir, "mcp-config.json"), filepath.Join(dir, "hooks", "ctxfold.json")
	_ = os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(mcp, []byte(copilotMCPConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	o := copilotAt(Options{Scope: ScopeUser, Home: h, Command: "/opt/bin/ctxfold"}, dir)
	cs := applyPlan(t, Copilot, o)
	if len(cs) != 2 || cs[0].Action != "create" || cs[1].Action != "update" {
		t.Fatalf("changes %+v", cs)
	}
	m := decode(t, hooks)
	for _, ev := range []string{"PreCompact", "UserPromptSubmit"} {
		b, _ := json.Marshal(m["hooks"].(map[string]any)[ev])
		if string(b) != `[{"hooks":[{"command":"/opt/bin/ctxfold hook --client Copilot --by-setup","timeout":60,"type":"command"}]}]` {
			t.Fatalf("hook %s: %s", ev, b)
		}
	}
	srv := decode(t, mcp)["mcpServers"].(map[string]any)
	ours, _ := json.Marshal(srv["ctxfold"])
	if srv["github"] == nil || string(ours) != `{"args":["mcp"],"command":"/opt/bin/ctxfold","env":{"COPILOT_HOME":"`+dir+`","CTXFOLD_CLIENT":"copilot","CTXFOLD_SESSION_VAR":"COPILOT_AGENT_SESSION_ID"},"tools":["*"],"type":"local"}` {
		t.Fatalf("mcpServers %s", ours)
	}
	if b, _ := os.ReadFile(mcp + BackupSuffix); string(b) != copilotMCPConfig {
		t.Fatal("no backup of the original bytes")
	}
	if _, err := os.Stat(filepath.Join(h, ".copilot")); err == nil {
		t.Fatal("wrote under ~/.copilot although COPILOT_HOME names another folder")
	}
	installed, _ := os.ReadFile(mcp)
	for _, c := range applyPlan(t, Copilot, o) {
		if c.Action != "unchanged" {
			t.Fatalf("second run: %s %s", c.Action, c.Path)
		}
	}
	if b, _ := os.ReadFile(mcp); string(b) != string(installed) {
		t.Fatal("second run changed the bytes")
	}
	o.Uninstall = true
	applyPlan(t, Copilot, o)
	if b, _ := os.ReadFile(mcp); string(b) != copilotMCPConfig {
		t.Fatalf("uninstall did not restore the original bytes:\n%s", b)
	}
	if _, err := os.Lstat(hooks); !os.IsNotExist(err) {
		t.Fatalf("uninstall left the hooks file setup created: %v", err)
	}
}

// A hook of the user's own in ctxfold's hooks file, and a server named
// ctxfold that is not setup's, are kept.
func TestCopilotKeepsTheUsersEntries(t *testing.T) {
	h := t.TempDir()
	o := Options{Scope: ScopeUser, Home: h, Command: "/opt/bin/ctxfold"}
	hooks, mcp := copilotPaths(o)
	_ = os.MkdirAll(filepath.Dir(hooks), 0o755)
	own := `{"version": 1, "hooks": {"PreCompact": [{"type": "command", "bash": "./save.sh", "timeoutSec": 5}]}}` + "\n"
	_ = os.WriteFile(hooks, []byte(own), 0o644)
	_ = os.WriteFile(mcp, []byte(`{"mcpServers": {"ctxfold": {"type": "local", "command": "other", "args": ["serve"]}}}`+"\n"), 0o644)
	cs := applyPlan(t, Copilot, o)
	if !slices.Contains(cs[1].Did, "kept your own MCP server named ctxfold (ctxfold's not installed)") {
		t.Fatalf("did %v", cs[1].Did)
	}
	b, _ := os.ReadFile(hooks)
	if !strings.Contains(string(b), `"bash": "./save.sh"`) || !strings.Contains(string(b), "hook --client Copilot --by-setup") {
		t.Fatalf("hooks:\n%s", b)
	}
	o.Uninstall = true
	applyPlan(t, Copilot, o)
	if b, _ := os.ReadFile(hooks); string(b) != own {
		t.Fatalf("uninstall did not give back the user's hooks file:\n%s", b)
	}
}

func TestCopilotRefusesProjectScopeAndDryRunWritesNothing(t *testing.T) {
	h := t.TempDir()
	if _, err := Copilot(Options{Scope: ScopeProject, Home: h, Project: h}); err == nil {
		t.Fatal("--project accepted")
	}
	cs, err := Run(context.Background(), ClientCopilot, Options{Scope: ScopeUser, Home: h, Command: "ctxfold"}, true)
	if err != nil || len(cs) != 2 || cs[0].After == nil {
		t.Fatalf("dry run: %+v, %v", cs, err)
	}
	if _, err := os.Stat(filepath.Join(h, ".copilot")); !os.IsNotExist(err) {
		t.Fatalf("the dry run wrote: %v", err)
	}
}

func TestInspectFindsCopilot(t *testing.T) {
	h := t.TempDir()
	o := Options{Scope: ScopeUser, Home: h, Command: "/opt/my tools/ctxfold"}
	if _, err := Run(context.Background(), ClientCopilot, o, false); err != nil {
		t.Fatal(err)
	}
	in, err := Inspect(ClientCopilot, o)
	if err != nil || len(in.Missing) != 0 || len(in.Entries) != 3 {
		t.Fatalf("%+v, %v", in, err)
	}
	for _, e := range in.Entries {
		if e.Argv[0] != "/opt/my tools/ctxfold" {
			t.Errorf("%s %s: argv %q", e.Kind, e.Event, e.Argv)
		}
	}
	hooks, _ := copilotPaths(o)
	b, _ := os.ReadFile(hooks)
	_ = os.WriteFile(hooks, []byte(strings.Replace(string(b), `"PreCompact"`, `"preCompactX"`, 1)), 0o600)
	if in, err = Inspect(ClientCopilot, o); err != nil || !slices.Equal(in.Missing, []string{"hook PreCompact"}) {
		t.Fatalf("after removing PreCompact: %+v, %v", in, err)
	}
}

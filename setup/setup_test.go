package setup

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// A user's settings as Claude Code writes them, with keys, hooks and a
// status line of their own, and a ~/.claude.json with another MCP server.
const userSettings = `{
  "model": "opus",
  "permissions": {
    "allow": [
      "Bash(git status)"
    ]
  },
  "hooks": {
    "PreCompact": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "~/bin/notify-compact.sh"
          }
        ]
      }
    ],
    "Stop": [
      {
        "matcher": "",
        "hooks": [
          {
            "type": "command",
            "command": "say done"
          }
        ]
      }
    ]
  },
  "zeta": "<&>"
}
`

const userClaudeJSON = `{"numStartups":7,"mcpServers":{"github":{"type":"stdio","command":"gh-mcp","args":[]}},"projects":{}}`

func home(t *testing.T) string {
	t.Helper()
	h := t.TempDir()
	_ = os.MkdirAll(filepath.Join(h, ".claude"), 0o755)
	if err := os.WriteFile(filepath.Join(h, ".claude", "settings.json"), []byte(userSettings), 0o644); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(h, ".claude.json"), []byte(userClaudeJSON), 0o600)
	return h
}

func apply(t *testing.T, o Options) []*Change {
	t.Helper()
	return applyPlan(t, ClaudeCode, o)
}

// applyPlan plans o's changes with plan (ClaudeCode, Codex, Gemini) and
// applies them, failing t on either error.
func applyPlan(t *testing.T, plan func(Options) ([]*Change, error), o Options) []*Change {
	t.Helper()
	cs, err := plan(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(cs); err != nil {
		t.Fatal(err)
	}
	return cs
}

func decode(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

func TestClaudeCodeInstallIdempotentUninstall(t *testing.T) {
	h := home(t)
	o := Options{Scope: ScopeUser, Home: h, Command: "/opt/bin/ctxfold"}
	settings, cj := filepath.Join(h, ".claude", "settings.json"), filepath.Join(h, ".claude.json")
	apply(t, o)
	m := decode(t, settings)
	if m["model"] != "opus" || m["zeta"] != "<&>" || m["permissions"] == nil {
		t.Fatalf("other keys changed: %v", m)
	}
	hooks := m["hooks"].(map[string]any)
	pre, _ := json.Marshal(hooks["PreCompact"])
	if !strings.Contains(string(pre), "notify-compact.sh") || !strings.Contains(string(pre), "/opt/bin/ctxfold hook") {
		t.Fatalf("PreCompact: %s", pre)
	}
	ss, _ := json.Marshal(hooks["SessionStart"])
	if !strings.Contains(string(ss), `"matcher":"compact"`) {
		t.Fatalf("SessionStart: %s", ss)
	}
	if _, ok := hooks["Stop"]; !ok {
		t.Fatal("the user's Stop hook is gone")
	}
	if sl := m["statusLine"].(map[string]any); sl["command"] != "/opt/bin/ctxfold statusline --by-setup" {
		t.Fatalf("statusLine %v", sl)
	}
	srv := decode(t, cj)["mcpServers"].(map[string]any)
	if srv["github"] == nil || srv["ctxfold"].(map[string]any)["command"] != "/opt/bin/ctxfold" {
		t.Fatalf("mcpServers %v", srv)
	}
	b, _ := os.ReadFile(settings + BackupSuffix)
	if string(b) != userSettings {
		t.Fatal("no backup of the original bytes")
	}
	// Key order is kept: the user's keys first, in their order.
	after, _ := os.ReadFile(settings)
	if i, j := bytes.Index(after, []byte(`"model"`)), bytes.Index(after, []byte(`"zeta"`)); i < 0 || j < i {
		t.Fatalf("key order changed:\n%s", after)
	}
	// A second run changes nothing, byte for byte.
	before := map[string][]byte{}
	for _, p := range []string{settings, cj} {
		before[p], _ = os.ReadFile(p)
	}
	for _, c := range apply(t, o) {
		if c.Action != "unchanged" {
			t.Fatalf("second run: %s %s %v", c.Path, c.Action, c.Did)
		}
	}
	for p, b := range before {
		if now, _ := os.ReadFile(p); !bytes.Equal(now, b) {
			t.Fatalf("%s changed on the second run", p)
		}
	}
	// Uninstall gives back the original bytes.
	o.Uninstall = true
	apply(t, o)
	if now, _ := os.ReadFile(settings); string(now) != userSettings {
		t.Fatalf("uninstall did not restore settings.json:\n%s", now)
	}
	if now, _ := os.ReadFile(cj); string(now) != userClaudeJSON {
		t.Fatalf("uninstall did not restore .claude.json:\n%s", now)
	}
}

// When the client changed the file since the install (Claude Code rewrites
// ~/.claude.json all the time), uninstall removes only ctxfold's entries
// and keeps the client's change.
func TestUninstallKeepsLaterChanges(t *testing.T) {
	h := home(t)
	o := Options{Scope: ScopeUser, Home: h, Command: "ctxfold"}
	apply(t, o)
	cj := filepath.Join(h, ".claude.json")
	m := decode(t, cj)
	m["numStartups"] = 8
	b, _ := json.MarshalIndent(m, "", "  ")
	_ = os.WriteFile(cj, b, 0o600)
	o.Uninstall = true
	apply(t, o)
	got := decode(t, cj)
	if got["numStartups"].(float64) != 8 || got["mcpServers"].(map[string]any)["ctxfold"] != nil || got["mcpServers"].(map[string]any)["github"] == nil {
		t.Fatalf("after uninstall: %v", got)
	}
}

func TestUnparseableAndLinkedFilesUntouched(t *testing.T) {
	h := home(t)
	settings := filepath.Join(h, ".claude", "settings.json")
	bad := "{\n  \"model\": \"opus\",\n  oops\n}\n"
	_ = os.WriteFile(settings, []byte(bad), 0o644)
	_, err := ClaudeCode(Options{Scope: ScopeUser, Home: h})
	var fe *FileError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("want a FileError naming line 3, got %v", err)
	}
	if b, _ := os.ReadFile(settings); string(b) != bad {
		t.Fatal("the unparseable file changed")
	}
	if _, err := os.Stat(settings + BackupSuffix); err == nil {
		t.Fatal("a backup was written for a refused file")
	}
	real := filepath.Join(h, "dotfiles.json")
	_ = os.WriteFile(real, []byte(userSettings), 0o644)
	_ = os.Remove(settings)
	_ = os.Symlink(real, settings)
	if _, err := ClaudeCode(Options{Scope: ScopeUser, Home: h}); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("a linked settings file was accepted: %v", err)
	}
	if b, _ := os.ReadFile(real); string(b) != userSettings {
		t.Fatal("the link's target changed")
	}
}

func TestProjectScopeAndOwnStatusLine(t *testing.T) {
	p := t.TempDir()
	_ = os.MkdirAll(filepath.Join(p, ".claude"), 0o755)
	own := `{"statusLine":{"type":"command","command":"my-status"}}`
	_ = os.WriteFile(filepath.Join(p, ".claude", "settings.json"), []byte(own), 0o644)
	cs := apply(t, Options{Scope: ScopeProject, Project: p})
	m := decode(t, filepath.Join(p, ".claude", "settings.json"))
	if m["statusLine"].(map[string]any)["command"] != "my-status" {
		t.Fatal("the user's own status line was replaced")
	}
	if l := m["enabledMcpjsonServers"].([]any); len(l) != 1 || l[0] != "ctxfold" {
		t.Fatalf("enabledMcpjsonServers %v", l)
	}
	if decode(t, filepath.Join(p, ".mcp.json"))["mcpServers"].(map[string]any)["ctxfold"] == nil {
		t.Fatal("no server in .mcp.json")
	}
	if cs[1].Action != "create" {
		t.Fatalf(".mcp.json action %q", cs[1].Action)
	}
	apply(t, Options{Scope: ScopeProject, Project: p, Uninstall: true})
	if b, _ := os.ReadFile(filepath.Join(p, ".claude", "settings.json")); string(b) != own {
		t.Fatalf("uninstall: %s", b)
	}
	if _, err := os.Stat(filepath.Join(p, ".mcp.json")); err == nil {
		t.Fatal("uninstall left the .mcp.json setup created")
	}
}

func TestCodexInstallIdempotentUninstall(t *testing.T) {
	codexHome := filepath.Join(t.TempDir(), ".codex")
	_ = os.MkdirAll(codexHome, 0o755)
	cfg := "model = \"gpt-5.5\"\n\n[mcp_servers.github]\ncommand = \"gh-mcp\"" // no final newline
	hooksJSON := `{"hooks":{"PreCompact":[{"hooks":[{"type":"command","command":"notify"}]}]}}`
	_ = os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(cfg), 0o600)
	_ = os.WriteFile(filepath.Join(codexHome, "hooks.json"), []byte(hooksJSON), 0o600)
	o := Options{Scope: ScopeUser, Command: "/opt/ctxfold"}
	run := func(o Options) []*Change {
		t.Helper()
		return applyPlan(t, func(o Options) ([]*Change, error) { return Codex(codexAt(o, codexHome)) }, o)
	}
	run(o)
	got, _ := os.ReadFile(filepath.Join(codexHome, "config.toml"))
	var doc struct {
		MCPServers map[string]struct {
			Command string            `toml:"command"`
			Env     map[string]string `toml:"env"`
		} `toml:"mcp_servers"`
	}
	if err := toml.Unmarshal(got, &doc); err != nil {
		t.Fatal(err)
	}
	// Codex passes the server no CODEX_HOME: the block names it.
	if s := doc.MCPServers["ctxfold"]; s.Command != "/opt/ctxfold" || s.Env["CODEX_HOME"] != codexHome || s.Env["CTXFOLD_CLIENT"] != "codex" || doc.MCPServers["github"].Command != "gh-mcp" {
		t.Fatalf("mcp_servers: %+v", doc.MCPServers)
	}
	if !strings.HasPrefix(string(got), cfg+"\n") {
		t.Fatalf("config.toml:\n%s", got)
	}
	h := decode(t, filepath.Join(codexHome, "hooks.json"))["hooks"].(map[string]any)
	pre, _ := json.Marshal(h["PreCompact"])
	if !strings.Contains(string(pre), "notify") || !strings.Contains(string(pre), "/opt/ctxfold hook --client Codex") || h["SessionStart"] == nil {
		t.Fatalf("hooks.json: %v", h)
	}
	for _, c := range run(o) {
		if c.Action != "unchanged" {
			t.Fatalf("second run changed %s", c.Path)
		}
	}
	o.Uninstall = true
	run(o)
	if b, _ := os.ReadFile(filepath.Join(codexHome, "config.toml")); string(b) != cfg {
		t.Fatalf("config.toml after uninstall:\n%q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(codexHome, "hooks.json")); string(b) != hooksJSON {
		t.Fatalf("hooks.json after uninstall:\n%s", b)
	}
	o.Uninstall = false
	// A block an older setup wrote (another command, no CODEX_HOME) is
	// brought up to date in place; the user's bytes around it stay.
	old := strings.Replace(string(got), `command = "/opt/ctxfold"`, `command = "/usr/bin/ctxfold"`, 1)
	old = strings.Replace(old, `, CODEX_HOME = `+strconv.Quote(codexHome), "", 1)
	_ = os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(old+"# the user's own line\n"), 0o600)
	run(o)
	if b, _ := os.ReadFile(filepath.Join(codexHome, "config.toml")); string(b) != string(got)+"# the user's own line\n" {
		t.Fatalf("the old block was not brought up to date:\n%s", b)
	}
	_ = os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte("model = \n"), 0o600)
	if _, err := Codex(codexAt(Options{Scope: ScopeUser}, codexHome)); err == nil || !strings.Contains(err.Error(), "not valid TOML") {
		t.Fatalf("bad TOML accepted: %v", err)
	}
}

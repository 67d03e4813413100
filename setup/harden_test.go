package setup

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Issue 45 #10: a "hooks" or "mcpServers" that is not an object, or an
// event's value that is not an array, is refused: the file keeps its
// bytes, no backup is written, install and uninstall alike.
func TestNonObjectContainersRefused(t *testing.T) {
	claude := map[string]string{
		"hooks array":        `{"hooks":[{"mine":1}]}`,
		"hooks string":       `{"hooks":"my hooks"}`,
		"hooks null":         `{"hooks":null}`,
		"event not an array": `{"hooks":{"PreCompact":{"hooks":[{"type":"command","command":"notify"}]}}}`,
		"event a string":     `{"hooks":{"UserPromptSubmit":"echo hi"}}`,
		"event null":         `{"hooks":{"SessionStart":null}}`,
	}
	servers := map[string]string{
		"servers array":  `{"mcpServers":[{"name":"github"}]}`,
		"servers string": `{"mcpServers":"github"}`,
		"servers null":   `{"mcpServers":null}`,
	}
	check := func(t *testing.T, path, orig string, plan func(Options) ([]*Change, error), o Options) {
		t.Helper()
		for _, uninstall := range []bool{false, true} {
			o.Uninstall = uninstall
			_, err := plan(o)
			var fe *FileError
			if !errors.As(err, &fe) || fe.Path != path || !strings.Contains(err.Error(), "left untouched") {
				t.Fatalf("uninstall %v: want a FileError for %s, got %v", uninstall, path, err)
			}
			if b, _ := os.ReadFile(path); string(b) != orig {
				t.Fatalf("the file changed: %s", b)
			}
			if _, err := os.Stat(path + BackupSuffix); err == nil {
				t.Fatal("a backup was written for a refused file")
			}
		}
	}
	for name, doc := range claude {
		t.Run("claude "+name, func(t *testing.T) {
			h := t.TempDir()
			p := filepath.Join(h, ".claude", "settings.json")
			_ = os.MkdirAll(filepath.Dir(p), 0o755)
			_ = os.WriteFile(p, []byte(doc), 0o644)
			check(t, p, doc, ClaudeCode, Options{Scope: ScopeUser, Home: h})
		})
	}
	for name, doc := range servers {
		t.Run("claude "+name, func(t *testing.T) {
			h := t.TempDir()
			p := filepath.Join(h, ".claude.json")
			_ = os.WriteFile(p, []byte(doc), 0o644)
			check(t, p, doc, ClaudeCode, Options{Scope: ScopeUser, Home: h})
		})
		t.Run("gemini "+name, func(t *testing.T) {
			h := t.TempDir()
			p := filepath.Join(h, ".gemini", "settings.json")
			_ = os.MkdirAll(filepath.Dir(p), 0o755)
			_ = os.WriteFile(p, []byte(doc), 0o644)
			check(t, p, doc, Gemini, Options{Scope: ScopeUser, Home: h})
		})
	}
}

// Issue 45 #10: a backup that holds something else (the original an
// earlier install backed up) is never overwritten: uninstall after the
// client changed the file keeps the original's backup and writes its own
// beside it.
func TestBackupNeverOverwritten(t *testing.T) {
	h := home(t)
	o := Options{Scope: ScopeUser, Home: h, Command: "ctxfold"}
	apply(t, o)
	settings := filepath.Join(h, ".claude", "settings.json")
	m := decode(t, settings)
	m["model"] = "sonnet" // the user's change after the install
	b, _ := json.MarshalIndent(m, "", "  ")
	_ = os.WriteFile(settings, b, 0o644)
	o.Uninstall = true
	cs := apply(t, o)
	if got, _ := os.ReadFile(settings + BackupSuffix); string(got) != userSettings {
		t.Fatalf("the original's backup was overwritten:\n%s", got)
	}
	if cs[0].Backup != settings+BackupSuffix+".1" {
		t.Fatalf("backup %q", cs[0].Backup)
	}
	if got, _ := os.ReadFile(cs[0].Backup); !bytes.Equal(got, b) {
		t.Fatal("the second backup does not hold the file uninstall replaced")
	}
}

// Issue 45 #11: a file created between the plan and the write is not
// overwritten.
func TestFileCreatedMeanwhileNotOverwritten(t *testing.T) {
	h := t.TempDir()
	cs, err := ClaudeCode(Options{Scope: ScopeUser, Home: h})
	if err != nil || cs[0].Action != "create" {
		t.Fatalf("%v %+v", err, cs)
	}
	settings := filepath.Join(h, ".claude", "settings.json")
	_ = os.MkdirAll(filepath.Dir(settings), 0o755)
	theirs := `{"written":"by another program"}`
	_ = os.WriteFile(settings, []byte(theirs), 0o644)
	if err := Apply(cs); err == nil || !strings.Contains(err.Error(), "created by another program") {
		t.Fatalf("want an error, got %v", err)
	}
	if b, _ := os.ReadFile(settings); string(b) != theirs {
		t.Fatalf("overwritten: %s", b)
	}
}

// Issue 45 #11: an install and an uninstall at once leave the files all
// installed or all uninstalled, never half (11 of 100 rounds without the
// lock). CTXFOLD_LONG=1 runs the 100 rounds.
func TestConcurrentInstallUninstallNeverHalf(t *testing.T) {
	rounds := 10
	if os.Getenv("CTXFOLD_LONG") == "1" {
		rounds = 100
	}
	half := 0
	for range rounds {
		h := home(t)
		settings, cj := filepath.Join(h, ".claude", "settings.json"), filepath.Join(h, ".claude.json")
		o := Options{Scope: ScopeUser, Home: h, Command: "ctxfold"}
		if _, err := Run(context.Background(), ClientClaudeCode, o, false); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, un := range []bool{true, false, true} {
			wg.Go(func() {
				<-start
				o := o
				o.Uninstall = un
				if _, err := Run(context.Background(), ClientClaudeCode, o, false); err != nil {
					t.Error(err)
				}
			})
		}
		close(start)
		wg.Wait()
		a, _ := os.ReadFile(settings)
		b, _ := os.ReadFile(cj)
		hasHooks, hasServer := bytes.Contains(a, []byte(Marker)), bytes.Contains(b, []byte(`"ctxfold"`))
		if hasHooks != hasServer {
			half++
		}
	}
	t.Logf("%d rounds of an install and two uninstalls at once: %d half-installed", rounds, half)
	if half > 0 {
		t.Fatalf("%d of %d rounds left a half-installed state", half, rounds)
	}
}

// Issue 45 #12: a command with a space or an apostrophe is quoted for the
// client's shell, found again (three runs add each hook once) and taken
// out by uninstall.
func TestCommandQuoted(t *testing.T) {
	for _, bin := range []string{"/opt/my tools/ctxfold", "/home/o'brien/bin/ctxfold", `C:\Program Files\ctxfold.exe`} {
		h := home(t)
		o := Options{Scope: ScopeUser, Home: h, Command: bin}
		for range 3 {
			apply(t, o)
		}
		settings := filepath.Join(h, ".claude", "settings.json")
		hooks := decode(t, settings)["hooks"].(map[string]any)
		n := 0
		for _, groups := range hooks {
			for _, g := range groups.([]any) {
				for _, c := range g.(map[string]any)["hooks"].([]any) {
					cmd := c.(map[string]any)["command"].(string)
					if w := shellWords(cmd); len(w) >= 2 && w[0] == bin && w[1] == "hook" {
						n++
					}
				}
			}
		}
		if n != len(claudeHooks) {
			t.Fatalf("%s: %d hook entries that run it, want %d", bin, n, len(claudeHooks))
		}
		o.Uninstall = true
		apply(t, o)
		if b, _ := os.ReadFile(settings); string(b) != userSettings {
			t.Fatalf("%s: uninstall left:\n%s", bin, b)
		}
	}
}

// Issue 45 #13: a config.toml with an array of tables ([[…]]) is merged.
func TestCodexArrayOfTables(t *testing.T) {
	codexHome := t.TempDir()
	cfg := "model = \"gpt-5.5\"\n\n[[profiles]]\nname = \"a\"\n\n[[profiles]]\nname = \"b\"\n"
	_ = os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(cfg), 0o600)
	plan := func(o Options) ([]*Change, error) { return Codex(codexAt(o, codexHome)) }
	applyPlan(t, plan, Options{Scope: ScopeUser, Command: "ctxfold"})
	if b, _ := os.ReadFile(filepath.Join(codexHome, "config.toml")); !bytes.HasPrefix(b, []byte(cfg)) || !bytes.Contains(b, []byte("[mcp_servers.ctxfold]")) {
		t.Fatalf("config.toml:\n%s", b)
	}
	applyPlan(t, plan, Options{Scope: ScopeUser, Command: "ctxfold", Uninstall: true})
	if b, _ := os.ReadFile(filepath.Join(codexHome, "config.toml")); string(b) != cfg {
		t.Fatalf("after uninstall:\n%s", b)
	}
}

// Issue 45 #14: a read-only file is refused, not replaced; an empty file
// stays empty on uninstall; a Codex block whose end marker is gone is an
// error, not "unchanged".
func TestReadOnlyEmptyAndBrokenBlock(t *testing.T) {
	h := home(t)
	settings := filepath.Join(h, ".claude", "settings.json")
	_ = os.Chmod(settings, 0o444)
	if _, err := ClaudeCode(Options{Scope: ScopeUser, Home: h}); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("a read-only file: %v", err)
	}
	_ = os.Chmod(settings, 0o644)
	_ = os.WriteFile(settings, nil, 0o644)
	cs := apply(t, Options{Scope: ScopeUser, Home: h, Uninstall: true})
	if b, _ := os.ReadFile(settings); len(b) != 0 || cs[0].Action != "unchanged" {
		t.Fatalf("uninstall on an empty file: %s %q", cs[0].Action, b)
	}
	codexHome := t.TempDir()
	cfg := "model = \"x\"\n" + codexBlockStart + "[mcp_servers.ctxfold]\ncommand = \"ctxfold\"\nargs = [\"mcp\"]\n"
	_ = os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(cfg), 0o600)
	for _, un := range []bool{false, true} {
		if _, err := Codex(codexAt(Options{Scope: ScopeUser, Uninstall: un}, codexHome)); err == nil || !strings.Contains(err.Error(), "not its end") {
			t.Fatalf("uninstall %v: a block without its end marker: %v", un, err)
		}
	}
}

// Issue 44 #10: uninstall finds what setup wrote by its marker, whatever
// --command installed it, and reports what it keeps that looks like
// ctxfold's.
func TestUninstallWithoutTheInstallCommand(t *testing.T) {
	h := home(t)
	apply(t, Options{Scope: ScopeUser, Home: h, Command: "/opt/elsewhere/cf"})
	settings := filepath.Join(h, ".claude", "settings.json")
	m := decode(t, settings)
	pre := m["hooks"].(map[string]any)["PreCompact"].([]any)
	pre = append(pre, map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "/usr/local/bin/other hook"}}})
	m["hooks"].(map[string]any)["PreCompact"] = pre
	b, _ := json.MarshalIndent(m, "", "  ")
	_ = os.WriteFile(settings, b, 0o644)
	cs := apply(t, Options{Scope: ScopeUser, Home: h, Command: "/usr/bin/ctxfold", Uninstall: true})
	got, _ := os.ReadFile(settings)
	if bytes.Contains(got, []byte(Marker)) || bytes.Contains(got, []byte("/opt/elsewhere/cf")) {
		t.Fatalf("entries left:\n%s", got)
	}
	if cj := decode(t, filepath.Join(h, ".claude.json")); cj["mcpServers"].(map[string]any)["ctxfold"] != nil {
		t.Fatal("the MCP server is left")
	}
	did := strings.Join(cs[0].Did, "; ")
	if !strings.Contains(did, `kept the PreCompact hook "/usr/local/bin/other hook"`) || !strings.Contains(did, "removed the PreCompact hook") {
		t.Fatalf("did: %s", did)
	}
}

// Issue 44 #12 (docs/HOOKS.md, "Merge"): values setup does not change
// keep their bytes — a one-line statusLine object, a hand-formatted hook
// group beside ctxfold's — on install and on uninstall.
func TestValuesKeptByteForByte(t *testing.T) {
	h := t.TempDir()
	settings := filepath.Join(h, ".claude", "settings.json")
	_ = os.MkdirAll(filepath.Dir(settings), 0o755)
	statusLine := `{"type": "command", "command": "my-status --fast"}`
	group := `{ "hooks": [ { "type": "command", "command": "notify" } ] }`
	doc := fmt.Sprintf("{\n  \"statusLine\": %s,\n  \"hooks\": {\n    \"PreCompact\": [ %s ]\n  },\n  \"env\": {\"A\":\"1\"}\n}\n", statusLine, group)
	_ = os.WriteFile(settings, []byte(doc), 0o644)
	apply(t, Options{Scope: ScopeUser, Home: h, Command: "ctxfold"})
	got, _ := os.ReadFile(settings)
	for _, want := range []string{`"statusLine": ` + statusLine, group, `"env": {"A":"1"}`} {
		if !bytes.Contains(got, []byte(want)) {
			t.Fatalf("install changed %s:\n%s", want, got)
		}
	}
	// The client changes the file: uninstall cannot restore the backup,
	// and still keeps the user's values as they were.
	got = bytes.Replace(got, []byte(`"env": {"A":"1"}`), []byte(`"env": {"A":"2"}`), 1)
	_ = os.WriteFile(settings, got, 0o644)
	apply(t, Options{Scope: ScopeUser, Home: h, Uninstall: true})
	got, _ = os.ReadFile(settings)
	for _, want := range []string{`"statusLine": ` + statusLine, group, `"env": {"A":"2"}`} {
		if !bytes.Contains(got, []byte(want)) {
			t.Fatalf("uninstall changed %s:\n%s", want, got)
		}
	}
	if bytes.Contains(got, []byte("ctxfold")) {
		t.Fatalf("uninstall left ctxfold's entries:\n%s", got)
	}
}

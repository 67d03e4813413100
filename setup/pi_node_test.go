package setup

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The pi extension (setup pi) never breaks pi (issue 42): whatever the
// ctxfold it runs does — print something that is not its JSON, fail, or
// hang past the extension's bound — each handler returns normally, adds
// nothing, and a hung ctxfold is given up at the bound. It runs the real
// extension file under Node 24 (TypeScript as written) with pi's own
// typebox; without the pinned pi and Node 24 in the interop cache
// (.ci/run installs them) it skips.
func TestPiExtensionNeverBreaksPi(t *testing.T) {
	home, _ := os.UserHomeDir()
	cache := os.Getenv("CTXFOLD_INTEROP_CACHE")
	if cache == "" {
		cache = filepath.Join(home, ".cache", "ctxfold-interop")
	}
	piModules := filepath.Join(cache, "pi-0.73.1", "node_modules")
	node := filepath.Join(home, ".cache", "ctxfold-node24", "node_modules", "node", "bin", "node")
	if _, err := os.Stat(filepath.Join(piModules, "typebox")); err != nil {
		t.Skip("no pi 0.73.1 in the interop cache (.ci/run installs it)")
	}
	if _, err := os.Stat(node); err != nil {
		t.Skip("no Node 24 under ~/.cache/ctxfold-node24 (.ci/run installs it)")
	}
	dir := t.TempDir()
	if err := os.Symlink(piModules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	driver := `
const m = await import(process.argv[2]);
const handlers = {};
m.default({ on: (ev, fn) => { handlers[ev] = fn; }, registerTool: () => {} });
const ctx = { cwd: process.argv[3], sessionManager: { getSessionFile: () => process.argv[3] + "/s.jsonl" } };
const event = { preparation: { messagesToSummarize: [] } };
const start = Date.now();
const compact = await handlers["session_before_compact"](event, ctx);
await handlers["session_compact"]({}, ctx);
const agent = await handlers["before_agent_start"]({}, ctx);
console.log(JSON.stringify({ added: event.preparation.messagesToSummarize.length, compact: compact ?? null, agent: agent ?? null, ms: Date.now() - start }));
`
	if err := os.WriteFile(filepath.Join(dir, "driver.mjs"), []byte(driver), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, script := range map[string]string{
		"garbage": "cat >/dev/null; echo 'not the hook JSON {'",
		"fails":   "cat >/dev/null; echo '{\"hookSpecificOutput\":' ; exit 3",
		"hangs":   "exec sleep 30",
		"missing": "",
	} {
		t.Run(name, func(t *testing.T) {
			bin := filepath.Join(dir, name+"-ctxfold")
			if script != "" {
				if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			// The extension as setup writes it, its 55 s bound cut to
			// 300 ms so that a hang is given up within the test.
			ext := strings.Replace(string(piExtension(bin, false)), "const TIMEOUT_MS = 55000;", "const TIMEOUT_MS = 300;", 1)
			if ext == string(piExtension(bin, false)) {
				t.Fatal("the extension's bound moved: update this test")
			}
			file := filepath.Join(dir, name+".ts")
			if err := os.WriteFile(file, []byte(ext), 0o644); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			out, err := exec.Command(node, filepath.Join(dir, "driver.mjs"), file, dir).Output()
			if err != nil {
				t.Fatalf("node: %v\n%s", err, out)
			}
			var got struct {
				Added   int             `json:"added"`
				Compact json.RawMessage `json:"compact"`
				Agent   json.RawMessage `json:"agent"`
				MS      int             `json:"ms"`
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if got.Added != 0 || string(got.Compact) != "null" || string(got.Agent) != "null" {
				t.Errorf("a ctxfold that %s changed pi's request: %s", name, out)
			}
			// Three runs, each bounded at 300 ms (plus Node's start).
			if got.MS > 5000 || time.Since(start) > 20*time.Second {
				t.Errorf("a ctxfold that %s held pi for %d ms", name, got.MS)
			}
		})
	}
}

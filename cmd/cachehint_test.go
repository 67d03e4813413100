package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 29 item 2: every command that writes refuses a cache session
// (exit 6, nothing written, the hint names the file to import), and no
// hint points into the cache: audit's "compact it first" on a transcript
// file says to import the file.
func TestWritingCommandsRefuseACacheSession(t *testing.T) {
	src := claudeInteropTranscripts(t)["chat"] // never compacted
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "x.jsonl")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	env := cliEnv{Env: map[string]string{"XDG_CACHE_HOME": cache}}
	before := runEnv(t, env, "estimate", file, "--json")
	if before.Code != 0 {
		t.Fatalf("estimate FILE: %+v", before)
	}
	session := jsonField(t, before.Stdout, "session")

	// audit on the file: the hint imports the file, it never names the cache.
	r := runEnv(t, env, "audit", file)
	if r.Code != ExitUsage || strings.Contains(r.Stderr, cache) ||
		!strings.Contains(r.Stderr, "'ctxfold import "+file+" -o DIR', then 'ctxfold compact DIR'") {
		t.Errorf("audit FILE: exit %d, stderr %q: want the hint to import %s, never the cache", r.Code, r.Stderr, file)
	}

	// A hint that suggests compacting without a path: the file's import.
	r = runEnv(t, env, "render", file, "--fit", "--window", "1000")
	if r.Code != ExitDoesNotFit || !strings.Contains(r.Stderr, "'ctxfold import "+file+" -o DIR', then 'ctxfold compact DIR'") {
		t.Errorf("render FILE --fit: exit %d, stderr %q: want the hint to import %s first", r.Code, r.Stderr, file)
	}

	snap := dirSnapshot(t, session)
	batch := filepath.Join(t.TempDir(), "batch.jsonl")
	os.WriteFile(batch, []byte(`{"messages":[{"role":"user","content":"x"}]}`), 0o644)
	for _, args := range [][]string{
		{"compact", session, "--keep-tokens", "10"},
		{"checkout", session, "zz"},
		{"pin", session, "zz"},
		{"unpin", session, "zz"},
		{"append", session, "--role", "user", "--content", "x"},
		{"repair", session},
		{"repair", "--unlock", session},
		{"import", file, "-o", session, "--append"},
		{"import", batch, "--from", "openai", "-o", session, "--append"},
	} {
		r := runEnv(t, env, args...)
		if r.Code != ExitCacheSession || !strings.Contains(r.Stderr, "cache session") ||
			!strings.Contains(r.Stderr, "ctxfold import "+file+" -o DIR") {
			t.Errorf("%v: exit %d, stderr %q: want exit %d, a refusal naming the file to import", args, r.Code, r.Stderr, ExitCacheSession)
		}
		if got := dirSnapshot(t, session); got != snap {
			t.Errorf("%v: the cache session changed", args)
			snap = got
		}
	}
	// The cache still answers for the file as a fresh import does.
	after := runEnv(t, env, "estimate", file, "--json")
	if jsonField(t, after.Stdout, "total") != jsonField(t, before.Stdout, "total") {
		t.Errorf("estimate after the refused writes: %s, before %s", after.Stdout, before.Stdout)
	}
}

// dirSnapshot is every file under dir with its bytes, as one string.
func dirSnapshot(t *testing.T, dir string) string {
	t.Helper()
	var sb strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		sb.WriteString(p + "\x00" + string(b) + "\x00")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return sb.String()
}

// jsonField is one top-level field of a JSON object, as JSON text.
func jsonField(t *testing.T, obj, key string) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(obj), &m); err != nil {
		t.Fatalf("not a JSON object: %v %q", err, obj)
	}
	var s string
	if json.Unmarshal(m[key], &s) == nil {
		return s
	}
	return string(m[key])
}

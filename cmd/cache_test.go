package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ctxfold cache lists the entries with file, size and last use; prune
// evicts down to cache-max-bytes (environment or config file), --all
// everything; a bad size is a usage error naming where it came from.
func TestCacheCommand(t *testing.T) {
	src, err := os.ReadFile(importFixtures + "claude-code/sess-0001.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	files := t.TempDir()
	env := cliEnv{Env: map[string]string{"XDG_CACHE_HOME": t.TempDir()}}
	for _, n := range []string{"a.jsonl", "b.jsonl"} {
		p := filepath.Join(files, n)
		if err := os.WriteFile(p, src, 0o644); err != nil {
			t.Fatal(err)
		}
		if r := runEnv(t, env, "estimate", p); r.Code != 0 {
			t.Fatalf("estimate %s: %d %s", n, r.Code, r.Stderr)
		}
	}
	var list struct {
		MaxBytes int64 `json:"max_bytes"`
		Bytes    int64
		Entries  []struct {
			File    string
			Bytes   int64
			LastUse string `json:"last_use"`
		}
	}
	r := runEnv(t, env, "cache", "--json")
	if err := json.Unmarshal([]byte(r.Stdout), &list); err != nil || r.Code != 0 {
		t.Fatalf("cache --json: %d %v %s", r.Code, err, r.Stdout)
	}
	if r := runEnv(t, env, "config"); !strings.Contains(r.Stdout, "cache-max-bytes\t2GiB\tdefault\n") {
		t.Errorf("config: %q", r.Stdout)
	}
	if list.MaxBytes != 2<<30 || len(list.Entries) != 2 || list.Entries[0].File != filepath.Join(files, "a.jsonl") ||
		list.Entries[1].File != filepath.Join(files, "b.jsonl") || list.Entries[0].Bytes == 0 || list.Entries[0].LastUse == "" ||
		list.Bytes != list.Entries[0].Bytes+list.Entries[1].Bytes {
		t.Fatalf("cache --json: %s", r.Stdout)
	}
	// Piped text: size, last use, file; tab-separated.
	r = runEnv(t, env, "cache")
	if lines := strings.Split(strings.TrimSpace(r.Stdout), "\n"); len(lines) != 2 || !strings.HasSuffix(lines[1], "\t"+filepath.Join(files, "b.jsonl")) {
		t.Fatalf("cache: %q", r.Stdout)
	}
	// A cap of one entry, from the config file: the older one goes.
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	os.WriteFile(cfg, []byte("cache-max-bytes: "+sizeText(list.Entries[1].Bytes)+"\n"), 0o644)
	pruneEnv := cliEnv{Env: map[string]string{"XDG_CACHE_HOME": env.Env["XDG_CACHE_HOME"], "CTXFOLD_CONFIG": cfg}}
	r = runEnv(t, pruneEnv, "cache", "prune")
	if r.Code != 0 || r.Stdout != "removed\t"+sizeText(list.Entries[0].Bytes)+"\t"+filepath.Join(files, "a.jsonl")+"\n" {
		t.Fatalf("cache prune: %d %q %s", r.Code, r.Stdout, r.Stderr)
	}
	r = runEnv(t, env, "cache", "prune", "--all", "--json")
	if r.Code != 0 || !strings.Contains(r.Stdout, `"bytes":0`) || !strings.Contains(r.Stdout, "b.jsonl") {
		t.Fatalf("cache prune --all: %d %q", r.Code, r.Stdout)
	}
	if r := runEnv(t, env, "cache"); r.Code != 0 || r.Stdout != "" {
		t.Fatalf("empty cache: %d %q", r.Code, r.Stdout)
	}
	env.Env["CTXFOLD_CACHE_MAX_BYTES"] = "lots"
	if r := runEnv(t, env, "cache"); r.Code != ExitUsage || !strings.Contains(r.Stderr, "CTXFOLD_CACHE_MAX_BYTES: invalid value \"lots\"") {
		t.Fatalf("bad size: %d %s", r.Code, r.Stderr)
	}
	for in, want := range map[string]int64{"2GiB": 2 << 30, "500MiB": 500 << 20, "1.5GB": 1.5e9, "1024": 1024, "0": 0} {
		if got, err := parseBytes(in); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d %v, want %d", in, got, err, want)
		}
	}
}

func sizeText(n int64) string { b, _ := json.Marshal(n); return string(b) }

package mcpserver

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestLocateQwenSession: the newest chat of the server's directory under
// ~/.qwen/projects (the cwd its first record names), not another
// project's newer one nor a sub-agent's file in a sub-folder; QWEN_HOME
// moves the folder. The server finds it through qwen.Find, as setup names
// the format (CTXFOLD_CLIENT=qwen-code).
func TestLocateQwenSession(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	proj, _ = filepath.EvalSymlinks(proj)
	chats := filepath.Join(home, ".qwen", "projects", slug(proj), "chats")
	other := filepath.Join(home, ".qwen", "projects", "-elsewhere", "chats")
	_ = os.MkdirAll(filepath.Join(chats, "subagents", "x"), 0o755)
	_ = os.MkdirAll(other, 0o755)
	old, newest := filepath.Join(chats, "a.jsonl"), filepath.Join(chats, "b.jsonl")
	files := []string{old, newest, filepath.Join(chats, "subagents", "x", "c.jsonl"), filepath.Join(other, "d.jsonl")}
	for i, p := range files {
		cwd := proj
		if i == 3 {
			cwd = "/elsewhere"
		}
		_ = os.WriteFile(p, []byte(`{"sessionId":"s`+strconv.Itoa(i)+`","cwd":"`+cwd+`"}`+"\n"), 0o644)
		at := time.Now().Add(time.Duration(i-5) * time.Minute)
		_ = os.Chtimes(p, at, at)
	}
	env := map[string]string{"CTXFOLD_CLIENT": "qwen-code"}
	loc := Locate{Home: home, Cwd: proj, Getenv: func(k string) string { return env[k] }}
	if f, err := loc.file(); err != nil || f != newest {
		t.Fatalf("served %s (%v), want %s", f, err, newest)
	}
	moved := t.TempDir()
	env["QWEN_HOME"] = moved
	if f, err := loc.file(); err == nil {
		t.Fatalf("QWEN_HOME names an empty folder: served %s", f)
	}
	mc := filepath.Join(moved, "projects", slug(proj), "chats")
	_ = os.MkdirAll(mc, 0o755)
	_ = os.WriteFile(filepath.Join(mc, "e.jsonl"), []byte(`{"sessionId":"e","cwd":"`+proj+`"}`+"\n"), 0o644)
	if f, err := loc.file(); err != nil || f != filepath.Join(mc, "e.jsonl") {
		t.Fatalf("QWEN_HOME: served %s (%v)", f, err)
	}
}

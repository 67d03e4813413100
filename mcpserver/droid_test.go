package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestLocateDroidSession: Droid passes the server no session id; of its
// sessions, the newest one whose session_start names the server's
// directory is served, else the newest; FACTORY_HOME_OVERRIDE moves the
// folder.
func TestLocateDroidSession(t *testing.T) {
	home, proj, other := t.TempDir(), t.TempDir(), t.TempDir()
	write := func(id, cwd string, age time.Duration) string {
		dir := filepath.Join(home, ".factory", "sessions", "-x")
		_ = os.MkdirAll(dir, 0o755)
		p := filepath.Join(dir, id+".jsonl")
		_ = os.WriteFile(p, []byte(`{"type":"session_start","id":"`+id+`","title":"t","cwd":`+strconvQuote(cwd)+`}`+"\n"), 0o644)
		at := time.Now().Add(-age)
		_ = os.Chtimes(p, at, at)
		return p
	}
	mine := write("a", proj, 2*time.Minute)
	newest := write("b", other, time.Minute)
	env := map[string]string{"CTXFOLD_CLIENT": "droid"}
	loc := Locate{Home: home, Cwd: proj, Getenv: func(k string) string { return env[k] }}
	if f, err := loc.file(); err != nil || f != mine {
		t.Fatalf("served %s (%v), want the session started in %s", f, err, proj)
	}
	loc.Cwd = t.TempDir()
	if f, _ := loc.file(); f != newest {
		t.Fatalf("no session of the directory: served %s, want the newest", f)
	}
	loc.Home = t.TempDir()
	if f, err := loc.file(); err == nil {
		t.Fatalf("no Droid folder: served %s", f)
	}
	env["FACTORY_HOME_OVERRIDE"] = home
	if f, _ := loc.file(); f != newest {
		t.Fatalf("FACTORY_HOME_OVERRIDE: served %s, want %s", f, newest)
	}
}

// TestToolsAreReadOnly: every tool says it only reads, so a client that
// asks before a tool with effects (Droid 0.215 in `droid exec --auto
// low`) runs it.
func TestToolsAreReadOnly(t *testing.T) {
	cs := connect(t, Options{Locate: Locate{Transcript: recorded}, CacheDir: t.TempDir()})
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(tools.Tools) != 3 {
		t.Fatalf("tools %v %v", tools, err)
	}
	for _, tool := range tools.Tools {
		if a := tool.Annotations; a == nil || !a.ReadOnlyHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s: annotations %+v", tool.Name, a)
		}
	}
}

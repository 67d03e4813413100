package mcpserver

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestLocateCopilotSession: the session COPILOT_AGENT_SESSION_ID names
// under COPILOT_HOME, else the most recently written log there; an id
// that is no plain name is not followed.
func TestLocateCopilotSession(t *testing.T) {
	home := t.TempDir()
	write := func(id string, age time.Duration) string {
		p := filepath.Join(home, "session-state", id, "events.jsonl")
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		_ = os.WriteFile(p, []byte(`{"type":"session.start","data":{}}`+"\n"), 0o644)
		at := time.Now().Add(-age)
		_ = os.Chtimes(p, at, at)
		return p
	}
	mine := write("aaaa", 2*time.Minute)
	newest := write("bbbb", time.Minute)
	env := map[string]string{"CTXFOLD_CLIENT": "copilot", "CTXFOLD_SESSION_VAR": "COPILOT_AGENT_SESSION_ID", "COPILOT_HOME": home, "COPILOT_AGENT_SESSION_ID": "aaaa"}
	loc := Locate{Home: t.TempDir(), Cwd: t.TempDir(), Getenv: func(k string) string { return env[k] }}
	if f, err := loc.file(); err != nil || f != mine {
		t.Fatalf("served %s (%v), want the session the client names", f, err)
	}
	for _, id := range []string{"", "../x", "..", "gone"} {
		env["COPILOT_AGENT_SESSION_ID"] = id
		if f, _ := loc.file(); f != newest {
			t.Fatalf("id %q: served %s, want the newest", id, f)
		}
	}
	delete(env, "COPILOT_HOME")
	if _, err := loc.file(); err == nil {
		t.Fatal("found a session in an empty ~/.copilot")
	}
}

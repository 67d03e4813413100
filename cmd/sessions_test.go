package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sessionsHome lays real recordings out where each client keeps them: a
// Claude Code session with a compaction, a Codex rollout under CODEX_HOME
// and a Gemini CLI chat, each with its own modification time.
func sessionsHome(t *testing.T) (home, codexHome string) {
	t.Helper()
	home, codexHome = t.TempDir(), t.TempDir()
	place := func(src, dst string, age time.Duration) {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o600); err != nil {
			t.Fatal(err)
		}
		at := coreNow.Add(-age)
		_ = os.Chtimes(dst, at, at)
	}
	place("../testdata/interop/claude-code/2.1.328/compact/transcript/00000000-0000-4000-8000-000000000001.jsonl",
		filepath.Join(home, ".claude", "projects", "-interop-work", "00000000-0000-4000-8000-000000000001.jsonl"), time.Hour)
	place("../testdata/interop/codex/0.169.0/tool/rollout-2026-01-01T00-00-00-00000000-0000-7000-8000-000000000001.jsonl",
		filepath.Join(codexHome, "sessions", "2026", "01", "01", "rollout-2026-01-01T00-00-00-00000000-0000-7000-8000-000000000001.jsonl"), time.Minute)
	place("../testdata/interop/gemini-cli/0.61.0/chat/chats/session-2026-01-01T00-00-00000001.jsonl",
		filepath.Join(home, ".gemini", "tmp", "proj", "chats", "session-2026-01-01T00-00-00000001.jsonl"), 2*time.Hour)
	_ = os.WriteFile(filepath.Join(home, ".gemini", "tmp", "proj", ".project_root"), []byte("/work/gem\n"), 0o600)
	return home, codexHome
}

func TestSessionsListsEveryClientNewestFirst(t *testing.T) {
	home, codexHome := sessionsHome(t)
	env := map[string]string{"HOME": home, "CODEX_HOME": codexHome, "XDG_CACHE_HOME": t.TempDir()}
	r := cliRun(t, env, false, "sessions", "--json")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	var got []sessionLine
	for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		var l sessionLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		got = append(got, l)
	}
	if len(got) != 3 {
		t.Fatalf("want 3 sessions, got %d: %s", len(got), r.Stdout)
	}
	wantClients := []string{"codex", "claude-code", "gemini"}
	for i, l := range got {
		if l.Client != wantClients[i] {
			t.Errorf("session %d: client %s, want %s (newest first)", i, l.Client, wantClients[i])
		}
		if !l.Measured || l.Status == nil || l.Status.Tokens <= 0 || l.Model == "" || l.Project == "" || l.SessionID == "" {
			t.Errorf("%s: not described and measured: %+v", l.Client, l)
		}
	}
	if c := got[1].Compactions; c == nil || *c != 1 {
		t.Errorf("claude-code compactions = %v, want 1 (the recording's /compact)", c)
	}
	if got[2].Project != "/work/gem" {
		t.Errorf("gemini project = %q, want the folder's .project_root", got[2].Project)
	}
	// What it prints is what the other commands take: the same figure.
	est := cliRun(t, env, false, "estimate", got[1].File, "--json")
	var e struct {
		Pct float64 `json:"budget_pct"`
	}
	if err := json.Unmarshal([]byte(est.Stdout), &e); err != nil || est.Code != 0 {
		t.Fatalf("estimate %s: exit %d %v: %s", got[1].File, est.Code, err, est.Stderr)
	}
	if e.Pct != got[1].Status.Pct || e.Pct <= 0 {
		t.Errorf("sessions says %v%%, estimate FILE %v%%", got[1].Status.Pct, e.Pct)
	}
}

func TestSessionsClientAndMeasureFlags(t *testing.T) {
	home, codexHome := sessionsHome(t)
	env := map[string]string{"HOME": home, "CODEX_HOME": codexHome, "XDG_CACHE_HOME": t.TempDir()}
	r := cliRun(t, env, false, "sessions", "--client", "gemini", "--measure", "0")
	fields := strings.Split(strings.TrimSpace(r.Stdout), "\t")
	if r.Code != 0 || len(fields) != 8 || fields[0] != "gemini" || fields[4] != "-" || fields[7] == "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(env["XDG_CACHE_HOME"], "ctxfold")); err == nil {
		t.Error("--measure 0 built a cache session")
	}
	if r := cliRun(t, env, false, "sessions", "--client", "word"); r.Code != 2 || !strings.Contains(r.Stderr, "--client must be one of") {
		t.Errorf("unknown client: exit %d, %q", r.Code, r.Stderr)
	}
	empty := map[string]string{"HOME": t.TempDir(), "XDG_CACHE_HOME": t.TempDir()}
	if r := cliRun(t, empty, false, "sessions"); r.Code != 0 || r.Stdout != "" {
		t.Errorf("no clients: exit %d, stdout %q", r.Code, r.Stdout)
	}
}

// OpenClaw's sessions before its database are JSONL files in pi's format
// under agents/<agent>/sessions/: `sessions` lists them as OpenClaw's
// (an install of early 2026 holds only those), and the file it prints is
// what estimate takes.
func TestSessionsListsOpenClawsJSONLSessions(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".openclaw", "agents", "main", "sessions")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("../testdata/interop/pi/0.73.1/tool/session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "676ff86e-7673-4625-92e4-a7b5a6454395.jsonl")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	// OpenClaw's index beside them is no session.
	_ = os.WriteFile(filepath.Join(dir, "sessions.json"), []byte(`{"agent:main:main":{}}`), 0o600)
	env := map[string]string{"HOME": home, "XDG_CACHE_HOME": t.TempDir()}
	r := cliRun(t, env, false, "sessions", "--client", "openclaw", "--json")
	var l sessionLine
	if r.Code != 0 || json.Unmarshal([]byte(strings.TrimSpace(r.Stdout)), &l) != nil {
		t.Fatalf("exit %d: %s %s", r.Code, r.Stdout, r.Stderr)
	}
	if l.Client != "openclaw" || l.File != file || !l.Measured || l.Status == nil || l.Status.Tokens <= 0 || l.Project == "" || l.Model == "" {
		t.Fatalf("the JSONL session is not listed as OpenClaw's: %+v", l)
	}
	est := cliRun(t, env, false, "estimate", l.File, "--json")
	var e struct {
		Pct float64 `json:"budget_pct"`
	}
	if err := json.Unmarshal([]byte(est.Stdout), &e); err != nil || est.Code != 0 || e.Pct != l.Status.Pct {
		t.Errorf("estimate %s: exit %d %v, %v%% against sessions' %v%%", l.File, est.Code, err, e.Pct, l.Status.Pct)
	}
}

package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxfold/ctxfold/estimate"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/live"
	"github.com/ctxfold/ctxfold/projectprefix"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recorded is Claude Code 2.1.328's transcript of two turns, /compact and
// two more (testdata/interop): the turns before /compact are covered.
var recorded = filepath.Join("..", "testdata", "interop", "claude-code", "2.1.328", "compact", "transcript",
	"00000000-0000-4000-8000-000000000001.jsonl")

func connect(t *testing.T, opts Options) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := New(opts).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, tool string, args any, out any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		t.Fatalf("%s: %v", tool, res.Content[0].(*mcp.TextContent).Text)
	}
	if out != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatal(err)
		}
	}
	return res.Content[0].(*mcp.TextContent).Text
}

// The recall the issue asks for: a fact only a covered turn holds is found,
// the hit names the summary that covers it, and read_turns quotes the turn
// verbatim.
func TestRecallOfACoveredTurn(t *testing.T) {
	cs := connect(t, Options{Locate: Locate{Transcript: recorded}, CacheDir: t.TempDir()})
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(tools.Tools) != 3 {
		t.Fatalf("tools %v %v", tools, err)
	}
	var found SearchOutput
	text := call(t, cs, ToolSearch, map[string]any{"query": "Before compaction, turn two"}, &found)
	var covered *SearchHit
	for i, h := range found.Hits {
		if h.Status == "covered" && h.Field == "content" {
			covered = &found.Hits[i]
		}
	}
	if covered == nil || !strings.HasPrefix(covered.CoveredBy, "summary_") || !strings.Contains(text, "covered by summary "+covered.CoveredBy) {
		t.Fatalf("no covered hit naming its summary:\n%s", text)
	}
	var read ReadOutput
	text = call(t, cs, ToolRead, map[string]any{"ids": []string{covered.ID}}, &read)
	if len(read.Turns) != 1 || !strings.Contains(read.Turns[0].Text, "Before compaction, turn two. [[bash:echo kept-by-compaction]]") || read.Turns[0].CoveredBy != covered.CoveredBy {
		t.Fatalf("read_turns: %+v\n%s", read, text)
	}
	var rng ReadOutput
	call(t, cs, ToolRead, map[string]any{"from": covered.ID, "max_bytes": 300}, &rng)
	if rng.Cut == "" || len(rng.Turns) == 0 {
		t.Fatalf("a 300-byte bound did not cut the range: %+v", rng)
	}
	var st StatusOutput
	call(t, cs, ToolStatus, map[string]any{}, &st)
	if st.Compactions != 1 || st.ActiveSummary != covered.CoveredBy || st.Tokens <= 0 || st.Window <= 0 {
		t.Fatalf("context_status %+v", st)
	}
}

func TestErrorsAreToolResults(t *testing.T) {
	cs := connect(t, Options{Locate: Locate{Home: t.TempDir(), Cwd: t.TempDir()}, CacheDir: t.TempDir()})
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: ToolSearch, Arguments: map[string]any{"query": "x"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "--transcript") {
		t.Fatalf("%+v %v", res, err)
	}
	cs = connect(t, Options{Locate: Locate{Transcript: recorded}, CacheDir: t.TempDir()})
	res, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: ToolRead, Arguments: map[string]any{"ids": []string{"nope"}}})
	if !res.IsError {
		t.Fatal("an unknown id is not an error")
	}
}

// Without a flag the server finds the newest transcript of the project
// directory in Claude Code's projects folder.
func TestLocateProjectTranscript(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	proj, _ = filepath.EvalSymlinks(proj)
	dir := filepath.Join(home, ".claude", "projects", slug(proj))
	_ = os.MkdirAll(dir, 0o755)
	_ = os.WriteFile(filepath.Join(dir, "a.jsonl"), nil, 0o644)
	f, err := Locate{Home: home, Cwd: proj}.file()
	if err != nil || f != filepath.Join(dir, "a.jsonl") {
		t.Fatalf("%q %v", f, err)
	}
	env := map[string]string{"CLAUDE_CODE_SESSION_ID": "b"}
	_ = os.WriteFile(filepath.Join(dir, "b.jsonl"), nil, 0o644)
	if f, _ := (Locate{Home: home, Getenv: func(k string) string { return env[k] }}).file(); f != filepath.Join(dir, "b.jsonl") {
		t.Fatalf("session id: %q", f)
	}
}

// TestLocateCodexRollout: Codex passes the server neither a session id nor
// its own CODEX_HOME (setup names it); of the rollouts, the newest one
// started in the server's directory is served, else the newest.
func TestLocateCodexRollout(t *testing.T) {
	codexHome, proj, other := t.TempDir(), t.TempDir(), t.TempDir()
	day := filepath.Join(codexHome, "sessions", "2026", "12", "02")
	_ = os.MkdirAll(day, 0o755)
	write := func(name, cwd string, age time.Duration) string {
		p := filepath.Join(day, name)
		meta := `{"type":"session_meta","payload":{"id":"x","cwd":` + strconvQuote(cwd) + `,"base_instructions":{"text":"` + strings.Repeat("b", 70000) + `"}}}` + "\n"
		_ = os.WriteFile(p, []byte(meta), 0o644)
		at := time.Now().Add(-age)
		_ = os.Chtimes(p, at, at)
		return p
	}
	mine := write("rollout-a.jsonl", proj, 2*time.Minute)
	newest := write("rollout-b.jsonl", other, time.Minute)
	env := map[string]string{"CTXFOLD_CLIENT": "codex", "CODEX_HOME": codexHome}
	loc := Locate{Home: t.TempDir(), Cwd: proj, Getenv: func(k string) string { return env[k] }}
	if f, err := loc.file(); err != nil || f != mine {
		t.Fatalf("served %s (%v), want the rollout started in %s", f, err, proj)
	}
	loc.Cwd = t.TempDir()
	if f, _ := loc.file(); f != newest {
		t.Fatalf("no rollout of the directory: served %s, want the newest", f)
	}
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestLocateGeminiSession: the project's folder from projects.json (else
// the folder whose .project_root names the directory), its newest
// session-*.jsonl; a sub-agent's file in a sub-folder is not the session.
func TestLocateGeminiSession(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	chats := filepath.Join(home, ".gemini", "tmp", "myproj", "chats")
	_ = os.MkdirAll(filepath.Join(chats, "sub"), 0o755)
	old, newest := filepath.Join(chats, "session-a.jsonl"), filepath.Join(chats, "session-b.jsonl")
	for i, p := range []string{old, newest, filepath.Join(chats, "sub", "session-c.jsonl")} {
		_ = os.WriteFile(p, []byte("{}\n"), 0o644)
		at := time.Now().Add(time.Duration(i-3) * time.Minute)
		_ = os.Chtimes(p, at, at)
	}
	env := map[string]string{"CTXFOLD_CLIENT": "gemini"}
	loc := Locate{Home: home, Cwd: proj, Getenv: func(k string) string { return env[k] }}
	if f, err := loc.file(); err == nil {
		t.Fatalf("no project registered: served %s", f)
	}
	_ = os.WriteFile(filepath.Join(home, ".gemini", "tmp", "myproj", ".project_root"), []byte(proj), 0o644)
	if f, err := loc.file(); err != nil || f != newest {
		t.Fatalf(".project_root: served %s (%v), want %s", f, err, newest)
	}
	_ = os.Remove(filepath.Join(home, ".gemini", "tmp", "myproj", ".project_root"))
	reg, _ := json.Marshal(map[string]any{"projects": map[string]string{proj: "myproj"}})
	_ = os.WriteFile(filepath.Join(home, ".gemini", "projects.json"), reg, 0o644)
	if f, err := loc.file(); err != nil || f != newest {
		t.Fatalf("projects.json: served %s (%v), want %s", f, err, newest)
	}
}

// context_status of a fresh transcript beside an earlier session of its
// project says what that session's first request carried beside its
// transcript, as estimate FILE and the status line do (projectprefix).
func TestStatusOfAFreshSessionTakesTheProjectsSession(t *testing.T) {
	_, _, fresh := sessiontest.ProjectFolder(t, filepath.Join("..", "testdata", "interop", "claude-code", "2.1.328", "chat", "transcript", "00000000-0000-4000-8000-000000000001.jsonl"))
	var st StatusOutput
	call(t, connect(t, Options{Locate: Locate{Transcript: fresh}, CacheDir: t.TempDir()}), ToolStatus, map[string]any{}, &st)
	// What estimate FILE gives: the fresh view, calibrated by the
	// earlier session's first request (not the client's prior).
	e, err := live.Open(context.Background(), fresh, live.Options{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	r := estimate.Session(context.Background(), e.Session, estimate.SessionOptions{})
	if r.Err != nil || r.Result.Calibration == nil || r.Result.Calibration.Anchor != estimate.MethodPrior {
		t.Fatalf("the fresh session before its first reply: %+v %v", r.Result, r.Err)
	}
	prior := r.Result.Calibration.CalibratedTotal
	if !projectprefix.Apply(context.Background(), projectprefix.Target{File: fresh, Session: e.Session}, r.Result, projectprefix.Options{}) {
		t.Fatal("no earlier session taken")
	}
	if want := r.Result.Calibration.CalibratedTotal; st.Tokens != want || want == prior || st.Basis != "calibrated" {
		t.Errorf("context_status of the fresh session: %+v; want %d from the project's session (the prior gives %d)", st, want, prior)
	}
}

package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hook --archive keeps the transcript of a PreCompact in the archive (that
// file only), says so in hook.log, and still answers as the hook does;
// other events archive nothing.
func TestHookArchivesBeforeCompaction(t *testing.T) {
	home, codexHome := sessionsHome(t)
	data, cache := t.TempDir(), t.TempDir()
	env := map[string]string{"HOME": home, "CODEX_HOME": codexHome, "XDG_CACHE_HOME": cache, "XDG_DATA_HOME": data}
	file := filepath.Join(home, ".claude", "projects", "-interop-work", "00000000-0000-4000-8000-000000000001.jsonl")
	in := func(ev string) string {
		b, _ := json.Marshal(map[string]string{"hook_event_name": ev, "transcript_path": file})
		return string(b)
	}
	if r := runEnv(t, cliEnv{Stdin: in("UserPromptSubmit"), Env: env}, "hook", "--archive"); r.Code != 0 {
		t.Fatalf("UserPromptSubmit: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(data, "ctxfold", "archive", "live")); err == nil {
		t.Fatal("UserPromptSubmit archived")
	}
	if r := runEnv(t, cliEnv{Stdin: in("PreCompact"), Env: env}, "hook", "--archive"); r.Code != 0 || r.Stdout != "" {
		t.Fatalf("PreCompact: %+v", r)
	}
	log, _ := os.ReadFile(filepath.Join(cache, "ctxfold", "hook.log"))
	if !strings.Contains(string(log), "info: archived "+file) || strings.Contains(string(log), "hook: archive") {
		t.Fatalf("hook.log:\n%s", log)
	}
	r := cliRun(t, env, false, "search", "--archive", `"Before compaction turn one"`, "--json")
	var res struct {
		Hits []struct{ Client, File string } `json:"hits"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil || len(res.Hits) == 0 || res.Hits[0].Client != "claude-code" || res.Hits[0].File != file {
		t.Fatalf("search --archive: %q %v", r.Stdout, err)
	}
	// Only the hook's transcript: the Codex and Gemini sessions beside
	// it are not archived.
	r = cliRun(t, env, false, "search", "--archive", `"hello from the tool"`, "--json")
	if !strings.Contains(r.Stdout, `"hits":[]`) && !strings.Contains(r.Stdout, `"hits":null`) {
		t.Fatalf("a transcript the hook was not called for was archived: %s", r.Stdout)
	}
}

// Each client setup installs the hook for names its importer client, so
// the hook's walk is of that client's folders only.
func TestArchiveClientOfEveryHookClient(t *testing.T) {
	for name, want := range map[string]string{"Claude Code": "claude-code", "Codex": "codex", "Gemini": "gemini", "Gemini CLI": "gemini"} {
		if got := archiveClientOf(name); len(got) != 1 || got[0] != want {
			t.Errorf("%s: %v, want %s", name, got, want)
		}
	}
	if got := archiveClientOf("Nobody"); got != nil {
		t.Errorf("an unknown client: %v, want every client", got)
	}
}

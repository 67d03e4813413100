package cmd

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// archive keeps every client's sessions; after the clients' files are gone,
// search --archive still finds a word only one of them held, naming the
// client and the node, and render opens the hit.
func TestArchiveThenSearchAfterDeletion(t *testing.T) {
	home, codexHome := sessionsHome(t)
	data := t.TempDir()
	env := map[string]string{"HOME": home, "CODEX_HOME": codexHome, "XDG_CACHE_HOME": t.TempDir(), "XDG_DATA_HOME": data}
	r := cliRun(t, env, false, "archive", "--json")
	if r.Code != 0 {
		t.Fatalf("archive: exit %d: %s", r.Code, r.Stderr)
	}
	var line struct {
		Files, New, Unchanged int
		Indexed               int `json:"indexed_nodes"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &line); err != nil || strings.Count(r.Stdout, "\n") != 1 {
		t.Fatalf("--json is not one line: %q %v", r.Stdout, err)
	}
	if line.Files != 3 || line.New != 3 || line.Indexed == 0 {
		t.Fatalf("archive: %s", r.Stdout)
	}
	os.RemoveAll(home)
	os.RemoveAll(codexHome)
	r = cliRun(t, env, false, "search", "--archive", `"hello from the tool"`, "--json")
	var res struct {
		Hits []struct {
			Client  string `json:"client"`
			NodeID  string `json:"node_id"`
			Session string `json:"session"`
			Status  string `json:"status"`
		} `json:"hits"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &res); err != nil || r.Code != 0 || len(res.Hits) == 0 {
		t.Fatalf("search --archive: exit %d %q %v %s", r.Code, r.Stdout, err, r.Stderr)
	}
	for _, h := range res.Hits {
		if h.Client != "codex" || h.NodeID == "" || h.Status == "" {
			t.Fatalf("hit %+v", h)
		}
	}
	h := res.Hits[0]
	r = cliRun(t, env, false, "render", h.Session, "--head", h.NodeID)
	if r.Code != 0 || !strings.Contains(r.Stdout, "hello from the tool") {
		t.Fatalf("render --head of the hit: exit %d %s %s", r.Code, r.Stdout, r.Stderr)
	}
	for _, args := range [][]string{
		{"search", "--archive", `"unterminated`},
		{"search", "--client", "codex", "DIR", "QUERY"},
		{"search", "--archive", "x", "--since", "yesterday"},
		{"archive", "--client", "nope"},
	} {
		if r := cliRun(t, env, false, args...); r.Code != ExitUsage {
			t.Errorf("%v: exit %d, want %d: %s", args, r.Code, ExitUsage, r.Stderr)
		}
	}
}

package cmd

import (
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/archive"
)

// verify --archive checks the index against the archived sessions: a
// clean archive passes, an index that lost a node's row is an error naming
// the session's file, line and node and the fix, and the fix works.
func TestVerifyArchive(t *testing.T) {
	home, codexHome := sessionsHome(t)
	data := t.TempDir()
	env := map[string]string{"HOME": home, "CODEX_HOME": codexHome, "XDG_CACHE_HOME": t.TempDir(), "XDG_DATA_HOME": data}
	if r := cliRun(t, env, false, "archive", "--json"); r.Code != 0 {
		t.Fatalf("archive: exit %d: %s", r.Code, r.Stderr)
	}
	r := cliRun(t, env, false, "verify", "--archive", "--json")
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if r.Code != 0 || len(lines) != 4 || !strings.Contains(lines[0], `"session":"`+filepath.Join(data, "ctxfold", "archive", archive.IndexFile)+`"`) {
		t.Fatalf("clean archive: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, "ctxfold", "archive", archive.IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`DELETE FROM nodes WHERE id = (SELECT min(id) FROM nodes WHERE line = 2)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	r = cliRun(t, env, false, "verify", "--archive", "--json")
	var idx struct {
		OK     bool `json:"ok"`
		Errors []struct {
			Code, File, Message string
			NodeID              string `json:"node_id"`
			Line                int
		} `json:"errors"`
	}
	if err := json.Unmarshal([]byte(strings.SplitN(r.Stdout, "\n", 2)[0]), &idx); err != nil || r.Code != ExitCheckFailed {
		t.Fatalf("damaged index: exit %d %v\n%s", r.Code, err, r.Stdout)
	}
	if e := idx.Errors; idx.OK || len(e) != 1 || e[0].Code != archive.CodeIndexMismatch || e[0].Line != 2 || e[0].NodeID == "" ||
		!strings.HasSuffix(e[0].File, "nodes.jsonl") || !strings.Contains(e[0].Message, "ctxfold archive --reindex") {
		t.Fatalf("damaged index: %+v", idx)
	}
	if r := cliRun(t, env, false, "archive", "--reindex"); r.Code != 0 {
		t.Fatalf("archive --reindex: exit %d: %s", r.Code, r.Stderr)
	}
	if r := cliRun(t, env, false, "verify", "--archive"); r.Code != 0 || !strings.Contains(r.Stdout, "index.sqlite: ok (3 sessions") {
		t.Fatalf("after --reindex: exit %d\n%s", r.Code, r.Stdout)
	}
	for _, args := range [][]string{
		{"verify", "--archive", "--archive-dir", t.TempDir()},
		{"verify", "--archive-dir", data, "x"},
	} {
		if r := cliRun(t, env, false, args...); r.Code != ExitUsage {
			t.Errorf("%v: exit %d, want %d: %s", args, r.Code, ExitUsage, r.Stderr)
		}
	}
}

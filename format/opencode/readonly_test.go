package opencode_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/format/opencode"
	"github.com/ctxfold/ctxfold/internal/importtest"
)

const readOnlyChild = "CTXFOLD_OPENCODE_RO_CHILD"

// Issue 30 (minor): a WAL-mode database (what OpenCode writes) in a
// folder the user cannot write opens — SQLite cannot make its -shm file
// there, so ctxfold reads a copy — and imports as the same database in a
// writable folder does, rows still in the -wal file included. The
// unprivileged import runs as the user nobody (the test runs as root
// here, which no folder permission stops) or as this user when not root.
func TestReadOnlyFolderWAL(t *testing.T) {
	if path := os.Getenv(readOnlyChild); path != "" {
		var tg importtest.Target
		if err := opencode.Import(context.Background(), []string{path}, opencode.Options{}, &tg); err != nil {
			fmt.Println("error:", err)
			return
		}
		var sum []string
		for _, c := range tg.Convs {
			b, _ := json.Marshal(c.Nodes)
			sum = append(sum, fmt.Sprintf("%s:%d:%x", c.Name, len(c.Nodes), sha256.Sum256(b)))
		}
		fmt.Println("convs:", strings.Join(sum, " "))
		return
	}
	base, err := os.MkdirTemp("", "ctxfold-ro-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(base, "ro"), 0o755); os.RemoveAll(base) })
	ro, rw := filepath.Join(base, "ro"), filepath.Join(base, "rw")
	os.Mkdir(ro, 0o755)
	os.Mkdir(rw, 0o755)
	path := filepath.Join(rw, "opencode.db")
	buildDB(t, path)
	before := childImport(t, path, false)
	// WAL mode, and one more session left in the -wal file: copied while
	// the writer still holds it open (a closing writer checkpoints it).
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	for _, stmt := range []string{"PRAGMA journal_mode=WAL", "PRAGMA wal_autocheckpoint=0",
		`INSERT INTO message (id, session_id, time_created, time_updated, data) SELECT id || 'x', session_id, time_created, time_updated, data FROM message`,
		`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) SELECT id || 'x', message_id || 'x', session_id, time_created, time_updated, data FROM part`} {
		if _, err := db.Exec(stmt); err != nil {
			t.Skipf("%s: %v (the fixture's schema differs)", stmt, err)
		}
	}
	want := childImport(t, path, false)
	if !strings.HasPrefix(want, "convs:") || want == before {
		t.Fatalf("the writable folder: %s (want the sessions in the -wal too)", want)
	}
	// The database and its -wal as they are now, in the read-only folder.
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ro, "opencode.db"+suffix), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	path = filepath.Join(ro, "opencode.db")
	os.Chmod(ro, 0o555)
	os.Chmod(base, 0o755)
	if got := childImport(t, path, true); got != want {
		t.Fatalf("read-only folder: %.300s\nwritable: %.300s", got, want)
	}
}

// childImport imports the database in a child process, unprivileged when
// asked and this process is root, and returns what it printed.
func childImport(t *testing.T, path string, unprivileged bool) string {
	t.Helper()
	exe := os.Args[0]
	cmd := exec.Command(exe, "-test.run=^TestReadOnlyFolderWAL$")
	cmd.Env = append(os.Environ(), readOnlyChild+"="+path)
	if unprivileged && os.Getuid() == 0 {
		// The test binary where nobody may run it.
		bin := filepath.Join(filepath.Dir(filepath.Dir(path)), "opencode.test")
		data, err := os.ReadFile(exe)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, data, 0o755); err != nil {
			t.Fatal(err)
		}
		os.Chmod(path, 0o644)
		cmd = exec.Command(bin, "-test.run=^TestReadOnlyFolderWAL$")
		cmd.Env = append(os.Environ(), readOnlyChild+"="+path, "TMPDIR=/tmp", "HOME=/tmp")
		runAsNobody(cmd)
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v: %s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "convs:") || strings.HasPrefix(line, "error:") {
			return line
		}
	}
	return string(out)
}

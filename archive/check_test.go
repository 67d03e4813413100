package archive

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
)

// checkCodes runs CheckIndex and returns its finding codes.
func checkCodes(t *testing.T, dir string) (*CheckResult, []string) {
	t.Helper()
	res, err := CheckIndex(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, f := range res.Findings {
		codes = append(codes, f.Code)
	}
	return res, codes
}

// damage runs SQL on the archive's index, as a bug or a hand would.
func damage(t *testing.T, dir string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func TestCheckIndexAgreesWithTheSessions(t *testing.T) {
	env, phrases := testHome(t)
	dir := t.TempDir()
	c := run(t, env, dir)
	res, codes := checkCodes(t, dir)
	if len(codes) != 0 || !res.OK() || res.Sessions != len(phrases) || res.Nodes != c.Indexed {
		t.Fatalf("clean archive: %+v (run indexed %d nodes)", res, c.Indexed)
	}
	for _, tc := range []struct {
		name  string
		stmts []string
		code  string
		ok    bool
	}{
		{"a node's text lost", []string{`DELETE FROM fts WHERE rowid = (SELECT min(id) FROM nodes)`}, CodeIndexMismatch, false},
		{"a node id changed", []string{`UPDATE nodes SET node_id = 'nope' WHERE id = (SELECT max(id) FROM nodes)`}, CodeIndexMismatch, false},
		{"a role changed", []string{`UPDATE nodes SET role = 'system' WHERE id = (SELECT min(id) FROM nodes WHERE role = 'user')`}, CodeIndexMismatch, false},
		{"a node too many", []string{`INSERT INTO nodes(session, node_id, role, created_at, line) SELECT session, 'extra', role, created_at, line + 1000000 FROM nodes WHERE id = (SELECT max(id) FROM nodes)`,
			`INSERT INTO fts(rowid, text) VALUES ((SELECT max(id) FROM nodes), 'extra')`}, CodeIndexMismatch, false},
		{"a session gone", []string{`INSERT INTO sessions(dir, client, file, session_id, indexed_bytes, indexed_lines, indexed_sha256, hash_state) VALUES ('live/gone/session', 'codex', '/x', '', 0, 0, '', '')`}, CodeIndexOrphan, false},
		{"the last node lost", []string{`DELETE FROM fts WHERE rowid = (SELECT max(id) FROM nodes)`, `DELETE FROM nodes WHERE id = (SELECT max(id) FROM nodes)`}, CodeIndexMismatch, false},
		{"the last node not indexed yet", []string{`DELETE FROM fts WHERE rowid = (SELECT max(id) FROM nodes)`,
			`UPDATE sessions SET indexed_bytes = indexed_bytes - 1 WHERE id = (SELECT session FROM nodes WHERE id = (SELECT max(id) FROM nodes))`,
			`DELETE FROM nodes WHERE id = (SELECT max(id) FROM nodes)`}, CodeIndexBehind, true},
		{"a session not indexed yet", []string{`DELETE FROM fts WHERE rowid IN (SELECT n.id FROM nodes n WHERE n.session = (SELECT min(id) FROM sessions))`,
			`DELETE FROM nodes WHERE session = (SELECT min(id) FROM sessions)`, `DELETE FROM sessions WHERE id = (SELECT min(id) FROM sessions)`}, CodeIndexBehind, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			damage(t, dir, tc.stmts...)
			res, codes := checkCodes(t, dir)
			if len(codes) != 1 || codes[0] != tc.code || res.OK() != tc.ok {
				t.Fatalf("findings %+v, want one %s", res.Findings, tc.code)
			}
			// The documented fix: --reindex (or, for a lag, a run).
			if _, errs, err := Run(context.Background(), Options{Dir: dir, Env: env, Reindex: !tc.ok}); err != nil || len(errs) != 0 {
				t.Fatal(err, errs)
			}
			if _, codes := checkCodes(t, dir); len(codes) != 0 {
				t.Fatalf("after the fix: %v", codes)
			}
		})
	}
	// A damaged file is reported as such, with no other finding.
	p := filepath.Join(dir, IndexFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := 4096; i < len(b); i++ {
		b[i] ^= 0x5a
	}
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if res, codes := checkCodes(t, dir); len(codes) != 1 || codes[0] != CodeIndexDamaged || res.OK() {
		t.Fatalf("damaged file: %+v", res.Findings)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if _, codes := checkCodes(t, dir); len(codes) != 1 || codes[0] != CodeIndexDamaged {
		t.Fatalf("no index: %v", codes)
	}
	if _, err := CheckIndex(context.Background(), t.TempDir()); err == nil {
		t.Fatal("an empty directory checked as an archive")
	}
}

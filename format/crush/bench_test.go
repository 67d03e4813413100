package crush_test

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/format/crush"
	"github.com/ctxfold/ctxfold/format/input"
)

// BenchmarkFind1000: Find over a project database of 1,000 sessions of 10
// messages each (docs/BENCHMARKS.md).
func BenchmarkFind1000(b *testing.B) {
	home := b.TempDir()
	proj := filepath.Join(home, "app")
	db := filepath.Join(proj, ".crush", "crush.db")
	os.MkdirAll(filepath.Dir(db), 0o755)
	buildSessions(b, db, 1000, 10)
	global := filepath.Join(home, ".local", "share", "crush")
	os.MkdirAll(global, 0o755)
	os.WriteFile(filepath.Join(global, "projects.json"), []byte(`{"projects":[{"path":"`+proj+`","data_dir":".crush"}]}`), 0o644)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		got, err := crush.Find(input.Env{Home: home})
		if err != nil || len(got) != 1000 {
			b.Fatalf("found %d, %v", len(got), err)
		}
	}
}

// buildSessions writes a database with crush.sql's schema and n sessions of
// m messages.
func buildSessions(b *testing.B, path string, n, m int) {
	script, err := os.ReadFile(dir + "crush.sql")
	if err != nil {
		b.Fatal(err)
	}
	schema, _, _ := strings.Cut(string(script), "-- A session with a tool call")
	d, err := sql.Open("sqlite", path)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	for _, stmt := range strings.Split(schema, ";\n") {
		if _, err := d.Exec(stmt); err != nil {
			b.Fatalf("%v: %.80s", err, stmt)
		}
	}
	tx, _ := d.Begin()
	for s := 0; s < n; s++ {
		sid := fmt.Sprintf("s%04d", s)
		tx.Exec(`INSERT INTO sessions (id, title, updated_at, created_at) VALUES (?, 'bench', ?, ?)`, sid, 1767225600+s, 1767225600+s)
		for k := 0; k < m; k++ {
			role, parts := "user", `[{"type":"text","data":{"text":"a question"}}]`
			if k%2 == 1 {
				role, parts = "assistant", `[{"type":"text","data":{"text":"an answer"}},{"type":"finish","data":{"reason":"end_turn","time":1}}]`
			}
			tx.Exec(`INSERT INTO messages (id, session_id, role, parts, model, created_at, updated_at) VALUES (?, ?, ?, ?, 'fake-model', ?, ?)`,
				fmt.Sprintf("%s-%d", sid, k), sid, role, parts, 1767225600+s, 1767225600+s)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

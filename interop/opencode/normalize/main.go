// Command normalize copies one recorded OpenCode (or Kilo) scenario into
// the fixture directory OUT: the client's own `export` of each session
// (export-<n>.json), its database's session, message and part tables as
// SQL (db.sql: the client's CREATE statements and rows, which the oracle
// test loads into a fresh database: the real store is 300 KB of other
// tables), and the fake provider's requests as requests.jsonl. The
// temporary root becomes /work/interop; a request's system prompt is kept
// as its length and SHA-256 and its tools as their names (30 KB a request
// otherwise): the rules of docs/INTEROP-opencode.md.
package main

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	_ "modernc.org/sqlite"
)

// stableRoot replaces the scenario's temporary root.
const stableRoot = "/work/interop"

func main() {
	root := flag.String("root", "", "the scenario's temporary root")
	db := flag.String("db", "", "the client's database")
	out := flag.String("out", "", "the fixture directory to write")
	list := flag.Bool("list", false, "print the database's session ids, oldest first, and exit")
	flag.Parse()
	if *list {
		if err := listSessions(*db); err != nil {
			fmt.Fprintln(os.Stderr, "normalize:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*root, *db, *out); err != nil {
		fmt.Fprintln(os.Stderr, "normalize:", err)
		os.Exit(1)
	}
}

func run(root, db, out string) error {
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	fix := func(b []byte) []byte { return bytes.ReplaceAll(b, []byte(root), []byte(stableRoot)) }
	exports, _ := filepath.Glob(filepath.Join(root, "export-*.json"))
	for _, e := range exports {
		data, err := os.ReadFile(e)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, filepath.Base(e)), fix(data), 0o644); err != nil {
			return err
		}
	}
	dump, err := dumpDB(db)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "db.sql"), fix(dump), 0o644); err != nil {
		return err
	}
	reqs, err := requests(filepath.Join(root, "req"))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "requests.jsonl"), fix(reqs), 0o644)
}

func listSessions(path string) error {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.Query(`SELECT id FROM session ORDER BY time_created, id`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return err
		}
		fmt.Println(id)
	}
	return rows.Err()
}

// dumpDB writes the session, message and part tables as SQL.
func dumpDB(path string) ([]byte, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var buf bytes.Buffer
	for _, table := range []string{"session", "message", "part"} {
		var create string
		if err := db.QueryRow(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?`, table).Scan(&create); err != nil {
			return nil, fmt.Errorf("table %s: %w", table, err)
		}
		fmt.Fprintf(&buf, "%s;\n", create)
		rows, err := db.Query(`SELECT * FROM "` + table + `" ORDER BY rowid`)
		if err != nil {
			return nil, err
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return nil, err
			}
			lits := make([]string, len(vals))
			for i, v := range vals {
				lits[i] = literal(v)
			}
			fmt.Fprintf(&buf, "INSERT INTO \"%s\" VALUES (%s);\n", table, strings.Join(lits, ", "))
		}
		rows.Close()
	}
	return buf.Bytes(), nil
}

func literal(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case int64:
		return fmt.Sprint(x)
	case float64:
		return fmt.Sprint(x)
	case []byte:
		return "'" + strings.ReplaceAll(string(x), "'", "''") + "'"
	default:
		return "'" + strings.ReplaceAll(fmt.Sprint(x), "'", "''") + "'"
	}
}

// requests reads request-NNN.json in order and writes one line each:
// seq, kind (title, summarize or main), the body's messages with each
// system message's content replaced by its length and SHA-256, the tool
// names, and the other fields of the body.
func requests(dir string) ([]byte, error) {
	files, _ := filepath.Glob(filepath.Join(dir, "request-*.json"))
	sort.Strings(files)
	var buf bytes.Buffer
	for i, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var body map[string]any
		if err := json.Unmarshal(data, &body); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		msgs, _ := body["messages"].([]any)
		kind := "main"
		for _, m := range msgs {
			mm, _ := m.(map[string]any)
			if mm["role"] != "system" {
				continue
			}
			text, _ := mm["content"].(string)
			switch {
			case strings.HasPrefix(text, "You are a title generator"):
				kind = "title"
			case strings.HasPrefix(text, "You are a context summarization agent"):
				kind = "summarize"
			}
			sum := sha256.Sum256([]byte(text))
			mm["content"] = map[string]any{"bytes": len(text), "sha256": hex.EncodeToString(sum[:])}
		}
		// Kilo's summarizer has a system prompt of its own: its user
		// message, OpenCode's, says what it is.
		for _, m := range msgs {
			mm, _ := m.(map[string]any)
			if text, _ := mm["content"].(string); mm["role"] == "user" && strings.HasPrefix(text, "Here is the conversation so far:") {
				kind = "summarize"
			}
		}
		var tools []string
		ts, _ := body["tools"].([]any)
		for _, t := range ts {
			tm, _ := t.(map[string]any)
			fn, _ := tm["function"].(map[string]any)
			name, _ := fn["name"].(string)
			tools = append(tools, name)
		}
		if ts != nil {
			body["tools"] = tools
		}
		line, err := json.Marshal(map[string]any{"seq": i + 1, "kind": kind, "body": body})
		if err != nil {
			return nil, err
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}

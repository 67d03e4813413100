// Command normalize copies one recorded Crush scenario into the fixture
// directory OUT (docs/INTEROP-crush.md): the sessions and messages tables
// of the project's .crush/crush.db as SQL (db.sql: Crush's CREATE
// statements and rows, which the oracle test loads into a fresh database
// named as Crush names its own), and the fake provider's requests as
// requests.jsonl. So that a re-recording differs only where Crush does,
// the session and message UUIDs become numbered ones in order of first
// appearance, the timestamps are shifted to start at a fixed second
// (their order and gaps kept), the temporary root becomes /work/interop,
// a request's system prompt is kept as its length and SHA-256 and its
// tools as their names.
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
	"regexp"
	"sort"
	"strconv"
	"strings"

	_ "modernc.org/sqlite"
)

const (
	stableRoot = "/work/interop"
	// stableStart is the first timestamp of every fixture (seconds).
	stableStart = 1796000000
)

func main() {
	root := flag.String("root", "", "the scenario's temporary root")
	db := flag.String("db", "", "Crush's database (.crush/crush.db)")
	out := flag.String("out", "", "the fixture directory to write")
	flag.Parse()
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
	n := &normaliser{root: root, ids: map[string]string{}}
	dump, err := n.dumpDB(db)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "db.sql"), dump, 0o644); err != nil {
		return err
	}
	reqs, err := n.requests(filepath.Join(root, "req"))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "requests.jsonl"), reqs, 0o644)
}

type normaliser struct {
	root string
	ids  map[string]string
	base int64 // the recording's first timestamp
}

var (
	uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	// A finish part's time (seconds), inside the parts JSON.
	partTimeRE = regexp.MustCompile(`"time":([0-9]{10})\b`)
	// A tool result's start and end (milliseconds), in its metadata JSON
	// string.
	msTimeRE = regexp.MustCompile(`(start_time|end_time)(\\?"):([0-9]{13})\b`)
)

// text normalises a string: the root, the UUIDs, the parts' times.
func (n *normaliser) text(s string) string {
	s = strings.ReplaceAll(s, n.root, stableRoot)
	s = uuidRE.ReplaceAllStringFunc(s, func(id string) string {
		if v, ok := n.ids[id]; ok {
			return v
		}
		v := fmt.Sprintf("00000000-0000-4000-8000-%012d", len(n.ids)+1)
		n.ids[id] = v
		return v
	})
	s = partTimeRE.ReplaceAllStringFunc(s, func(m string) string {
		t, _ := strconv.ParseInt(m[len(`"time":`):], 10, 64)
		return fmt.Sprintf(`"time":%d`, n.shift(t))
	})
	return msTimeRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := msTimeRE.FindStringSubmatch(m)
		t, _ := strconv.ParseInt(sub[3], 10, 64)
		if n.base > 0 {
			t = t - n.base*1000 + stableStart*1000
		}
		return fmt.Sprintf("%s%s:%d", sub[1], sub[2], t)
	})
}

func (n *normaliser) shift(t int64) int64 {
	if t <= 0 || n.base == 0 {
		return t
	}
	return t - n.base + stableStart
}

// dumpDB writes the sessions and messages tables as SQL, in rowid order.
func (n *normaliser) dumpDB(path string) ([]byte, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if err := db.QueryRow(`SELECT MIN(created_at) FROM sessions`).Scan(&n.base); err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	var buf bytes.Buffer
	for _, table := range []string{"sessions", "messages"} {
		var create string
		if err := db.QueryRow(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?`, table).Scan(&create); err != nil {
			return nil, fmt.Errorf("table %s: %w", table, err)
		}
		fmt.Fprintf(&buf, "%s;\n", create)
		if err := n.rows(db, table, &buf); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

func (n *normaliser) rows(db *sql.DB, table string, buf *bytes.Buffer) error {
	rows, err := db.Query(`SELECT * FROM "` + table + `" ORDER BY rowid`)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		lits := make([]string, len(vals))
		for i, v := range vals {
			if t, ok := v.(int64); ok && strings.HasSuffix(cols[i], "_at") {
				v = n.shift(t)
			}
			lits[i] = n.literal(v)
		}
		fmt.Fprintf(buf, "INSERT INTO \"%s\" VALUES (%s);\n", table, strings.Join(lits, ", "))
	}
	return rows.Err()
}

func (n *normaliser) literal(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case int64, float64:
		return fmt.Sprint(x)
	case []byte:
		return "'" + strings.ReplaceAll(n.text(string(x)), "'", "''") + "'"
	default:
		return "'" + strings.ReplaceAll(n.text(fmt.Sprint(x)), "'", "''") + "'"
	}
}

// requests reads request-NNN.json in order and writes one line each:
// seq, kind (main, title or summarize, by the system prompt Crush sends),
// the body with each system message's content replaced by its length and
// SHA-256 and the tools by their names.
func (n *normaliser) requests(dir string) ([]byte, error) {
	// The fake OpenAI provider writes request-NNN.json, the fake
	// Anthropic one NNNN-messages.json (beside its count_tokens and other
	// requests, which are not the conversation's).
	files, _ := filepath.Glob(filepath.Join(dir, "request-*.json"))
	messages, _ := filepath.Glob(filepath.Join(dir, "*-messages.json"))
	files = append(files, messages...)
	sort.Strings(files)
	var buf bytes.Buffer
	for i, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var body map[string]any
		if err := json.Unmarshal([]byte(n.text(string(data))), &body); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		msgs, _ := body["messages"].([]any)
		kind := "main"
		if sys, ok := body["system"].([]any); ok { // Anthropic's system blocks
			for _, b := range sys {
				bm, _ := b.(map[string]any)
				text, _ := bm["text"].(string)
				kind = kindOf(text, kind)
				sum := sha256.Sum256([]byte(text))
				bm["text"] = map[string]any{"bytes": len(text), "sha256": hex.EncodeToString(sum[:])}
			}
		}
		for _, m := range msgs {
			mm, _ := m.(map[string]any)
			if mm["role"] != "system" {
				continue
			}
			text, _ := mm["content"].(string)
			kind = kindOf(text, kind)
			sum := sha256.Sum256([]byte(text))
			mm["content"] = map[string]any{"bytes": len(text), "sha256": hex.EncodeToString(sum[:])}
		}
		if ts, ok := body["tools"].([]any); ok {
			var names []string
			for _, t := range ts {
				tm, _ := t.(map[string]any)
				fn, _ := tm["function"].(map[string]any)
				name, _ := fn["name"].(string)
				if fn == nil { // Anthropic's {name, input_schema}
					name, _ = tm["name"].(string)
				}
				names = append(names, name)
			}
			body["tools"] = names
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

// kindOf is a request's kind by its system prompt: Crush's title and
// summarize requests have their own.
func kindOf(system, kind string) string {
	switch {
	case strings.HasPrefix(system, "You will generate a short title"):
		return "title"
	case strings.HasPrefix(system, "You are summarizing a conversation"):
		return "summarize"
	}
	return kind
}

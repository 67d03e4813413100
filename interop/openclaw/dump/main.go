// Command dump writes what interop/openclaw/record.sh keeps of a recorded
// OpenClaw scenario: every transcript_events row of the agent's database
// (read read-only; event_zstd decompressed) as one JSON line
// {session_id, seq, created_at, event}, and each captured request with
// its system prompt and tool definitions replaced by their size and names
// (they are OpenClaw's, 60 KB a request, and not in the transcript:
// docs/INTEROP-openclaw.md).
package main

import (
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"

	"github.com/klauspost/compress/zstd"
	_ "modernc.org/sqlite"
)

func main() {
	db := flag.String("db", "", "the agent's openclaw-agent.sqlite")
	requests := flag.String("requests", "", "the fake provider's request-NNN.json directory")
	out := flag.String("out", "", "the scenario's fixture directory")
	flag.Parse()
	if err := run(*db, *requests, *out); err != nil {
		fmt.Fprintln(os.Stderr, "dump:", err)
		os.Exit(1)
	}
}

func run(dbPath, requests, out string) error {
	if err := os.MkdirAll(filepath.Join(out, "requests"), 0o755); err != nil {
		return err
	}
	if err := dumpRows(dbPath, filepath.Join(out, "transcript_events.jsonl")); err != nil {
		return err
	}
	files, _ := filepath.Glob(filepath.Join(requests, "request-*.json"))
	sort.Strings(files)
	for _, f := range files {
		if err := slimRequest(f, filepath.Join(out, "requests", filepath.Base(f))); err != nil {
			return err
		}
	}
	return nil
}

func dumpRows(dbPath, dst string) error {
	abs, err := filepath.Abs(dbPath)
	if err != nil {
		return err
	}
	u := url.URL{Scheme: "file", Path: abs, RawQuery: "mode=ro&_pragma=query_only(1)"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.Query(`SELECT session_id, seq, created_at, event_json, event_zstd FROM transcript_events ORDER BY session_id, seq`)
	if err != nil {
		return err
	}
	defer rows.Close()
	zr, _ := zstd.NewReader(nil)
	defer zr.Close()
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	for rows.Next() {
		var sid string
		var seq, created int64
		var text sql.NullString
		var packed []byte
		if err := rows.Scan(&sid, &seq, &created, &text, &packed); err != nil {
			return err
		}
		ev := []byte(text.String)
		if !text.Valid {
			if ev, err = zr.DecodeAll(packed, nil); err != nil {
				return err
			}
		}
		line, err := json.Marshal(map[string]any{"session_id": sid, "seq": seq, "created_at": created, "event": json.RawMessage(ev)})
		if err != nil {
			return err
		}
		if _, err := f.Write(append(line, '\n')); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return f.Close()
}

func slimRequest(src, dst string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	var req map[string]any
	if err := json.Unmarshal(data, &req); err != nil {
		return err
	}
	// The tool definitions and a long system prompt are elided to their
	// size (and the tools' names), in the form the prior table reads
	// (estimate's prior_gen_test.go: Qwen Code's recordings use it too).
	if tools, ok := req["tools"].([]any); ok {
		var names []string
		for _, t := range tools {
			fn, _ := t.(map[string]any)["function"].(map[string]any)
			name, _ := fn["name"].(string)
			names = append(names, name)
		}
		var raw map[string]json.RawMessage
		_ = json.Unmarshal(data, &raw)
		req["tools"] = map[string]any{"bytes": len(raw["tools"]), "names": names}
	}
	if msgs, ok := req["messages"].([]any); ok && len(msgs) > 0 {
		if m, _ := msgs[0].(map[string]any); m["role"] == "system" {
			if s, ok := m["content"].(string); ok && len(s) > 2000 {
				m["content"] = fmt.Sprintf("OpenClaw's system prompt[elided: about %d bytes]", len(s))
			}
		}
	}
	b, err := json.MarshalIndent(req, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(dst, append(b, '\n'), 0o644)
}

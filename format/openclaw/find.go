package openclaw

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/ctxfold/ctxfold/format/input"
)

// stateDir is OpenClaw's folder: $OPENCLAW_STATE_DIR, else
// $OPENCLAW_HOME/.openclaw, else ~/.openclaw.
func stateDir(env input.Env) string {
	if state := env.Get("OPENCLAW_STATE_DIR"); state != "" {
		return state
	}
	home := env.Get("OPENCLAW_HOME")
	if home == "" {
		home = env.Home
	}
	return filepath.Join(home, ".openclaw")
}

// Find lists OpenClaw's sessions: every agent's database under
// $OPENCLAW_STATE_DIR (else $OPENCLAW_HOME/.openclaw, else ~/.openclaw),
// agents/<agent>/agent/openclaw-agent.sqlite, one entry a session (File
// the database, SessionID what --session takes, Updated its last event).
func Find(env input.Env) ([]input.Found, error) {
	state := stateDir(env)
	stores, _ := filepath.Glob(filepath.Join(state, "agents", "*", "agent", StoreName))
	sort.Strings(stores)
	var out []input.Found
	var firstErr error
	for _, file := range stores {
		st, err := os.Lstat(file)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		db, cleanup, err := openReadOnly(context.Background(), file)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		sessions, err := listSessions(context.Background(), db)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		for _, s := range sessions {
			f := input.Found{File: file, SessionID: s.id, Updated: time.UnixMilli(s.last), Bytes: st.Size()}
			f.Project, f.Model = describe(db, s.id)
			out = append(out, f)
		}
		cleanup()
	}
	return out, firstErr
}

// FindWith is Find and the sessions OpenClaw kept before its database, one
// JSONL file each in pi's format under agents/<agent>/sessions/ (the
// format the pi importer reads, described by describeJSONL: pi.Describe),
// newest last as Find's: an install of early 2026 holds only those.
func FindWith(describeJSONL func(file string) (input.Found, bool)) input.FindFunc {
	return func(env input.Env) ([]input.Found, error) {
		out, err := Find(env)
		files, _ := filepath.Glob(filepath.Join(stateDir(env), "agents", "*", "sessions", "*.jsonl"))
		sort.Strings(files)
		for _, file := range files {
			if f, ok := describeJSONL(file); ok {
				out = append(out, f)
			}
		}
		return out, err
	}
}

// describe is what a session's first rows say cheaply: the working
// directory of its header and the model of its latest model_change or
// reply among them ("" when they do not say).
func describe(db *sql.DB, id string) (project, model string) {
	rows, err := db.Query(`SELECT event_json FROM transcript_events WHERE session_id = ? AND event_json IS NOT NULL ORDER BY seq LIMIT 8`, id)
	if err != nil {
		return "", ""
	}
	defer rows.Close()
	for rows.Next() {
		var raw string
		if rows.Scan(&raw) != nil {
			break
		}
		var e struct {
			Type    string `json:"type"`
			Cwd     string `json:"cwd"`
			ModelID string `json:"modelId"`
		}
		if json.Unmarshal([]byte(raw), &e) != nil {
			continue
		}
		switch e.Type {
		case "session":
			project = e.Cwd
		case "model_change":
			model = e.ModelID
		}
	}
	return project, model
}

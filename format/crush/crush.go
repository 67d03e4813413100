// Package crush imports Crush sessions from the SQLite database Crush keeps
// in each project (.crush/crush.db, docs/INTEROP-crush.md): the sessions
// table and the messages table, whose "parts" column holds each message's
// parts as [{"type", "data"}…] (text, reasoning, image_url, binary,
// tool_call, tool_result, finish, shell_command). Each session is one
// conversation, its messages in the order Crush lists them (created_at);
// a user message is a user node, an assistant message an assistant node
// with its tool calls, a tool message one tool node per result. A summary
// message (is_summary_message: Crush's compaction, automatic near the
// window's end or /summarize) becomes a summary node covering every turn
// before it, as Crush then sends only the summary and what follows it.
// A sub-agent's session (subagent.go) imports as a caller subtree of the
// node holding the call that started it.
//
// Crush records token totals per session (prompt_tokens,
// completion_tokens), never per request, so no node carries a usage. The
// database is opened read-only (a copy when SQLite cannot open it so), never
// locking Crush out. It only reads and hands nodes to a
// transcript.ImportSink.
package crush

import (
	"bytes"
	"context"
	"database/sql"
	"path/filepath"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// Options tune the import.
type Options = input.Options

var sqliteMagic = []byte("SQLite format 3\x00")

// Detect reports whether head is Crush's database: a SQLite file whose
// schema (on its first pages) has Crush's messages table, with its parts
// column, beside a sessions table, with is_summary_message and
// summary_message_id or, in a database older than those columns (Crush
// before August 2025, and the Go OpenCode it grew from, whose project
// database .opencode/opencode.db has the same tables), the
// goose_db_version table of its migrations and sessions.message_count.
func Detect(head []byte) bool {
	has := func(s string) bool { return bytes.Contains(head, []byte(s)) }
	return bytes.HasPrefix(head, sqliteMagic) && has("parts") &&
		((has("is_summary_message") && has("summary_message_id")) || (has("goose_db_version") && has("message_count")))
}

// DetectPath reports whether path is Crush's database by its name inside a
// .crush data directory.
func DetectPath(path string) bool {
	return filepath.Base(path) == "crush.db" && filepath.Base(filepath.Dir(path)) == ".crush"
}

// Import reads every session of each database (or the one
// input.Options.SessionID names, or with Latest the most recently
// updated, or with Session the Nth by creation) as one conversation each.
func Import(ctx context.Context, files []string, opts Options, target transcript.ImportTarget) error {
	for _, file := range files {
		if err := importFile(ctx, file, opts, target); err != nil {
			return err
		}
	}
	return nil
}

// sessionRow is one row of the sessions table.
type sessionRow struct {
	id, parent, title string
	summaryID         string
	updated, created  int64
}

func importFile(ctx context.Context, file string, opts Options, target transcript.ImportTarget) error {
	db, cleanup, err := openReadOnly(ctx, file)
	if err != nil {
		return input.Errorf(file, 0, "cannot read Crush's database: %v", err)
	}
	defer cleanup()
	sessions, err := listSessions(ctx, db)
	if err != nil {
		return input.Errorf(file, 0, "not a Crush database (sessions table): %v", err)
	}
	// A sub-agent's session imports with its caller's (subagent.go);
	// --session ID may still name it alone.
	kids, absorbed := children(ctx, db, sessions)
	candidates := sessions
	if opts.SessionID == "" {
		candidates = topLevel(sessions, absorbed)
	}
	chosen, err := choose(file, candidates, opts)
	if err != nil {
		return err
	}
	for _, s := range chosen {
		if err := importSession(ctx, db, file, s, kids, opts, target); err != nil {
			return err
		}
	}
	return nil
}

func listSessions(ctx context.Context, db *sql.DB) ([]sessionRow, error) {
	summary := "COALESCE(summary_message_id, '')"
	if !hasColumn(ctx, db, "sessions", "summary_message_id") { // before Crush's migration 20250515105448
		summary = "''"
	}
	rows, err := db.QueryContext(ctx, `SELECT id, COALESCE(parent_session_id, ''), title, `+summary+`,
		updated_at, created_at FROM sessions ORDER BY created_at, rowid`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []sessionRow
	for rows.Next() {
		var s sessionRow
		if err := rows.Scan(&s.id, &s.parent, &s.title, &s.summaryID, &s.updated, &s.created); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// choose picks the sessions to import: the one SessionID names, the
// latest, the Nth, or all.
func choose(file string, sessions []sessionRow, opts Options) ([]sessionRow, error) {
	switch {
	case opts.SessionID != "":
		var ids []string
		for _, s := range sessions {
			if s.id == opts.SessionID {
				return []sessionRow{s}, nil
			}
			ids = append(ids, s.id)
		}
		return nil, input.Errorf(file, 0, "no Crush session %q in the database; it holds %d: %s", opts.SessionID, len(ids), strings.Join(ids, ", "))
	case opts.Session > 0:
		if opts.Session > len(sessions) {
			return nil, input.Errorf(file, 0, "--session %d: the database holds %d sessions", opts.Session, len(sessions))
		}
		return sessions[opts.Session-1 : opts.Session], nil
	case opts.Latest && len(sessions) > 0:
		latest := sessions[0]
		for _, s := range sessions[1:] {
			if s.updated >= latest.updated {
				latest = s
			}
		}
		return []sessionRow{latest}, nil
	}
	if len(sessions) == 0 {
		return nil, input.Errorf(file, 0, "the Crush database holds no session")
	}
	return sessions, nil
}

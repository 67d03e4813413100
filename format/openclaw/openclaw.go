// Package openclaw imports OpenClaw's sessions from its per-agent SQLite
// store, ~/.openclaw/agents/<agent>/agent/openclaw-agent.sqlite
// (docs/INTEROP-openclaw.md): table transcript_events holds, per session
// and in seq order, pi's session entries as JSON (event_json, or
// zstd-compressed in event_zstd). The entries are folded by pi's decoder,
// handed in by the importer (a format does not import another format,
// docs/ARCHITECTURE.md), so branches, usage and compactions import as pi's
// do. OpenClaw's older JSONL sessions under sessions/ are pi session files
// and import as format pi. The database is read read-only, never locked
// against OpenClaw (a copy when the folder cannot hold SQLite's -shm).
package openclaw

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"path/filepath"

	"github.com/klauspost/compress/zstd"
	_ "modernc.org/sqlite"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// StoreName is the file name of OpenClaw's per-agent database.
const StoreName = "openclaw-agent.sqlite"

var sqliteMagic = []byte("SQLite format 3\x00")

// Detect reports whether head is the start of a SQLite database whose
// schema names transcript_events.
func Detect(head []byte) bool {
	return bytes.HasPrefix(head, sqliteMagic) && bytes.Contains(head, []byte("transcript_events"))
}

// DetectPath reports whether path is OpenClaw's database by its name (its
// schema is long: transcript_events may lie past the bytes Detect sees).
func DetectPath(path string) bool {
	return filepath.Base(path) == StoreName
}

// Decoder folds one session's pi entries (pi.Decoder satisfies it).
type Decoder interface {
	Entry(raw []byte, line int) error
	Close() error
	// ProviderModel is the provider and model the session used last.
	ProviderModel() (provider, model string)
}

// NewDecoder returns a decoder writing to sink; name names errors.
type NewDecoder func(sink transcript.ImportSink, name string) Decoder

// ImportFunc is the importer's signature (importer.ImportFunc).
type ImportFunc = func(ctx context.Context, files []string, opts input.Options, target transcript.ImportTarget) error

// Importer returns the importer reading each database with dec: one
// conversation per session (opts.SessionID: that one; opts.Latest: the
// most recently written; opts.Session: the Nth by first write).
func Importer(dec NewDecoder) ImportFunc {
	return func(ctx context.Context, files []string, opts input.Options, target transcript.ImportTarget) error {
		for _, file := range files {
			if err := importStore(ctx, file, opts, target, dec); err != nil {
				return err
			}
		}
		return nil
	}
}

func importStore(ctx context.Context, file string, opts input.Options, target transcript.ImportTarget, dec NewDecoder) error {
	db, cleanup, err := openReadOnly(ctx, file)
	if err != nil {
		return input.Errorf(file, 0, "expected OpenClaw's SQLite store: %v", err)
	}
	defer cleanup()
	sessions, err := listSessions(ctx, db)
	if err != nil {
		return input.Errorf(file, 0, "expected OpenClaw's transcript_events table: %v", err)
	}
	picked, err := pick(file, sessions, opts)
	if err != nil {
		return err
	}
	for _, s := range picked {
		if err := importSession(ctx, db, file, s.id, opts, target, dec); err != nil {
			return err
		}
	}
	return nil
}

type session struct {
	id      string
	first   int64
	last    int64
	entries int64
}

func listSessions(ctx context.Context, db *sql.DB) ([]session, error) {
	rows, err := db.QueryContext(ctx, `SELECT session_id, MIN(created_at), MAX(created_at), COUNT(*) FROM transcript_events
		GROUP BY session_id ORDER BY MIN(created_at), session_id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []session
	for rows.Next() {
		var s session
		if err := rows.Scan(&s.id, &s.first, &s.last, &s.entries); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// pick applies the session options; a named session that is not there is
// an error naming the ones that are.
func pick(file string, all []session, opts input.Options) ([]session, error) {
	switch {
	case opts.SessionID != "":
		var ids []string
		for _, s := range all {
			if s.id == opts.SessionID {
				return []session{s}, nil
			}
			ids = append(ids, s.id)
		}
		return nil, input.Errorf(file, 0, "no session %q in this store (it holds %v)", opts.SessionID, ids)
	case opts.Session > 0:
		if opts.Session > len(all) {
			return nil, input.Errorf(file, 0, "--session %d: the store holds %d sessions", opts.Session, len(all))
		}
		return all[opts.Session-1 : opts.Session], nil
	case opts.Latest && len(all) > 0:
		latest := all[0]
		for _, s := range all[1:] {
			if s.last >= latest.last {
				latest = s
			}
		}
		return []session{latest}, nil
	}
	return all, nil
}

// importSession folds one session's rows in seq order; a row's seq is the
// "line" of its errors.
func importSession(ctx context.Context, db *sql.DB, file, id string, opts input.Options, target transcript.ImportTarget, dec NewDecoder) error {
	rows, err := db.QueryContext(ctx, `SELECT seq, event_json, event_zstd FROM transcript_events WHERE session_id = ? ORDER BY seq`, id)
	if err != nil {
		return input.Errorf(file, 0, "session %q: %v", id, err)
	}
	defer rows.Close()
	sink, err := target.Conversation(id)
	if err != nil {
		return err
	}
	name := fmt.Sprintf("%s (session %s, seq)", file, id)
	d := dec(sink, name)
	var zr *zstd.Decoder
	defer func() {
		if zr != nil {
			zr.Close()
		}
	}()
	for rows.Next() {
		var seq int64
		var text sql.NullString
		var packed []byte
		if err := rows.Scan(&seq, &text, &packed); err != nil {
			return input.Errorf(name, 0, "%v", err)
		}
		raw := []byte(text.String)
		if !text.Valid {
			if zr == nil {
				if zr, err = zstd.NewReader(nil, zstd.WithDecoderMaxMemory(uint64(opts.Max())*2), zstd.WithDecoderConcurrency(1)); err != nil {
					return err
				}
			}
			if raw, err = zr.DecodeAll(packed, nil); err != nil {
				return input.Errorf(name, int(seq), "event_zstd: %v", err)
			}
		}
		if len(raw) > opts.Max() {
			return input.Errorf(name, int(seq), "an event longer than the %d-byte limit (raise it with --max-line-bytes)", opts.Max())
		}
		if err := d.Entry(raw, int(seq)); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return input.Errorf(name, 0, "%v", err)
	}
	if err := d.Close(); err != nil {
		return err
	}
	reportWindow(sink, opts.Env, d)
	return nil
}

package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ctxfold/ctxfold/transcript"
)

// FormatVersion is the newest session format this build reads and
// writes. A session with a higher version is refused; lower versions are
// read. Version 2 stores a summary's coverage as covers_span
// (docs/FORMAT.md §4, §6), which a version 1 reader would take for a
// summary without coverage: a session is created as version 1
// (InitFormatVersion) and raised to 2 by the commit that appends its
// first summary, so a session without one stays readable by older builds.
const (
	FormatVersion     = 2
	InitFormatVersion = 1
)

// File names inside a session directory (docs/FORMAT.md).
const (
	MetaFile   = "session.json"
	NodesFile  = "nodes.jsonl"
	EventsFile = "events.jsonl"
	LockFile   = "lock"
	LostFound  = "lost+found"
)

// Meta is session.json. It is the commit point of every write: a node
// line exists for readers only once NodesBytes covers it.
type Meta struct {
	FormatVersion int `json:"format_version"`
	// Head is the id the next turn extends; "" only in an empty session.
	Head string `json:"head"`
	// ActiveSummaryID and ActiveSummaryText are docs/FORMAT.md §4's _last_summary_id
	// and _last_summary_text.
	ActiveSummaryID   string `json:"active_summary_id,omitempty"`
	ActiveSummaryText string `json:"active_summary_text,omitempty"`
	Model             string `json:"model,omitempty"`
	CreatedAt         string `json:"created_at,omitempty"`
	// NodesBytes is the committed length of nodes.jsonl. Absent in a
	// hand-written session, where every complete line counts.
	NodesBytes *int64 `json:"nodes_bytes,omitempty"`
	// NodesSHA256 is the hex SHA-256 of the committed bytes, NodesHashState
	// the base64 of the digest state that extends it, NodesStat the stat of
	// nodes.jsonl right after the commit (docs/FORMAT.md §1, "The hash
	// chain"). Absent in a session no ctxfold of this version wrote.
	NodesSHA256    string    `json:"nodes_sha256,omitempty"`
	NodesHashState string    `json:"nodes_hash_state,omitempty"`
	NodesStat      *FileStat `json:"nodes_stat,omitempty"`
	// Cache marks a cache session ctxfold keeps for a transcript file
	// (MarkCache): only those can be rewound (RewindCache).
	Cache bool `json:"cache,omitempty"`
	// Extra keeps fields written by a newer or foreign writer.
	Extra map[string]json.RawMessage `json:"-"`
}

var metaKnown = []string{"format_version", "head", "active_summary_id", "active_summary_text", "model", "created_at", "nodes_bytes", "nodes_sha256", "nodes_hash_state", "nodes_stat", "cache"}

func (m Meta) MarshalJSON() ([]byte, error) {
	type plain Meta
	b, err := json.Marshal(plain(m))
	if err != nil || len(m.Extra) == 0 {
		return b, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, err
	}
	for k, v := range m.Extra {
		all[k] = v
	}
	return json.Marshal(all)
}

func (m *Meta) UnmarshalJSON(data []byte) error {
	type plain Meta
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return err
	}
	*m = Meta(p)
	m.Extra = transcript.LeftoversMap(all, metaKnown)
	return nil
}

// ReadMeta reads a session's session.json as the store does (the state
// of its last commit; RewindCache takes one read earlier).
func ReadMeta(dir string) (Meta, error) { return readMeta(dir) }

func readMeta(dir string) (Meta, error) {
	path := filepath.Join(dir, MetaFile)
	data, err := readRegular(path)
	if err != nil {
		if st, serr := os.Stat(dir); serr == nil && !st.IsDir() {
			return Meta{}, &FileGivenError{Path: dir}
		}
	}
	if os.IsNotExist(err) {
		if st, serr := os.Stat(dir); serr != nil || !st.IsDir() {
			return Meta{}, &transcript.ParseError{File: dir, Msg: "no such session directory"}
		}
		return Meta{}, &NotSessionError{Dir: dir}
	}
	var pe *transcript.ParseError
	if errors.As(err, &pe) {
		return Meta{}, pe
	}
	if err != nil {
		return Meta{}, &transcript.ParseError{File: path, Msg: err.Error()}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return Meta{}, &transcript.ParseError{File: path, Line: 1, Msg: "empty file; expected a JSON object with format_version and head"}
	}
	var m Meta
	if err := json.Unmarshal(data, &m); err != nil {
		line := 1
		if se, ok := err.(*json.SyntaxError); ok {
			line += bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n"))
		}
		return Meta{}, &transcript.ParseError{File: path, Line: line, Msg: "invalid session meta: " + err.Error()}
	}
	switch {
	case m.FormatVersion == 0:
		return Meta{}, &transcript.ParseError{File: path, Line: 1, Msg: "missing format_version"}
	case m.FormatVersion > FormatVersion:
		return Meta{}, &transcript.ParseError{File: path, Line: 1, Msg: fmt.Sprintf("format_version %d is newer than this ctxfold reads (%d); upgrade ctxfold", m.FormatVersion, FormatVersion)}
	case m.FormatVersion < 0:
		return Meta{}, &transcript.ParseError{File: path, Line: 1, Msg: fmt.Sprintf("invalid format_version %d", m.FormatVersion)}
	}
	if m.NodesBytes != nil && *m.NodesBytes < 0 {
		return Meta{}, &transcript.ParseError{File: path, Line: 1, Msg: fmt.Sprintf("invalid nodes_bytes %d", *m.NodesBytes)}
	}
	return m, nil
}

// writeMeta replaces session.json atomically: temp file, fsync, rename,
// directory fsync. A crash leaves either the old or the new file.
func writeMeta(dir string, m Meta) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	return writeFileAtomic(dir, MetaFile, data)
}

// writeFileAtomic is the store's durable write. Its error is a
// *WriteError naming the file.
func writeFileAtomic(dir, name string, data []byte) error {
	path := filepath.Join(dir, name)
	if err := WriteBytesAtomic(path, AtomicOptions{Sync: true}, data); err != nil {
		if cause := errors.Unwrap(err); cause != nil {
			err = cause
		}
		return &WriteError{File: path, Op: "write", Err: err}
	}
	return nil
}

// MetaKeyLine returns the 1-based line of a top-level key in the session's
// session.json, or 0 when the key is absent or the file unreadable. Error
// messages about meta values (HEAD pointing nowhere) use it to name
// file:line.
func (s *Session) MetaKeyLine(key string) int {
	data, err := readRegular(filepath.Join(s.Dir, MetaFile))
	if err != nil {
		return 0
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return 0
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return 0
		}
		if k, _ := tok.(string); k == key {
			off := min(int(dec.InputOffset()), len(data))
			return 1 + bytes.Count(data[:off], []byte("\n"))
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return 0
		}
	}
	return 0
}

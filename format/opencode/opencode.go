// Package opencode imports OpenCode sessions, from its SQLite database
// (opencode.db: session, message and part tables, each row's JSON in a
// "data" column) or from the older file layout storage/session/<project>/
// <id>.json, storage/message/<session>/<id>.json and
// storage/part/<message>/<id>.json. Each session is one conversation.
//
// A message is its parts (OpenCode's MessageV2): text, reasoning, file and
// tool parts become the content of user and assistant nodes. An assistant
// message is one node per step (each step is one request to the model),
// its tool parts calls with their output as tool results; a tool part that
// never finished gets the error result OpenCode itself sends for it. The
// tokens of a step-finish part (or the message's tokens) are the usage of
// its step. A compaction (a user message with a "compaction" part, then
// the assistant message marked summary) becomes a summary node covering
// every turn before it. The database is opened read-only. It only reads
// and hands nodes to a transcript.ImportSink.
package opencode

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// Options tune the import.
type Options = input.Options

// sqliteMagic starts every SQLite 3 database file.
var sqliteMagic = []byte("SQLite format 3\x00")

// Detect reports whether head is OpenCode's database (a SQLite file whose
// schema, on its first page, has the message and part tables; a larger
// schema is recognised by DetectPath) or an `opencode export` document.
func Detect(head []byte) bool {
	return bytes.HasPrefix(head, sqliteMagic) && hasSchema(head) || detectExport(head)
}

func hasSchema(head []byte) bool {
	return bytes.Contains(head, []byte("message")) && bytes.Contains(head, []byte("part")) && bytes.Contains(head, []byte("session_id"))
}

// DetectPath reports whether path is an OpenCode store by its layout: a
// storage directory (session/ and message/), the data directory holding
// one or opencode.db, a session file inside storage/session/, or a SQLite
// file whose tables are OpenCode's (its schema no longer fits the first
// page Detect sees).
func DetectPath(path string) bool {
	if _, ok := storageRoot(path); ok {
		return true
	}
	if isDatabase(path) {
		return true
	}
	st, err := os.Stat(path)
	if err == nil && st.IsDir() {
		_, err := os.Stat(filepath.Join(path, "opencode.db"))
		return err == nil
	}
	return false
}

// Near explains why an input looks like OpenCode's but is not.
func Near(path string, head []byte) string {
	if bytes.HasPrefix(head, sqliteMagic) {
		return "a SQLite database, but not OpenCode's (no session, message and part tables on its first page)"
	}
	return ""
}

// storageRoot finds the storage directory path stands for.
func storageRoot(path string) (string, bool) {
	isStorage := func(dir string) bool {
		a, errA := os.Stat(filepath.Join(dir, "session"))
		b, errB := os.Stat(filepath.Join(dir, "message"))
		return errA == nil && errB == nil && a.IsDir() && b.IsDir()
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", false
	}
	if st.IsDir() {
		if isStorage(path) {
			return path, true
		}
		if s := filepath.Join(path, "storage"); isStorage(s) {
			return s, true
		}
		return "", false
	}
	// storage/session/<project>/<id>.json
	if strings.HasSuffix(path, ".json") {
		s := filepath.Dir(filepath.Dir(filepath.Dir(path)))
		if filepath.Base(filepath.Dir(filepath.Dir(path))) == "session" && isStorage(s) {
			return s, true
		}
	}
	return "", false
}

// Import reads each input: opencode.db, a storage directory (or the data
// directory above it), or one session file of the storage.
func Import(ctx context.Context, files []string, opts Options, target transcript.ImportTarget) error {
	for _, path := range files {
		st, err := os.Stat(path)
		if err != nil {
			return &transcript.ParseError{File: path, Msg: err.Error(), Err: err}
		}
		var src source
		db := filepath.Join(path, "opencode.db")
		_, dbErr := os.Stat(db)
		switch root, ok := storageRoot(path); {
		case st.IsDir() && dbErr == nil:
			// A data directory with both: OpenCode moved the storage
			// into the database, which is what it now reads and writes.
			src = &database{path: db, opts: opts}
		case ok:
			only := ""
			if !st.IsDir() {
				only = strings.TrimSuffix(filepath.Base(path), ".json")
			}
			src = &storage{root: root, only: only, opts: opts}
		case st.IsDir():
			return input.Errorf(path, 0, "neither storage/ nor opencode.db: not an OpenCode data directory")
		case isSQLite(path):
			src = &database{path: path, opts: opts}
		default:
			src = &exportFile{path: path, opts: opts}
		}
		if err := importSource(ctx, src, opts, target); err != nil {
			return err
		}
	}
	return nil
}

// source is where sessions are read from.
type source interface {
	// sessions lists the session ids in creation order.
	sessions(ctx context.Context) ([]sessionInfo, error)
	// messages returns a session's messages in order, each with its parts.
	messages(ctx context.Context, id string) ([]message, error)
	close()
}

type sessionInfo struct {
	id, title, parent string
	file              string
	// updated is the last activity (Unix ms; 0 when unknown), directory
	// the project the session ran in.
	updated   float64
	directory string
}

type message struct {
	id    string
	file  string
	line  int
	info  messageInfo
	parts []part
}

type messageInfo struct {
	ID   string `json:"id"`
	Role string `json:"role"`
	Time struct {
		Created   float64 `json:"created"`
		Completed float64 `json:"completed"`
	} `json:"time"`
	ModelID    string          `json:"modelID"`
	ProviderID string          `json:"providerID"`
	Summary    json.RawMessage `json:"summary"`
	Error      json.RawMessage `json:"error"`
	Tokens     *tokens         `json:"tokens"`
	Model      *struct {
		ModelID    string `json:"modelID"`
		ProviderID string `json:"providerID"`
	} `json:"model"`
}

type tokens struct {
	Input     int64 `json:"input"`
	Output    int64 `json:"output"`
	Reasoning int64 `json:"reasoning"`
	Cache     struct {
		Read  int64 `json:"read"`
		Write int64 `json:"write"`
	} `json:"cache"`
}

type part struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Synthetic bool            `json:"synthetic"`
	Ignored   bool            `json:"ignored"`
	CallID    string          `json:"callID"`
	Tool      string          `json:"tool"`
	Mime      string          `json:"mime"`
	Filename  string          `json:"filename"`
	URL       string          `json:"url"`
	Tokens    *tokens         `json:"tokens"`
	State     *toolState      `json:"state"`
	Auto      json.RawMessage `json:"auto"`
	// TailStartID, on a compaction part (OpenCode 1.18), is the first
	// message the compaction keeps verbatim after its summary.
	TailStartID string `json:"tail_start_id"`
	file        string
}

type toolState struct {
	Status string          `json:"status"`
	Input  json.RawMessage `json:"input"`
	Output json.RawMessage `json:"output"`
	Error  json.RawMessage `json:"error"`
	Title  string          `json:"title"`
	// Metadata holds the bash tool's exit status (exitCode).
	Metadata json.RawMessage `json:"metadata"`
	Time     struct {
		// Compacted is when OpenCode pruned the output (its
		// SessionCompaction.prune: old outputs beyond the last 40,000
		// tokens); from then on it sends prunedOutput in its place.
		Compacted json.RawMessage `json:"compacted"`
	} `json:"time"`
}

// prunedOutput is what OpenCode 1.18 sends for a pruned tool output
// (toModelMessages in its session/message-v2).
const prunedOutput = "[Old tool result content cleared]"

// pruned reports whether OpenCode pruned the output (a time it did so).
func (st *toolState) pruned() bool {
	c := bytes.TrimSpace(st.Time.Compacted)
	return len(c) > 0 && string(c) != "null" && string(c) != "0" && string(c) != "false"
}

// exitCode is the exit status a tool's metadata records (OpenCode 1.18's
// bash tool: a call whose command failed still has status completed);
// 0 when it records none.
func (st *toolState) exitCode() int {
	var m struct {
		Exit int `json:"exit"`
	}
	if json.Unmarshal(st.Metadata, &m) != nil {
		return 0
	}
	return m.Exit
}

func importSource(ctx context.Context, src source, opts Options, target transcript.ImportTarget) error {
	defer src.close()
	sessions, err := src.sessions(ctx)
	if err != nil {
		return err
	}
	if sessions, err = choose(sessions, opts); err != nil {
		return err
	}
	for _, s := range sessions {
		if err := ctx.Err(); err != nil {
			return err
		}
		msgs, err := src.messages(ctx, s.id)
		if err != nil {
			return err
		}
		if len(msgs) == 0 {
			continue
		}
		sink, err := target.Conversation(s.id)
		if err != nil {
			return err
		}
		c := &conv{sink: sink, session: s}
		if err := c.run(msgs); err != nil {
			return err
		}
		c.reportWindow(opts.Env)
	}
	return nil
}

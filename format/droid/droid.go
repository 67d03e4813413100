// Package droid imports Factory Droid sessions: the JSONL file Droid keeps
// for each session under ~/.factory/sessions/<cwd>/<session id>.jsonl
// (docs/INTEROP-droid.md). Its first record is session_start; then
// message records (an Anthropic-style message with an id and the parentId
// of the message before it), compaction_state records (Droid's own
// compaction: the summary and how many messages it removed) and
// bookkeeping (agent_turn_outcome, todo_state). Each message is one node,
// its parentId the predecessor, so a rewind's abandoned turns stay as a
// branch and HEAD is the last message written, as Droid resumes from it.
// A compaction becomes a summary node covering the messages it removed.
//
// Droid records no usage per request: the session's .settings.json beside
// the file holds running totals only, so no node carries a usage (no
// per-request figure is made up). It only reads the file and hands nodes
// to a transcript.ImportSink.
package droid

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// Options tune the import.
type Options = input.Options

// Detect reports whether head is a Droid session: its first record is
// {"type":"session_start", …} with the session's id and working directory.
func Detect(head []byte) bool {
	line, _, _ := bytes.Cut(bytes.TrimSpace(head), []byte("\n"))
	var first struct {
		Type string          `json:"type"`
		ID   string          `json:"id"`
		Cwd  json.RawMessage `json:"cwd"`
	}
	if json.Unmarshal(line, &first) != nil {
		// A head cut inside the first line: fall back to its start.
		return bytes.HasPrefix(line, []byte(`{"type":"session_start","id":"`))
	}
	return first.Type == "session_start" && first.ID != "" && first.Cwd != nil
}

// Import reads each file as one conversation. A file holds one session,
// so input.Options.SessionID and Latest have nothing to choose.
func Import(ctx context.Context, files []string, opts Options, target transcript.ImportTarget) error {
	for _, file := range files {
		if err := importFile(ctx, file, opts, target); err != nil {
			return err
		}
	}
	return nil
}

// record is one line of a session file; which fields are set depends on
// Type.
type record struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	ParentID  *string         `json:"parentId"`
	Timestamp string          `json:"timestamp"`
	Message   *message        `json:"message"`
	Tokens    json.RawMessage `json:"tokens"`
	// compaction_state (compact.go).
	SummaryText    string `json:"summaryText"`
	SummaryKind    string `json:"summaryKind"`
	RemovedCount   *int   `json:"removedCount"`
	SystemInfoText string `json:"systemInfoText"`
	AnchorMessage  *struct {
		ID string `json:"id"`
	} `json:"anchorMessage"`
	// session_start; Parent is the session a manual compaction continued
	// from (parent.go).
	Cwd    string `json:"cwd"`
	Title  string `json:"title"`
	Parent string `json:"parent"`
	// second is the type of the record after session_start (parent.go).
	second string
}

// message is a message record's message: an Anthropic-style role and
// content blocks, with Droid's own fields.
type message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Visibility string          `json:"visibility"`
	ModelID    string          `json:"modelId"`
}

// skipped are the record types that never reach the model, with why.
var skipped = map[string]string{
	"agent_turn_outcome": "turn bookkeeping (how the turn ended); not sent to the model",
	"todo_state":         "the todo list's state for the UI; the TodoWrite calls that set it are messages",
}

func importFile(ctx context.Context, file string, opts Options, target transcript.ImportTarget) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	lines := input.NewLines(f, file, opts)
	raw, err := lines.Next()
	if errors.Is(err, io.EOF) {
		return input.Errorf(file, 1, "empty file: a Factory Droid session starts with a session_start record")
	} else if err != nil {
		return err
	}
	var start record
	if err := lines.Unmarshal(raw, &start, "a session_start record"); err != nil {
		return err
	}
	if start.Type != "session_start" || start.ID == "" {
		return lines.Errorf("expected a session_start record with an id first (a Factory Droid session), got type %q", start.Type)
	}
	sink, err := target.Conversation(start.ID)
	if err != nil {
		return err
	}
	sink.Count("session_start", transcript.OutcomeMerged, "session metadata (id, title, working directory)")
	s := newSession(file, sink)
	first, err := lines.Next() // the record after session_start
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	var r record
	if len(first) > 0 {
		if err := lines.Unmarshal(first, &r, "a session record"); err != nil {
			return err
		}
		start.second = r.Type
	}
	if start.Parent != "" && compacted(start.second) {
		// A manual compaction's session: its folded turns are the
		// parent's (parent.go).
		if err := s.importParents(ctx, s.parentChain(file, start), opts); err != nil {
			return err
		}
		// Its first compaction_state folds what was found of them (none
		// when the parent is missing: skipped, the chain warned).
		s.file, s.manual = file, true
	}
	if len(first) > 0 {
		if err := s.record(r, lines); err != nil {
			return err
		}
	}
	if err := s.records(ctx, lines); err != nil {
		return err
	}
	if err := s.finish(); err != nil {
		return err
	}
	reportWindow(sink, opts.Env, s.model)
	return nil
}

// record imports one record after session_start.
func (s *session) record(r record, lines *input.Lines) error {
	switch r.Type {
	case "message":
		return s.message(r, lines)
	case "compaction_state":
		return s.compaction(r, lines)
	case "session_start":
		return lines.Errorf("a second session_start record: a file holds one Droid session")
	case "":
		return lines.Errorf(`a record without a "type"`)
	}
	reason := skipped[r.Type]
	if reason == "" {
		reason = "a record type this version does not know; Droid sends only message and compaction_state records to the model"
	}
	s.sink.Count(r.Type, transcript.OutcomeSkipped, reason)
	return nil
}

// sessionsDir is where Droid keeps its sessions: ~/.factory/sessions, under
// FACTORY_HOME_OVERRIDE instead of the home when that is set (Droid reads
// it as its home).
func sessionsDir(env input.Env) string {
	home := env.Home
	if h := env.Get("FACTORY_HOME_OVERRIDE"); h != "" {
		home = h
	}
	return filepath.Join(home, ".factory", "sessions")
}

// Near says why an input that is not a session is Droid's all the same:
// the settings file beside a session (<id>.settings.json: its model and
// token totals), which holds no message; "" otherwise.
func Near(path string, head []byte) string {
	h := bytes.TrimSpace(head)
	if len(h) == 0 || h[0] != '{' || !bytes.Contains(h, []byte(`"tokenUsage"`)) ||
		!(bytes.Contains(h, []byte(`"autonomyMode"`)) || bytes.Contains(h, []byte(`"providerLock"`)) || bytes.Contains(h, []byte(`"assistantActiveTimeMs"`))) {
		return ""
	}
	session := strings.TrimSuffix(path, ".settings.json") + ".jsonl"
	if strings.HasSuffix(path, ".settings.json") {
		if _, err := os.Stat(session); err == nil {
			return "this is Factory Droid's session settings (its model and token totals, no message); import the session beside it: " + session
		}
	}
	return "this is Factory Droid's session settings (its model and token totals, no message); import the session's <id>.jsonl beside it"
}

// Package copilot imports GitHub Copilot CLI sessions: the event log
// ~/.copilot/session-state/<session id>/events.jsonl, one JSON event a line
// ({type, data, id, timestamp, parentId}; the schema is the client's own
// session-events.schema.json). The conversation is rebuilt from the
// events that carry what the model reads — user.message (its
// transformedContent, as sent), assistant.message with its toolRequests,
// tool.execution_complete — with each session.usage_record on the
// assistant node of the same API call, the client's system prompt as the
// root system node, and each applied compaction (session.compaction_start
// … session.compaction_complete) as a summary node covering what the client
// replaced (docs/INTEROP-copilot.md). A sub-agent's events (agentId) are
// a chain of their own under the node whose task call started it. Every
// other event is counted. It
// only reads the file and hands nodes to a transcript.ImportSink; Find
// lists the sessions under COPILOT_HOME (default ~/.copilot).
package copilot

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

// Title is the client's name for messages.
const Title = "GitHub Copilot CLI"

// Detect reports whether head is a Copilot CLI event log: its first event
// is an object with the event envelope (type, data, id, parentId) whose
// type is one of the client's, session.start naming its producer.
func Detect(head []byte) bool {
	line := head
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return false
	}
	has := func(s string) bool { return bytes.Contains(line, []byte(s)) }
	if !has(`"parentId":`) || !has(`"data":`) {
		return false
	}
	if has(`"type":"session.start"`) {
		return has(`"copilotVersion"`) || has(`"producer":"copilot-agent"`)
	}
	// A log whose start was cut off (or a part of one) still begins with
	// an event of the client's envelope.
	var env struct {
		Type     string          `json:"type"`
		ID       string          `json:"id"`
		Data     json.RawMessage `json:"data"`
		ParentID *string         `json:"parentId"`
	}
	if json.Unmarshal(line, &env) != nil || env.ID == "" || len(env.Data) == 0 || env.Data[0] != '{' {
		return false
	}
	prefix, _, ok := strings.Cut(env.Type, ".")
	return ok && knownPrefixes[prefix]
}

// knownPrefixes are the namespaces of the client's event types.
var knownPrefixes = map[string]bool{"session": true, "user": true, "assistant": true, "tool": true, "system": true}

// DetectPath recognises a session's folder, session-state/<id>/, by the
// event log in it.
func DetectPath(path string) bool {
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		return false
	}
	file := filepath.Join(path, "events.jsonl")
	if fi, err := os.Lstat(file); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	head, _, _, err := input.Peek(file, 64<<10)
	return err == nil && Detect(head)
}

// Import reads each file (or session folder: its events.jsonl) as one
// conversation, named by its session id.
func Import(ctx context.Context, files []string, opts input.Options, target transcript.ImportTarget) error {
	for _, file := range files {
		if st, err := os.Stat(file); err == nil && st.IsDir() {
			log := filepath.Join(file, "events.jsonl")
			if fi, err := os.Lstat(log); err != nil || !fi.Mode().IsRegular() {
				return input.Errorf(file, 0, "a folder without a Copilot CLI events.jsonl (session-state/<id>/events.jsonl)")
			}
			file = log
		}
		if err := importFile(ctx, file, opts, target); err != nil {
			return err
		}
	}
	return nil
}

func importFile(ctx context.Context, file string, opts input.Options, target transcript.ImportTarget) error {
	systems, err := lastSystems(file, opts)
	if err != nil {
		return err
	}
	f, err := os.Open(file)
	if err != nil {
		return &transcript.ParseError{File: file, Msg: err.Error(), Err: err}
	}
	defer f.Close()
	name := filepath.Base(filepath.Dir(file))
	st := newState(file, systems)
	lines := input.NewLines(f, file, opts)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, err := lines.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		var ev event
		if err := lines.Unmarshal(line, &ev, "a Copilot CLI event {type, data, id, parentId}"); err != nil {
			if lines.Unterminated && st.sink != nil {
				// A last line the client is still writing.
				st.warn(lines.Line, "the last line is incomplete (the client may still be writing it); left out")
				break
			}
			return err
		}
		if ev.Type == "" || ev.ID == "" {
			return lines.Errorf(`expected a Copilot CLI event: "type" and "id" must be non-empty strings`)
		}
		if st.sink == nil {
			if ev.Type == "session.start" {
				var d struct {
					SessionID string `json:"sessionId"`
				}
				json.Unmarshal(ev.Data, &d)
				if d.SessionID != "" {
					name = d.SessionID
				}
			}
			if st.sink, err = target.Conversation(name); err != nil {
				return err
			}
		}
		if err := st.event(lines.Line, &ev); err != nil {
			return err
		}
	}
	if st.sink == nil {
		return input.Errorf(file, 0, "no Copilot CLI events in the file")
	}
	return st.finish()
}

// lastSystems are the system prompts each conversation of the log had
// last, by agent id ("" the session's): the content of its last
// system.message, what its next request sends, which its root system node
// holds. A first pass reads only those lines.
func lastSystems(file string, opts input.Options) (map[string]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, &transcript.ParseError{File: file, Msg: err.Error(), Err: err}
	}
	defer f.Close()
	lines := input.NewLines(f, file, opts)
	out := map[string]string{}
	for {
		line, err := lines.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if !bytes.Contains(line, []byte(`"system.message"`)) {
			continue
		}
		var ev event
		if json.Unmarshal(line, &ev) != nil || ev.Type != "system.message" {
			continue // the second pass reports it
		}
		var d struct {
			Content string `json:"content"`
		}
		if json.Unmarshal(ev.Data, &d) == nil && d.Content != "" {
			out[ev.AgentID] = d.Content
		}
	}
}

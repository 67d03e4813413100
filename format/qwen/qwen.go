// Package qwen imports Qwen Code chat recordings:
// ~/.qwen/projects/<project>/chats/<session id>.jsonl, one record a line,
// linked by uuid/parentUuid into a tree (a rewind re-roots the next record
// on an earlier one, leaving a dead branch). Records of type user,
// assistant and tool_result carry a Gemini API content ({role, parts}) as
// message; system records carry the client's bookkeeping, of which only
// chat_compression changes what the model reads: its compressedHistory is
// the whole history the client sends from then on (docs/INTEROP-qwen.md).
// A session's sub-agents write the same records to
// <project>/subagents/<session id>/agent-*.jsonl, imported with it as
// caller subtrees. It only reads the files and hands nodes to a
// transcript.ImportSink.
package qwen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// Options tune the import.
type Options = input.Options

// detectLines is how many of the first lines Detect looks at.
const detectLines = 50

// Detect reports whether head is a Qwen Code recording: a record with
// "uuid", "parentUuid" and "sessionId" whose message is a Gemini content
// (it has "parts") or that carries a "systemPayload". Claude Code's
// records also have uuid and parentUuid, but their message has "content"
// and they never carry systemPayload; Gemini CLI's have neither uuid nor
// parentUuid.
func Detect(head []byte) bool {
	lines := bytes.Split(head, []byte("\n"))
	if len(lines) == 1 && !json.Valid(bytes.TrimSpace(head)) {
		// A first line longer than head: Qwen Code writes uuid first.
		h := bytes.TrimSpace(head)
		return bytes.HasPrefix(h, []byte(`{"uuid":`)) && bytes.Contains(h, []byte(`"parentUuid":`)) &&
			bytes.Contains(h, []byte(`"sessionId":`)) && (bytes.Contains(h, []byte(`"parts":`)) || bytes.Contains(h, []byte(`"systemPayload":`)))
	}
	for i, line := range lines {
		if i >= detectLines {
			break
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var r struct {
			UUID       *string         `json:"uuid"`
			ParentUUID json.RawMessage `json:"parentUuid"`
			SessionID  *string         `json:"sessionId"`
			Message    *struct {
				Parts json.RawMessage `json:"parts"`
			} `json:"message"`
			SystemPayload json.RawMessage `json:"systemPayload"`
		}
		if json.Unmarshal(line, &r) != nil {
			continue // a line cut by the end of head
		}
		if r.UUID == nil || r.ParentUUID == nil || r.SessionID == nil {
			continue
		}
		if (r.Message != nil && len(r.Message.Parts) > 0) || len(r.SystemPayload) > 0 {
			return true
		}
	}
	return false
}

// record is one line of a chat recording.
type record struct {
	UUID       string  `json:"uuid"`
	ParentUUID *string `json:"parentUuid"`
	SessionID  string  `json:"sessionId"`
	AgentID    string  `json:"agentId"`
	Timestamp  string  `json:"timestamp"`
	Type       string  `json:"type"`
	Subtype    string  `json:"subtype"`
	Model      string  `json:"model"`
	Message    *struct {
		Role  string `json:"role"`
		Parts []part `json:"parts"`
	} `json:"message"`
	UsageMetadata *usageMetadata `json:"usageMetadata"`
	// ContextWindowSize, on an assistant record (Qwen Code 0.24), is the
	// window the client measured the request against: its
	// model.generationConfig.contextWindowSize setting, else its own
	// table's limit for the model.
	ContextWindowSize int64           `json:"contextWindowSize"`
	SystemPayload     json.RawMessage `json:"systemPayload"`
	ToolCallResult    *struct {
		Status string `json:"status"`
	} `json:"toolCallResult"`
}

// usageMetadata is the usage the client recorded for the request an
// assistant record answers (Gemini's field names, whatever the provider).
type usageMetadata struct {
	PromptTokenCount        *int64 `json:"promptTokenCount"`
	CandidatesTokenCount    int64  `json:"candidatesTokenCount"`
	ThoughtsTokenCount      int64  `json:"thoughtsTokenCount"`
	TotalTokenCount         int64  `json:"totalTokenCount"`
	CachedContentTokenCount int64  `json:"cachedContentTokenCount"`
}

// part is one Gemini content part.
type part struct {
	Text         *string `json:"text"`
	Thought      bool    `json:"thought"`
	FunctionCall *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
	InlineData *struct {
		MimeType string `json:"mimeType"`
		Data     string `json:"data"`
	} `json:"inlineData"`
	FileData *struct {
		MimeType string `json:"mimeType"`
		FileURI  string `json:"fileUri"`
	} `json:"fileData"`
}

// Import reads each file as one conversation, named after its session
// id, with its sub-agents' transcripts (subagents/<session id>/agent-*.jsonl
// in its project folder) as caller subtrees. A sub-agent's transcript given
// on its own, whose session is not among files, is a conversation of its
// own.
func Import(ctx context.Context, files []string, opts Options, target transcript.ImportTarget) error {
	attached := map[string]bool{}
	var later []string
	for _, file := range files {
		if isSubagent(file, opts) {
			later = append(later, file)
			continue
		}
		im, err := importFile(ctx, file, opts, target, nil)
		if err != nil {
			return err
		}
		if err := im.subagents(ctx, opts, attached); err != nil {
			return err
		}
	}
	for _, file := range later {
		if attached[cleanPath(file)] {
			continue
		}
		if _, err := importFile(ctx, file, opts, target, nil); err != nil {
			return err
		}
	}
	return nil
}

// importFile reads one file into a conversation of its own (parent nil)
// or, for a sub-agent's transcript, into parent's.
func importFile(ctx context.Context, file string, opts Options, target transcript.ImportTarget, parent *importer) (*importer, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, &transcript.ParseError{File: file, Msg: err.Error(), Err: err}
	}
	defer f.Close()
	lines := input.NewLines(f, file, opts)
	var im *importer
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		line, err := lines.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		var r record
		if im != nil && lines.Unterminated && !json.Valid(line) {
			// A client still writing: keep everything before its last line.
			im.sink.Warn(file, lines.Line, "torn last line ignored (the file ends without a newline)")
			im.sink.Count("torn line", transcript.OutcomeSkipped, "incomplete last line (the file ends without a newline)")
			break
		}
		if err := lines.Unmarshal(line, &r, "a Qwen Code record (an object with uuid, parentUuid, type)"); err != nil {
			return nil, err
		}
		if r.UUID == "" || strings.ContainsFunc(r.UUID, unicode.IsControl) {
			return nil, lines.Errorf(`record has no usable "uuid" (%q): expected a Qwen Code record with an id on one line`, r.UUID)
		}
		if im == nil {
			if im, err = open(file, &r, target, parent); err != nil {
				return nil, err
			}
		}
		if err := im.add(&r, lines.Line); err != nil {
			return nil, err
		}
	}
	if im == nil {
		return nil, input.Errorf(file, 0, "no records: expected a Qwen Code chat recording (JSONL records with uuid, parentUuid, type)")
	}
	im.finish()
	return im, nil
}

// open starts the importer of file at its first record: a conversation
// named after the session (or the sub-agent, or the file), or, with a
// parent, the parent's conversation.
func open(file string, r *record, target transcript.ImportTarget, parent *importer) (*importer, error) {
	if parent != nil {
		return parent.child(file), nil
	}
	name := r.SessionID
	if r.AgentID != "" || name == "" {
		name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	sink, err := target.Conversation(name)
	if err != nil {
		return nil, err
	}
	im := newImporter(sink, file)
	im.session = r.SessionID
	return im, nil
}

// Package pi imports the session files of pi, the coding agent
// (@mariozechner/pi-coding-agent; docs/INTEROP-pi.md):
// ~/.pi/agent/sessions/--<cwd>--/<timestamp>_<uuid>.jsonl, a header line
// ({"type":"session","version":3,"id","cwd"}) then entries linked by
// id/parentId into a tree. Every branch of the tree is a DAG branch and
// pi's leaf (the last entry appended) is HEAD; messages become the nodes
// pi sends (user, assistant with its thinking, tool calls and the usage of
// its request, tool results, bash runs, extension messages, branch
// summaries); a compaction entry becomes a summary node covering the nodes
// before its firstKeptEntryId (docs/FORMAT.md §4), so render after it is
// what pi sends. Version 1 files (no ids) are read as pi migrates them: a
// chain in file order. It only reads the files and hands nodes to a
// transcript.ImportSink; Decoder is the same fold for entries read from
// elsewhere (OpenClaw keeps pi's entries in SQLite).
package pi

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

// Detect reports whether head starts with a pi session header:
// {"type":"session", "id", "timestamp", "cwd"} (with "version" from 2 on).
func Detect(head []byte) bool {
	line, _, _ := bytes.Cut(bytes.TrimSpace(head), []byte("\n"))
	if !bytes.HasPrefix(line, []byte("{")) || !bytes.Contains(line, []byte(`"session"`)) {
		return false
	}
	var h struct {
		Type      string  `json:"type"`
		ID        *string `json:"id"`
		Timestamp *string `json:"timestamp"`
		Cwd       *string `json:"cwd"`
	}
	return json.Unmarshal(line, &h) == nil && h.Type == "session" && h.ID != nil && h.Timestamp != nil && h.Cwd != nil
}

// Import reads each file as one conversation, named by the header's id.
func Import(ctx context.Context, files []string, opts input.Options, target transcript.ImportTarget) error {
	for _, file := range files {
		if err := importFile(ctx, file, opts, target); err != nil {
			return err
		}
	}
	return nil
}

func importFile(ctx context.Context, file string, opts input.Options, target transcript.ImportTarget) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	lines := input.NewLines(f, file, opts)
	first, err := lines.Next()
	if errors.Is(err, io.EOF) {
		return input.Errorf(file, 1, "an empty file: expected a pi session header")
	}
	if err != nil {
		return err
	}
	if !Detect(first) {
		return input.Errorf(file, lines.Line, `expected a pi session header {"type":"session","id",…,"cwd"}`)
	}
	var h struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(first, &h)
	name := h.ID
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	sink, err := target.Conversation(name)
	if err != nil {
		return err
	}
	d := NewDecoder(sink, file)
	if err := d.Entry(first, lines.Line); err != nil {
		return err
	}
	for {
		if lines.Line%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		line, err := lines.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if lines.Unterminated && !json.Valid(line) {
			// pi is writing this line: it is not yet part of the session.
			sink.Warn(file, lines.Line, "a torn last line (pi is still writing it): not read")
			sink.Count("torn line", transcript.OutcomeSkipped, "the last line is incomplete: pi is still writing it")
			break
		}
		if err := d.Entry(line, lines.Line); err != nil {
			return err
		}
	}
	if err := d.Close(); err != nil {
		return err
	}
	reportWindow(sink, opts.Env, d)
	return nil
}

// Near explains why a file whose first line is a {"type":"session"} record
// is not a pi session: the header pi writes names id, timestamp and cwd.
func Near(_ string, head []byte) string {
	line, _, _ := bytes.Cut(bytes.TrimSpace(head), []byte("\n"))
	var h map[string]json.RawMessage
	if json.Unmarshal(line, &h) != nil || string(h["type"]) != `"session"` {
		return ""
	}
	var missing []string
	for _, k := range []string{"id", "timestamp", "cwd"} {
		if _, ok := h[k]; !ok {
			missing = append(missing, `"`+k+`"`)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return "a {\"type\":\"session\"} header like pi's, but without " + strings.Join(missing, ", ") + " (pi's header names id, timestamp and cwd)"
}

// Package gemini imports Gemini CLI chat recordings: the JSONL form (a
// metadata line, then message records where a repeated id replaces the
// earlier record, {"$set": …} patches and {"$rewindTo": id} truncations),
// with the sub-agent files under chats/<session id>/, the legacy
// single-JSON ConversationRecord ({…, "messages": […]}) and /chat save
// checkpoints (checkpoint-<tag>.json: {history: Content[]} or the array). The
// records are folded the way Gemini CLI replays them; what a rewind removed
// is kept as a branch (off HEAD's spine, so render shows what the model
// saw). It only reads the files and hands nodes to a transcript.ImportSink.
package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// Options tune the import.
type Options = input.Options

// Detect reports whether head is a Gemini CLI recording (its metadata
// names a sessionId with a projectHash or startTime) or a /chat save
// checkpoint: {"history": [{"role", "parts"}…]} or the bare array of
// contents (a ChatGPT export also has "parts", under "mapping"). A GitHub
// Copilot CLI event log is not one, though its first event names a
// sessionId and a startTime.
func Detect(head []byte) bool {
	h := bytes.TrimSpace(head)
	if len(h) == 0 {
		return false
	}
	has := func(s string) bool { return bytes.Contains(h, []byte(s)) }
	contents := has(`"role"`) && has(`"parts"`) && !has(`"mapping"`)
	switch h[0] {
	case '[':
		return contents
	case '{':
		// A GitHub Copilot CLI event log starts with a session.start event
		// whose data names a sessionId and a startTime too: never Gemini's.
		if has(`"type":"session.start"`) || has(`"producer":"copilot-agent"`) {
			return false
		}
		return has(`"sessionId"`) && (has(`"projectHash"`) || has(`"startTime"`)) ||
			has(`"history"`) && contents
	}
	return false
}

// Import reads each file as one conversation, with its sub-agents' files
// (chats/<session id>/*.jsonl beside it) as caller subtrees. A sub-agent
// file given on its own, whose session is not among files, is a
// conversation of its own.
func Import(ctx context.Context, files []string, opts Options, target transcript.ImportTarget) error {
	attached := map[string]bool{}
	var later []string
	for _, file := range files {
		if peekKind(file, opts) == "subagent" {
			later = append(later, file)
			continue
		}
		if err := importFile(ctx, file, opts, target, attached); err != nil {
			return err
		}
	}
	for _, file := range later {
		if attached[cleanPath(file)] {
			continue
		}
		if err := importFile(ctx, file, opts, target, attached); err != nil {
			return err
		}
	}
	return nil
}

// peekKind is the "kind" of a file's first record ("main", "subagent", or
// "" when there is none or it cannot be read: the import says why).
func peekKind(file string, opts Options) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	first, err := input.NewLines(f, file, opts).Next()
	if err != nil {
		return ""
	}
	var h struct{ Kind string }
	json.Unmarshal(first, &h)
	return h.Kind
}

func cleanPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return filepath.Clean(p)
}

// subagentFiles are the sub-agent transcripts Gemini CLI writes for a
// session: chats/<session id>/*.jsonl next to the session file. Only
// regular files count (a symlink could point anywhere), and only an id
// that is a plain file name.
func subagentFiles(file, session string) []string {
	if session == "" || session == "." || session == ".." || strings.ContainsAny(session, `/\`) {
		return nil
	}
	dir := filepath.Join(filepath.Dir(file), session)
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
		return nil
	}
	found, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	sort.Strings(found)
	var out []string
	for _, p := range found {
		if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() {
			out = append(out, p)
		}
	}
	return out
}

// message is one folded message record.
type message struct {
	key  string // node id of the message's first node
	id   string // the client's message id
	raw  json.RawMessage
	line int
	// pred is the index of the message before it (-1 for the first).
	pred    int
	rewound bool
	// covers marks the summary of the client's compression: the messages
	// it compressed (compress.go); ack marks the model's acknowledgement
	// the client sends after it, which the summary node carries.
	covers []int
	ack    bool
}

type fold struct {
	file string
	sink transcript.ImportSink
	// sub marks a sub-agent's file: its nodes carry caller and never set
	// HEAD or the model.
	sub    bool
	caller string
	// inSubtree marks a sub-agent's file at fold time: its nodes will
	// carry a caller, and a summary node may not.
	inSubtree bool
	// agents maps a sub-agent's session id (toolCalls[].agentId) to the
	// node whose call started it.
	agents  map[string]string
	msgs    []*message
	path    []int
	byID    map[string]int
	used    map[string]int
	session string
	// cut holds the messages the last message list left out, until the
	// next message record: on a resume Gemini CLI writes the list without
	// them, then again with them (what it sends), and only a cut that
	// stays is a branch.
	cut []int
}

// settle makes the last list's cut final: those messages stay as a branch.
func (fo *fold) settle(count func(string, string, string)) {
	if len(fo.cut) == 0 {
		return
	}
	for _, j := range fo.cut {
		fo.msgs[j].rewound = true
	}
	fo.cut = nil
	count("$set", transcript.OutcomeMerged, "the client rewrote its message list: the messages it replaced stay as a branch, its new list continues from the last common one")
}

func importFile(ctx context.Context, file string, opts Options, target transcript.ImportTarget, attached map[string]bool) error {
	fo, counts, err := read(ctx, file, opts, map[string]int{}, false)
	if err != nil {
		return err
	}
	name := fo.session
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	sink, err := target.Conversation(name)
	if err != nil {
		return err
	}
	fo.sink = sink
	flush(sink, counts)
	if err := fo.emit(); err != nil {
		return err
	}
	for _, sub := range subagentFiles(file, fo.session) {
		sf, counts, err := read(ctx, sub, opts, fo.used, true)
		if err != nil {
			return err
		}
		attached[cleanPath(sub)] = true
		sf.sink, sf.sub, sf.caller = sink, true, fo.agents[sf.session]
		flush(sink, counts)
		if sf.caller == "" {
			sink.Warn(sub, 1, fmt.Sprintf("sub-agent %q: no call in the session names it (toolCalls[].agentId); imported as a root of its own", sf.session))
		}
		sink.Count("subagent file", transcript.OutcomeImported, "")
		if err := sf.emit(); err != nil {
			return err
		}
	}
	return nil
}

func flush(sink transcript.ImportSink, counts map[[3]string]int) {
	keys := make([][3]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		return a[0]+"\x00"+a[1]+"\x00"+a[2] < b[0]+"\x00"+b[1]+"\x00"+b[2]
	})
	for _, k := range keys {
		for i := 0; i < counts[k]; i++ {
			sink.Count(k[0], k[1], k[2])
		}
	}
}

// conversation is what of a message reaches the model, in a canonical
// form: its type, text and media, function calls (from the content or from
// toolCalls: a rewritten history moves them into the content) and function
// responses. Timestamps, token counts, display fields and toolCalls'
// results (recorded again as the next user message) are left out.
func conversation(raw json.RawMessage) string {
	var r record
	if json.Unmarshal(raw, &r) != nil {
		return string(raw)
	}
	ps := parseParts(r.Content, r.Parts)
	type call struct {
		ID, Name string
		Args     any
	}
	var calls []call
	seen := map[string]bool{}
	addCall := func(id, name string, args json.RawMessage) {
		if seen[id+"\x00"+name] {
			return
		}
		seen[id+"\x00"+name] = true
		var a any
		json.Unmarshal(args, &a)
		calls = append(calls, call{id, name, a})
	}
	var responses []any
	answered := map[string]bool{}
	for _, p := range ps {
		if fc := p.FunctionCall; fc != nil {
			addCall(fc.ID, fc.Name, fc.Args)
		}
		if fr := p.FunctionResponse; fr != nil && (fr.ID == "" || !answered[fr.ID]) {
			// A result repeated in one message (a resumed call's two
			// results, merged by the CLI's compression) is one result.
			answered[fr.ID] = true
			var v any
			json.Unmarshal(fr.Response, &v)
			responses = append(responses, []any{fr.ID, fr.Name, v})
		}
	}
	for _, tc := range r.ToolCalls {
		addCall(tc.ID, tc.Name, tc.Args)
	}
	c := partsContent(ps)
	if ps == nil {
		c = content(r.Content, r.Parts)
	}
	if (!c.IsBlocks && c.Text == "") || (c.IsBlocks && len(c.Blocks) == 0) {
		c = transcript.Content{}
	}
	out, _ := json.Marshal([]any{r.Type, c, calls, responses})
	return string(out)
}

// isCheckpoint reports whether a one-line file is a /chat save checkpoint:
// an array of contents, or an object with "history" and no "sessionId".
func isCheckpoint(line []byte) bool {
	h := bytes.TrimSpace(line)
	if len(h) == 0 {
		return false
	}
	if h[0] == '[' {
		return true
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(h, &obj) != nil {
		return false
	}
	_, hist := obj["history"]
	_, sess := obj["sessionId"]
	return hist && !sess
}

// checkpoint reads a /chat save checkpoint's history: Gemini API contents
// ({role, parts}), written by Gemini CLI as it sent them. Each content is
// one message of the chain (ids "<n>", the file's order), read by the same
// rules as a recording's messages.
func (fo *fold) checkpoint(d *input.Doc, count func(string, string, string)) error {
	answered := map[string]bool{}
	return d.Each("Gemini contents {role, parts}", func(i int) error {
		var c struct {
			Role  string          `json:"role"`
			Parts json.RawMessage `json:"parts"`
		}
		if err := d.Value(&c, "a content {role, parts}"); err != nil {
			return err
		}
		typ := map[string]string{"user": "user", "model": "gemini"}[c.Role]
		if typ == "" {
			return d.Errorf(`content %d: "role" must be "user" or "model", got %q`, i+1, c.Role)
		}
		if len(c.Parts) == 0 {
			c.Parts = json.RawMessage("[]")
		}
		// A checkpoint saved in a resumed session holds each earlier
		// result twice, as the CLI sends it (docs/INTEROP-gemini-cli.md):
		// a call has one tool node.
		var parts []json.RawMessage
		if json.Unmarshal(c.Parts, &parts) == nil {
			kept := parts[:0]
			for _, raw := range parts {
				var p part
				json.Unmarshal(raw, &p)
				if fr := p.FunctionResponse; fr != nil && fr.ID != "" {
					if answered[fr.ID] {
						count("checkpoint functionResponse", transcript.OutcomeMerged, "a function result the client repeats after a resume: the call's one tool node holds it")
						continue
					}
					answered[fr.ID] = true
				}
				kept = append(kept, raw)
			}
			c.Parts, _ = json.Marshal(kept)
		}
		id := fmt.Sprintf("c%d", i+1)
		fo.add(id, map[string]json.RawMessage{"id": input.Raw(id), "type": input.Raw(typ), "content": c.Parts}, d.Line())
		return nil
	})
}

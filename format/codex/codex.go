// Package codex imports Codex CLI rollout files (rollout-*.jsonl): one
// conversation per file, a linear chain in file order. session_meta's
// base_instructions (0.1xx) become the first node, a system node, as Codex
// sends them first; developer messages are system nodes too. Each model
// request becomes one assistant node (its reasoning summaries as thinking
// blocks, its messages as text, its function and custom tool calls as tool
// calls, its encrypted reasoning kept opaque in metadata) followed by one
// tool node per output; token_usage_record's usage (0.1xx), else
// token_count's last_token_usage, becomes the usage of that assistant node,
// with the recorded model_context_window beside it (the usage of a
// compaction Codex runs itself goes to metadata instead, compact.go);
// event_msg records that
// mirror response items are counted, not imported twice; a compacted record
// becomes a summary node covering every turn before it but the base
// instructions (docs/FORMAT.md §4). It only reads the files and hands nodes
// to a transcript.ImportSink. Nothing the model reads is skipped: the
// interop tests (interop/codex) compare render with the requests Codex sent.
package codex

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// Options tune the import.
type Options = input.Options

// Detect reports whether head (the first bytes of a file) is a rollout:
// its first line is a {timestamp, type, payload} record of a known type.
func Detect(head []byte) bool {
	line, _, _ := bytes.Cut(bytes.TrimSpace(head), []byte("\n"))
	if !bytes.HasPrefix(line, []byte("{")) {
		return false
	}
	var bare struct {
		ID           *string         `json:"id"`
		Timestamp    *string         `json:"timestamp"`
		Instructions json.RawMessage `json:"instructions"`
		Type         *string         `json:"type"`
	}
	if json.Unmarshal(line, &bare) == nil && bare.ID != nil && bare.Timestamp != nil && bare.Instructions != nil && bare.Type == nil {
		return true // the 2025 bare format's header
	}
	if len(line) == len(bytes.TrimSpace(head)) && bytes.HasPrefix(line, []byte(`{"id":`)) && bytes.Contains(line, []byte(`"instructions":`)) {
		return true // the same header, cut by the end of head (long instructions)
	}
	if !bytes.Contains(line, []byte(`"payload"`)) {
		return false
	}
	for _, t := range []string{"session_meta", "response_item", "event_msg", "turn_context", "compacted", "world_state"} {
		if bytes.Contains(line, []byte(`"type":"`+t+`"`)) || bytes.Contains(line, []byte(`"type": "`+t+`"`)) {
			return true
		}
	}
	return false
}

// Import reads each rollout file as one conversation.
// A fork is imported into its parent's conversation when both are given
// (fork.go).
func Import(ctx context.Context, files []string, opts Options, target transcript.ImportTarget) error {
	threads := map[string]*thread{}
	for _, h := range order(files) {
		if err := importFile(ctx, h, opts, target, threads); err != nil {
			return err
		}
	}
	return nil
}

type record struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
	// Ordinal numbers the records of a thread (0.1xx); a fork names the
	// ordinal where its copy of the parent's history ends.
	Ordinal *int64 `json:"ordinal"`
	// RecordType marks Codex's bookkeeping lines ({"record_type":"state"}).
	RecordType string `json:"record_type"`
	// ID is set on the header line of the 2025 bare format.
	ID string `json:"id"`
}

// envelope lists the record types of the {timestamp, type, payload} format;
// a line with another type and no payload is a bare item of the 2025
// format (header {"id","timestamp","instructions"}, then items as lines).
var envelope = map[string]bool{"session_meta": true, "response_item": true, "event_msg": true, "turn_context": true, "compacted": true,
	"world_state": true, "token_usage_record": true}

type item struct {
	Type             string          `json:"type"`
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	Summary          []part          `json:"summary"`
	EncryptedContent *string         `json:"encrypted_content"`
	Name             string          `json:"name"`
	Arguments        json.RawMessage `json:"arguments"`
	Input            json.RawMessage `json:"input"`
	Action           json.RawMessage `json:"action"`
	CallID           string          `json:"call_id"`
	ID               string          `json:"id"`
	Output           json.RawMessage `json:"output"`
	Phase            string          `json:"phase"`
	Namespace        string          `json:"namespace"`
}

type part struct {
	Type     string          `json:"type"`
	Text     string          `json:"text"`
	ImageURL json.RawMessage `json:"image_url"`
}

type event struct {
	Type string     `json:"type"`
	Info *eventInfo `json:"info"`
}

type eventInfo struct {
	Total json.RawMessage `json:"total_token_usage"`
	Last  *tokenUsage     `json:"last_token_usage"`
	// Window is the context window Codex measured this request against
	// (0.1xx): the transcript's word beats the model table.
	Window int64 `json:"model_context_window"`
}

type tokenUsage struct {
	Input     int64 `json:"input_tokens"`
	Cached    int64 `json:"cached_input_tokens"`
	Output    int64 `json:"output_tokens"`
	Reasoning int64 `json:"reasoning_output_tokens"`
	Total     int64 `json:"total_tokens"`
}

// group is one model request: the assistant node and what answers it,
// held until the next request starts so unanswered calls can be flagged
// and every tool output placed right after its call.
type group struct {
	assistant *transcript.Node
	// open is true while output items of the request are still arriving
	// (no input item since the last one).
	open    bool
	calls   map[string]string // call id → tool name
	answer  map[string]bool
	results []transcript.Node
	after   []transcript.Node
	// reordered: inputs that arrived before an output and now follow it.
	reordered int
}

type state struct {
	sink   transcript.ImportSink
	file   string
	lines  *input.Lines
	prefix string
	// prev is the chain's tail; real lists every non-summary node emitted,
	// in chain order (what a compaction covers).
	prev string
	real []string
	// base is the id of the node holding session_meta.base_instructions
	// (the first developer message Codex 0.1xx sends); a compaction keeps
	// it in front, as Codex does.
	base string
	// byRecord is set once a token_usage_record (0.1xx) was seen: it names
	// its response and follows that response's output items, so it, not
	// token_count, gives each request its usage. window is the last
	// model_context_window a token_count reported.
	byRecord bool
	window   int64
	// ordinal is the current record's (-1: none); ordinals remembers it
	// per node id and emitted lists the nodes in chain order, for forks.
	ordinal  int64
	ordinals map[string]int64
	emitted  []emitted
	// caller is the spawning node of a sub-agent's thread (every node of
	// it names it); spawned maps the sub-agents this thread spawned to the
	// assistant node whose call did.
	caller  string
	spawned map[string]string
	g       *group
	pending *transcript.Usage
	total   string
	meta    json.RawMessage
	model   string
	// deferErr is a sink error met while starting a request.
	deferErr error
	// reordered counts inputs placed after tool outputs recorded later;
	// reorderedAt names the first requests where it happened.
	reordered   int
	reorderedAt []string
	// torn: the file ended in a torn line; unterminated: the last line
	// read had no newline; readOff and readLine: where it ends and its
	// number (next).
	torn, unterminated bool
	readOff            int64
	readLine           int
}

func importFile(ctx context.Context, h head, opts Options, target transcript.ImportTarget, threads map[string]*thread) error {
	file := h.file
	f, err := os.Open(file)
	if err != nil {
		return &transcript.ParseError{File: file, Msg: err.Error()}
	}
	defer f.Close()
	st := &state{file: file, lines: input.NewLines(f, file, opts)}
	first, err := st.lines.Next()
	if err == io.EOF {
		return input.Errorf(file, 1, "empty file; expected a Codex rollout")
	}
	if err != nil {
		return err
	}
	var rec record
	if err := st.decode(first, &rec); err != nil {
		return err
	}
	name := threadName(file, rec)
	st.prefix = idPrefix(name)
	if st.sink, err = st.openSink(h, name, target, threads); err != nil {
		return err
	}
	if err := st.readRecords(ctx, first, rec); err != nil {
		return err
	}
	if err := st.flush(); err != nil {
		return err
	}
	st.finish(h, threads)
	return nil
}

// threadName names the conversation: the session_meta id, else the file's
// base name.
func threadName(file string, rec record) string {
	name := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	if rec.Type == "session_meta" {
		var m struct {
			ID string `json:"id"`
		}
		_ = input.Unmarshal(rec.Payload, &m)
		if m.ID != "" {
			name = m.ID
		}
	}
	return name
}

// openSink returns where the thread's nodes go: a sub-agent's chain or a
// fork's continuation in its parent's conversation when the parent's
// rollout was imported first, else a conversation of its own.
func (st *state) openSink(h head, name string, target transcript.ImportTarget, threads map[string]*thread) (transcript.ImportSink, error) {
	file := st.file
	var sink transcript.ImportSink
	if parent := threads[h.parent]; parent != nil && h.subagent {
		if caller := parent.spawned[h.id]; caller != "" {
			sink, st.caller, st.model = parent.sink, caller, parent.model
			sink.Count("session_meta/parent_thread_id", transcript.OutcomeMerged, "sub-agent: a chain of the parent's session, called by the node that spawned it")
		}
	} else if parent != nil {
		tail, real, ok := parent.forkPoint(h.end)
		if ok {
			sink, st.prev, st.real, st.base, st.model = parent.sink, tail, real, parent.base, parent.model
			// A fork of this fork may branch inside the inherited history.
			st.emitted = append([]emitted(nil), parent.emitted[:len(real)]...)
			st.meta = json.RawMessage("{}") // the parent's first node holds it
			sink.Count("session_meta/history_base", transcript.OutcomeMerged, "fork: continues its parent's conversation after node "+tail)
		}
	}
	if sink == nil {
		var err error
		if sink, err = target.Conversation(name); err != nil {
			return nil, err
		}
		switch {
		case h.parent != "" && h.subagent:
			sink.Warn(file, 1, fmt.Sprintf("sub-agent of thread %s, whose rollout (with the spawning call) is not among the files: imported as a conversation of its own", h.parent))
		case h.parent != "":
			sink.Warn(file, 1, fmt.Sprintf("forked from thread %s, whose rollout is not among the files: the history before the fork is not imported", h.parent))
		}
	}
	return sink, nil
}

// readRecords handles the first record (already decoded into rec; with
// first nil, the next line is read first) and every later line of the
// file.
func (st *state) readRecords(ctx context.Context, first []byte, rec record) error {
	if first == nil {
		if ok, err := st.next(&rec); err != nil || !ok {
			return err
		}
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		st.ordinal = -1
		if rec.Ordinal != nil {
			st.ordinal = *rec.Ordinal
		}
		if err := st.record(rec); err != nil {
			return err
		}
		if ok, err := st.next(&rec); err != nil || !ok {
			return err
		}
	}
}

// next reads and decodes the next record; false at the end of the file
// and at a torn last line.
func (st *state) next(rec *record) (bool, error) {
	line, err := st.lines.Next()
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if st.lines.Unterminated && !json.Valid(line) {
		// A writer stopped mid-line: keep everything before it.
		st.sink.Warn(st.file, st.lines.Line, "torn last line ignored (the file ends without a newline)")
		st.sink.Count("torn line", transcript.OutcomeSkipped, "incomplete last line")
		st.torn = true
		return false, nil
	}
	if err := st.decode(line, rec); err != nil {
		return false, err
	}
	st.read()
	return true, nil
}

// read notes where the line just read ends (a resume point, resume.go).
func (st *state) read() {
	st.unterminated, st.readOff, st.readLine = st.lines.Unterminated, st.lines.Off, st.lines.Line
}

// finish reports what the file left unresolved and records the thread,
// so its forks and sub-agents read later can continue it.
func (st *state) finish(h head, threads map[string]*thread) {
	sink, file := st.sink, st.file
	if st.pending != nil {
		sink.Count("event_msg/token_count", transcript.OutcomeSkipped, "no assistant output for this request")
	}
	if st.reordered > 0 {
		sink.Warn(file, 0, fmt.Sprintf("%d message(s) recorded between a request's tool calls and their outputs were placed after the outputs (metadata.import_reordered; first after %s)",
			st.reordered, strings.Join(st.reorderedAt, ", ")))
	}
	if st.model != "" {
		sink.SetModel(st.model)
	}
	if h.id != "" {
		threads[h.id] = &thread{sink: sink, emitted: st.emitted, base: st.base, model: st.model, spawned: st.spawned}
	}
}

func (st *state) decode(line []byte, rec *record) error {
	*rec = record{} // a reused RawMessage would alias the previous payload
	if !fastRecord(line, rec) {
		if err := st.lines.Unmarshal(line, rec, `a Codex rollout record {"timestamp","type","payload"}`); err != nil {
			return err
		}
	}
	switch {
	case rec.RecordType != "" && rec.Type == "":
	case rec.Type == "" && rec.ID != "" && st.lines.Line == 1:
		// The bare format's header: the session's metadata.
		rec.Type, rec.Payload = "session_meta", append(json.RawMessage(nil), line...)
	case rec.Type == "":
		return st.lines.Errorf(`expected a Codex rollout record: missing "type"`)
	case len(rec.Payload) == 0 && !envelope[rec.Type]:
		rec.Type, rec.Payload = "response_item", append(json.RawMessage(nil), line...)
	}
	return nil
}

// idPrefix makes node ids unique per rollout and stable across imports of
// the same file (so --append of a grown rollout adds only new lines).
func idPrefix(name string) string {
	hexOnly := strings.Map(func(r rune) rune {
		if (r >= '0' && r <= '9') || (r >= 'a' && r <= 'f') {
			return r
		}
		return -1
	}, strings.ToLower(name))
	if len(hexOnly) >= 8 {
		return "cx" + hexOnly[len(hexOnly)-8:]
	}
	sum := sha256.Sum256([]byte(name))
	return "cx" + hex.EncodeToString(sum[:4])
}

func (st *state) id() string {
	id := fmt.Sprintf("%s-%d", st.prefix, st.lines.Line)
	if st.ordinals == nil {
		st.ordinals = map[string]int64{}
	}
	st.ordinals[id] = st.ordinal
	return id
}

func (st *state) record(rec record) error {
	if rec.RecordType != "" && rec.Type == "" {
		st.sink.Count("record_type/"+rec.RecordType, transcript.OutcomeSkipped, "Codex bookkeeping marker, not part of the conversation")
		return nil
	}
	switch rec.Type {
	case "session_meta":
		return st.sessionMeta(rec)
	case "turn_context":
		var tc struct {
			Model string `json:"model"`
		}
		_ = input.Unmarshal(rec.Payload, &tc)
		if tc.Model != "" {
			st.model = tc.Model
		}
		// What of the turn's settings reaches the model (developer
		// instructions, environment context) Codex records as messages.
		st.sink.Count("turn_context", transcript.OutcomeSkipped, "per-turn settings; the model reads them as the developer and user messages recorded beside it (the model is recorded in session.json)")
	case "world_state":
		st.sink.Count("world_state", transcript.OutcomeSkipped, "client state the context messages are built from; the messages sent are recorded as response items")
	case "token_usage_record":
		return st.usageRecord(rec)
	case "response_item":
		var it item
		if !fastItem(rec.Payload, &it) {
			if err := input.Unmarshal(rec.Payload, &it); err != nil {
				return st.lines.Errorf("response_item payload: %s", input.JSONErrorText(err))
			}
		}
		return st.item(it, rec)
	case "event_msg":
		return st.event(rec)
	case "compacted":
		return st.compacted(rec)
	default:
		st.sink.Count(rec.Type, transcript.OutcomeSkipped, "record type not part of the conversation")
	}
	return nil
}

// sessionMeta keeps the session's metadata on the first node and imports
// base_instructions (Codex 0.1xx) as that first node: Codex sends them as
// the first developer message of every request, before anything recorded
// as a response item. A later session_meta (a resumed or forked rollout
// repeats it) adds nothing.
func (st *state) sessionMeta(rec record) error {
	var m struct {
		Base *struct {
			Text string `json:"text"`
		} `json:"base_instructions"`
	}
	_ = input.Unmarshal(rec.Payload, &m)
	if st.meta != nil || st.prev != "" || st.g != nil || m.Base == nil || m.Base.Text == "" {
		if st.meta == nil {
			st.meta = rec.Payload
		}
		st.sink.Count("session_meta", transcript.OutcomeMerged, "kept as metadata of the first node")
		return nil
	}
	st.meta = rec.Payload
	n := transcript.Node{ID: st.id(), Role: transcript.RoleSystem, Content: transcript.TextContent(m.Base.Text), CreatedAt: rec.Timestamp}
	n.SetMeta("codex_role", "developer")
	n.SetMeta("codex_base_instructions", true)
	st.sink.Count("session_meta", transcript.OutcomeImported, "base_instructions as the first developer message; the rest as metadata of that node")
	st.base = n.ID
	return st.emit(n)
}

func parts(raw json.RawMessage) []part {
	var ps []part
	if json.Unmarshal(raw, &ps) != nil {
		return nil
	}
	return ps
}

// textBlocks converts message content (a string, or input_text /
// output_text / input_image parts) to blocks.
func textBlocks(raw json.RawMessage) []transcript.Block {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []transcript.Block{{Type: transcript.BlockText, Text: s}}
	}
	var out []transcript.Block
	for _, p := range parts(raw) {
		switch p.Type {
		case "input_image":
			url := input.Text(p.ImageURL)
			var obj struct {
				URL string `json:"url"`
			}
			if json.Unmarshal(p.ImageURL, &obj) == nil && obj.URL != "" {
				url = obj.URL
			}
			out = append(out, input.Image(url, "", ""))
		default:
			out = append(out, transcript.Block{Type: transcript.BlockText, Text: p.Text})
		}
	}
	return out
}

// outputText is a tool output as text: a string as is, content items
// joined, anything else as JSON.
func outputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj struct {
		Content *string `json:"content"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Content != nil {
		return *obj.Content
	}
	if ps := parts(raw); len(ps) > 0 {
		var texts []string
		for _, p := range ps {
			if p.Text != "" {
				texts = append(texts, p.Text)
			}
		}
		return strings.Join(texts, "\n")
	}
	return input.Text(raw)
}

func appendMeta(n *transcript.Node, key string, v any) { appendMetaRaw(n, key, input.Raw(v)) }

func appendMetaRaw(n *transcript.Node, key string, v json.RawMessage) {
	var list []json.RawMessage
	if raw, ok := n.Metadata[key]; ok {
		_ = json.Unmarshal(raw, &list)
	}
	n.SetMeta(key, append(list, v))
}

// Package codex imports Codex CLI rollout files (rollout-*.jsonl): one
// conversation per file, a linear chain in file order. session_meta's
// base_instructions (0.1xx) become the first node, a system node, as Codex
// sends them first; developer messages are system nodes too. Each model
// request becomes one assistant node (its reasoning summaries as thinking
// blocks, its messages as text, its function and custom tool calls as tool
// calls, its encrypted reasoning kept opaque in metadata) followed by one
// tool node per output; token_usage_record's usage (0.1xx), else
// token_count's last_token_usage, becomes the usage of that assistant node,
// with the recorded model_context_window beside it; event_msg records that
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

	"github.com/ctxfold/ctxfold/transcript"
	"github.com/ctxfold/ctxfold/transcript/importer/input"
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
	Type string `json:"type"`
	Info *struct {
		Total json.RawMessage `json:"total_token_usage"`
		Last  *tokenUsage     `json:"last_token_usage"`
		// Window is the context window Codex measured this request
		// against (0.1xx): the transcript's word beats the model table.
		Window int64 `json:"model_context_window"`
	} `json:"info"`
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
		_ = json.Unmarshal(rec.Payload, &m)
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

// readRecords handles the first record (already decoded into rec) and
// every later line of the file.
func (st *state) readRecords(ctx context.Context, first []byte, rec record) error {
	sink, file := st.sink, st.file
	for line := first; ; {
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
		var err error
		line, err = st.lines.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if !json.Valid(line) && st.lines.Unterminated {
			// A writer stopped mid-line: keep everything before it.
			sink.Warn(file, st.lines.Line, "torn last line ignored (the file ends without a newline)")
			sink.Count("torn line", transcript.OutcomeSkipped, "incomplete last line")
			break
		}
		if err := st.decode(line, &rec); err != nil {
			return err
		}
	}
	return nil
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
	if err := st.lines.Unmarshal(line, rec, `a Codex rollout record {"timestamp","type","payload"}`); err != nil {
		return err
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
		_ = json.Unmarshal(rec.Payload, &tc)
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
		if err := json.Unmarshal(rec.Payload, &it); err != nil {
			return st.lines.Errorf("response_item payload: %s", input.JSONErrorText(err))
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
	_ = json.Unmarshal(rec.Payload, &m)
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

func (st *state) item(it item, rec record) error {
	kind := "response_item/" + it.Type
	switch it.Type {
	case "message":
		switch it.Role {
		case "assistant":
			n := st.output(kind + "/assistant")
			n.Content.Blocks = append(n.Content.Blocks, textBlocks(it.Content)...)
			return nil
		case "user", "developer", "system":
			n := transcript.Node{ID: st.id(), Role: transcript.RoleUser, CreatedAt: rec.Timestamp}
			if it.Role != "user" {
				n.Role = transcript.RoleSystem
				n.SetMeta("codex_role", it.Role)
			}
			n.Content = transcript.Content{IsBlocks: true, Blocks: textBlocks(it.Content)}
			st.sink.Count(kind+"/"+it.Role, transcript.OutcomeImported, "")
			return st.input(n, false)
		}
		st.sink.Count(kind+"/"+it.Role, transcript.OutcomeSkipped, "unknown message role")
	case "reasoning":
		n := st.output(kind)
		if b, ok := reasoningBlock(it); ok {
			n.Content.Blocks = append(n.Content.Blocks, b)
		}
	case "function_call", "custom_tool_call", "local_shell_call":
		return st.toolCall(it, kind)
	case "web_search_call":
		n := st.output(kind)
		appendMetaRaw(n, "codex_web_search_calls", recordPayload(it, rec))
	case "function_call_output", "custom_tool_call_output":
		return st.toolOutput(it, rec, kind)
	case "ghost_snapshot":
		st.sink.Count(kind, transcript.OutcomeSkipped, "git snapshot of the workspace, not sent to the model")
	default:
		st.sink.Count(kind, transcript.OutcomeSkipped, "item type not known to this importer")
	}
	return nil
}

// toolCall adds a function, custom tool or local shell call to the
// request's assistant node; a call id repeated within the request is
// not imported.
func (st *state) toolCall(it item, kind string) error {
	n := st.output(kind)
	call := transcript.ToolCall{ID: it.CallID, Name: it.Name, Arguments: it.Arguments}
	if call.ID == "" {
		call.ID = it.ID
	}
	if call.ID == "" {
		call.ID = st.id()
	}
	switch it.Type {
	case "custom_tool_call":
		call.Arguments = input.Raw(input.Text(it.Input))
		call.Extra = map[string]json.RawMessage{transcript.ExtraCustom: json.RawMessage("true")}
		appendMeta(n, "codex_custom_tool_calls", call.ID)
	case "local_shell_call":
		call.Name, call.Arguments = "local_shell", it.Action
	}
	if len(bytes.TrimSpace(call.Arguments)) == 0 {
		call.Arguments = json.RawMessage(`{}`)
	}
	if it.Namespace != "" {
		// A tool of a namespace (multi_agent_v1): the provider needs both.
		if call.Extra == nil {
			call.Extra = map[string]json.RawMessage{}
		}
		call.Extra[transcript.ExtraNamespace] = input.Raw(it.Namespace)
	}
	if _, dup := st.g.calls[call.ID]; dup {
		st.sink.Warn(st.file, st.lines.Line, fmt.Sprintf("call id %q repeats within one request; the repeat is not imported", call.ID))
		st.sink.Count(kind, transcript.OutcomeSkipped, "repeated call id")
		return nil
	}
	n.ToolCalls = append(n.ToolCalls, call)
	st.g.calls[call.ID] = call.Name
	return nil
}

// toolOutput imports a tool's output as the tool node answering its
// call, and remembers the thread a spawn_agent call started.
func (st *state) toolOutput(it item, rec record, kind string) error {
	g := st.g
	name, ok := "", false
	if g != nil {
		name, ok = g.calls[it.CallID]
	}
	if !ok || g.answer[it.CallID] {
		why := "no call with this call_id in the request before it"
		if ok {
			why = "a second output for the same call"
		}
		st.sink.Warn(st.file, st.lines.Line, fmt.Sprintf("output for call %q not imported: %s", it.CallID, why))
		st.sink.Count(kind, transcript.OutcomeSkipped, why)
		return st.closeRun()
	}
	text := outputText(it.Output)
	if name == "spawn_agent" {
		var out struct {
			AgentID string `json:"agent_id"`
		}
		if json.Unmarshal([]byte(text), &out) == nil && out.AgentID != "" {
			if st.spawned == nil {
				st.spawned = map[string]string{}
			}
			st.spawned[out.AgentID] = g.assistant.ID
		}
	}
	n := transcript.Node{ID: st.id(), Role: transcript.RoleTool, ToolCallID: it.CallID, Name: name,
		Content: transcript.TextContent(text), CreatedAt: rec.Timestamp}
	st.sink.Count(kind, transcript.OutcomeImported, "")
	g.answer[it.CallID] = true
	return st.input(n, true)
}

// reasoningBlock is a reasoning item as one thinking block: its summary
// and content texts joined by blank lines, and in Extra what Codex sends
// back of it (docs/FORMAT.md §5): encrypted_content, and the length of
// each summary and content part so the parts can be told apart again.
// An item with neither text nor encrypted content gives no block.
func reasoningBlock(it item) (transcript.Block, bool) {
	var texts []string
	summary := make([]int, 0, len(it.Summary))
	for _, p := range it.Summary {
		texts = append(texts, p.Text)
		summary = append(summary, len(p.Text))
	}
	b := transcript.Block{Type: transcript.BlockThinking, Extra: map[string]json.RawMessage{transcript.ExtraSummaryLengths: input.Raw(summary)}}
	if ps := parts(it.Content); ps != nil {
		content := make([]int, 0, len(ps))
		for _, p := range ps {
			texts = append(texts, p.Text)
			content = append(content, len(p.Text))
		}
		b.Extra[transcript.ExtraContentLengths] = input.Raw(content)
	}
	b.Text = strings.Join(texts, "\n\n")
	if it.EncryptedContent != nil {
		b.Extra[transcript.ExtraEncryptedContent] = input.Raw(*it.EncryptedContent)
	}
	return b, b.Text != "" || it.EncryptedContent != nil
}

func recordPayload(_ item, rec record) json.RawMessage { return rec.Payload }

// output returns the assistant node of the request in progress, starting a
// new request (and flushing the previous one) when the last run ended.
func (st *state) output(kind string) *transcript.Node {
	if st.g != nil && st.g.open {
		st.sink.Count(kind, transcript.OutcomeMerged, "same model request as the item before it")
		return st.g.assistant
	}
	if err := st.flush(); err != nil {
		// flush only fails on the sink; keep the error for the caller.
		st.deferErr = err
	}
	n := &transcript.Node{ID: st.id(), Role: transcript.RoleAssistant, Content: transcript.Content{IsBlocks: true}}
	st.g = &group{assistant: n, open: true, calls: map[string]string{}, answer: map[string]bool{}}
	if st.pending != nil {
		n.Usage, st.pending = st.pending, nil
	}
	st.sink.Count(kind, transcript.OutcomeImported, "")
	return n
}

// closeRun ends the output run of the current request: a token count
// arriving now belongs to the next request.
func (st *state) closeRun() error {
	if st.g != nil {
		st.g.open = false
	}
	return st.deferErr
}

// input places a user, system or tool node: tool outputs directly after
// their call, other inputs after the outputs of the request in progress.
func (st *state) input(n transcript.Node, isResult bool) error {
	if err := st.closeRun(); err != nil {
		return err
	}
	g := st.g
	if g == nil {
		return st.emit(n)
	}
	if isResult {
		g.results = append(g.results, n)
		if len(g.after) > 0 {
			g.reordered = len(g.after)
		}
		return nil
	}
	g.after = append(g.after, n)
	return nil
}

// flush emits the request in progress: the assistant node (flagging calls
// that never got an output), its tool outputs, then the inputs after it.
func (st *state) flush() error {
	g := st.g
	if g == nil {
		return nil
	}
	st.g = nil
	a := g.assistant
	if len(a.Content.Blocks) == 1 && a.Content.Blocks[0].Type == transcript.BlockText {
		a.Content = transcript.TextContent(a.Content.Blocks[0].Text)
	}
	var unanswered []string
	for _, c := range a.ToolCalls {
		if !g.answer[c.ID] {
			unanswered = append(unanswered, c.ID)
		}
	}
	if len(unanswered) > 0 {
		a.SetMeta("unanswered_tool_calls", unanswered)
		st.sink.Warn(st.file, 0, fmt.Sprintf("node %q: %d tool call(s) without an output (%s): imported and flagged in metadata.unanswered_tool_calls", a.ID, len(unanswered), strings.Join(unanswered, ", ")))
	}
	if err := st.emit(*a); err != nil {
		return err
	}
	for _, n := range g.results {
		if err := st.emit(n); err != nil {
			return err
		}
	}
	for i, n := range g.after {
		if i < g.reordered {
			n.SetMeta("import_reordered", "placed after the tool outputs of the request before it")
		}
		if err := st.emit(n); err != nil {
			return err
		}
	}
	if g.reordered > 0 {
		st.reordered += g.reordered
		if len(st.reorderedAt) < 5 {
			st.reorderedAt = append(st.reorderedAt, a.ID)
		}
	}
	return nil
}

func (st *state) emit(n transcript.Node) error {
	n.Predecessor = st.prev
	n.Caller = st.caller
	if st.prev == "" && st.meta != nil {
		n.SetMeta("codex_session_meta", st.meta)
	}
	if err := st.sink.Node(n); err != nil {
		return err
	}
	st.prev = n.ID
	st.real = append(st.real, n.ID)
	ord, ok := st.ordinals[n.ID]
	if !ok {
		ord = -1
	}
	st.emitted = append(st.emitted, emitted{id: n.ID, ordinal: ord})
	return nil
}

func (st *state) event(rec record) error {
	var ev event
	if err := json.Unmarshal(rec.Payload, &ev); err != nil {
		return st.lines.Errorf("event_msg payload: %s", input.JSONErrorText(err))
	}
	kind := "event_msg/" + ev.Type
	switch ev.Type {
	case "token_count":
		if ev.Info == nil || ev.Info.Last == nil {
			st.sink.Count(kind, transcript.OutcomeSkipped, "no usage info (rate limits only)")
			return nil
		}
		if ev.Info.Window > 0 {
			st.window = ev.Info.Window
			if g := st.g; g != nil && g.assistant.Usage != nil {
				g.assistant.Usage.Extra[transcript.UsageContextWindow] = input.Raw(st.window)
			}
		}
		if st.byRecord {
			st.sink.Count(kind, transcript.OutcomeSkipped, "mirror of token_usage_record (its model_context_window is kept on the usage)")
			return nil
		}
		total := string(ev.Info.Total)
		if total != "" && total == st.total {
			st.sink.Count(kind, transcript.OutcomeSkipped, "repeats the previous count")
			return nil
		}
		st.total = total
		u := st.usage(*ev.Info.Last)
		if g := st.g; g != nil && g.open && g.assistant.Usage == nil {
			g.assistant.Usage = u
		} else {
			if st.pending != nil {
				st.sink.Count(kind, transcript.OutcomeSkipped, "no assistant output for this request")
			}
			st.pending = u
		}
		st.sink.Count(kind, transcript.OutcomeMerged, "usage of the assistant node of its request")
	case "user_message", "agent_message", "agent_reasoning", "agent_reasoning_raw_content":
		st.sink.Count(kind, transcript.OutcomeSkipped, "mirror of a response_item (not imported twice)")
	case "context_compacted":
		st.sink.Count(kind, transcript.OutcomeSkipped, "mirror of the compacted record")
	case "thread_settings_applied":
		st.sink.Count(kind, transcript.OutcomeSkipped, "settings event; not sent to the model")
	default:
		st.sink.Count(kind, transcript.OutcomeSkipped, "client event, not part of the conversation")
	}
	return nil
}

// usage maps Codex's counts: input_tokens includes the cached part (the
// OpenAI convention), which the extra field says explicitly. The window
// Codex measured against is kept beside them (transcript.UsageContextWindow).
func (st *state) usage(t tokenUsage) *transcript.Usage {
	u := &transcript.Usage{InputTokens: t.Input, OutputTokens: t.Output, CachedInputTokens: t.Cached,
		Extra: map[string]json.RawMessage{
			"reasoning_output_tokens": input.Raw(t.Reasoning),
			"total_tokens":            input.Raw(t.Total),
			"input_includes_cached":   json.RawMessage("true"),
		}}
	if st.window > 0 {
		u.Extra[transcript.UsageContextWindow] = input.Raw(st.window)
	}
	return u
}

// usageRecord gives the request whose output items were just recorded its
// usage: Codex 0.1xx writes token_usage_record right after them, before
// the tool outputs, where the token_count event comes later.
func (st *state) usageRecord(rec record) error {
	var r struct {
		Usage *tokenUsage `json:"usage"`
	}
	if err := json.Unmarshal(rec.Payload, &r); err != nil {
		return st.lines.Errorf("token_usage_record payload: %s", input.JSONErrorText(err))
	}
	if r.Usage == nil {
		st.sink.Count("token_usage_record", transcript.OutcomeSkipped, "no usage")
		return nil
	}
	st.byRecord = true
	g := st.g
	if g == nil || g.assistant.Usage != nil {
		st.sink.Count("token_usage_record", transcript.OutcomeSkipped, "no assistant output for this request")
		return nil
	}
	g.assistant.Usage = st.usage(*r.Usage)
	st.sink.Count("token_usage_record", transcript.OutcomeMerged, "usage of the assistant node of its request")
	return nil
}

// compacted becomes a summary node covering every real turn before it
// except the base instructions (docs/FORMAT.md §4): its predecessor is the
// first covered node's (the base instructions or the chain's root), its
// content is what Codex put in the model's context instead, as text, and
// metadata.responses_input holds those items as sent, so render shows what
// the model saw and render --raw everything.
func (st *state) compacted(rec record) error {
	var c struct {
		Message     string            `json:"message"`
		Replacement []json.RawMessage `json:"replacement_history"`
	}
	if err := json.Unmarshal(rec.Payload, &c); err != nil {
		return st.lines.Errorf("compacted payload: %s", input.JSONErrorText(err))
	}
	if err := st.flush(); err != nil {
		return err
	}
	covers := st.real
	if st.base != "" && len(covers) > 0 && covers[0] == st.base {
		// Codex rebuilds the history after the base instructions, which
		// it sends before the replacement history too.
		covers = covers[1:]
	}
	if len(covers) == 0 {
		st.sink.Count("compacted", transcript.OutcomeSkipped, "nothing before it to cover")
		return nil
	}
	text := c.Message
	if len(c.Replacement) > 0 {
		text = replacementText(c.Replacement)
	}
	n := transcript.Node{ID: transcript.SummaryIDPrefix + st.id(), Role: transcript.SummaryRole, Name: transcript.SummaryName,
		Content: transcript.TextContent(transcript.SummaryPrefix + text), CreatedAt: rec.Timestamp}
	if covers[0] != st.real[0] {
		n.Predecessor = st.base
	}
	n.SetMeta("compaction", true)
	n.SetMeta("covers_ids", covers)
	n.SetMeta("source", "codex compacted record")
	if len(c.Replacement) > 0 {
		// The items as sent, for render --format responses (docs/FORMAT.md §5).
		n.SetMeta(transcript.MetaResponsesInput, asSent(c.Replacement))
	}
	st.sink.Count("compacted", transcript.OutcomeImported, "")
	return st.sink.Node(n)
}

// asSent drops from replacement items the keys Codex keeps for itself
// and strips before a request (internal_chat_message_metadata_passthrough,
// 0.1xx); everything else is kept byte for byte.
func asSent(items []json.RawMessage) []json.RawMessage {
	out := make([]json.RawMessage, len(items))
	for i, raw := range items {
		out[i] = raw
		var m map[string]json.RawMessage
		if !bytes.Contains(raw, []byte(`"internal_`)) || json.Unmarshal(raw, &m) != nil {
			continue
		}
		for k := range m {
			if strings.HasPrefix(k, "internal_") {
				delete(m, k)
			}
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // keep "<" as Codex wrote it
		if enc.Encode(m) == nil {
			out[i] = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		}
	}
	return out
}

// replacementText renders Codex's replacement history as the text the
// model reads in place of the covered turns; the opaque compaction item
// is named, its bytes kept in metadata.
func replacementText(items []json.RawMessage) string {
	if text, ok := soleUserMessage(items); ok {
		return text
	}
	var out []string
	for _, raw := range items {
		var it item
		if json.Unmarshal(raw, &it) != nil {
			continue
		}
		switch it.Type {
		case "message":
			var texts []string
			for _, b := range textBlocks(it.Content) {
				if b.Type == transcript.BlockText {
					texts = append(texts, b.Text)
				} else {
					texts = append(texts, "[image]")
				}
			}
			out = append(out, it.Role+": "+strings.Join(texts, "\n"))
		case "compaction", "compaction_summary":
			size := 0
			if it.EncryptedContent != nil {
				size = len(*it.EncryptedContent)
			}
			out = append(out, fmt.Sprintf("[encrypted compaction summary: %d bytes, kept in metadata.codex_replacement_history]", size))
		default:
			out = append(out, "["+it.Type+"]")
		}
	}
	return strings.Join(out, "\n\n")
}

// soleUserMessage is the text of a replacement history that is one user
// message of text: the summary alone, as 'ctxfold export --to codex' writes
// it, reads back as that summary.
func soleUserMessage(items []json.RawMessage) (string, bool) {
	if len(items) != 1 {
		return "", false
	}
	var it item
	if json.Unmarshal(items[0], &it) != nil || it.Type != "message" || it.Role != "user" {
		return "", false
	}
	var texts []string
	for _, b := range textBlocks(it.Content) {
		if b.Type != transcript.BlockText {
			return "", false
		}
		texts = append(texts, b.Text)
	}
	return strings.Join(texts, "\n"), true
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

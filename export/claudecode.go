package export

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/ctxfold/ctxfold/transcript"
)

// ClaudeCodeVersion is the client version the written lines claim: the
// newest one the interop recordings cover (docs/INTEROP.md).
const ClaudeCodeVersion = "2.1.328"

// ccLine is one line of a Claude Code project transcript, fields in the
// client's own order.
type ccLine struct {
	ParentUUID                *string          `json:"parentUuid"`
	LogicalParentUUID         string           `json:"logicalParentUuid,omitempty"`
	IsSidechain               bool             `json:"isSidechain"`
	UserType                  string           `json:"userType"`
	CWD                       string           `json:"cwd"`
	SessionID                 string           `json:"sessionId"`
	Version                   string           `json:"version"`
	Type                      string           `json:"type"`
	Subtype                   string           `json:"subtype,omitempty"`
	Message                   any              `json:"message,omitempty"`
	Content                   string           `json:"content,omitempty"`
	IsMeta                    *bool            `json:"isMeta,omitempty"`
	IsVisibleInTranscriptOnly bool             `json:"isVisibleInTranscriptOnly,omitempty"`
	IsCompactSummary          bool             `json:"isCompactSummary,omitempty"`
	CompactMetadata           *ccCompactMeta   `json:"compactMetadata,omitempty"`
	Level                     string           `json:"level,omitempty"`
	RequestID                 string           `json:"requestId,omitempty"`
	UUID                      string           `json:"uuid"`
	Timestamp                 string           `json:"timestamp"`
	ToolUseResult             *json.RawMessage `json:"toolUseResult,omitempty"`
}

type ccCompactMeta struct {
	Trigger    string `json:"trigger"`
	PreTokens  int    `json:"preTokens"`
	PostTokens int    `json:"postTokens,omitempty"`
}

type ccUserMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

type ccAssistantMessage struct {
	ID           string    `json:"id"`
	Type         string    `json:"type"`
	Role         string    `json:"role"`
	Model        string    `json:"model"`
	Content      []ccBlock `json:"content"`
	StopReason   string    `json:"stop_reason"`
	StopSequence *string   `json:"stop_sequence"`
	Usage        ccUsage   `json:"usage"`
}

type ccUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
}

// ccBlock is a Messages API content block.
type ccBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature *string         `json:"signature,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   *string         `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

func strp(s string) *string { return &s }

// ccWriter turns branch nodes into lines, threading parentUuid.
type ccWriter struct {
	out    *countingWriter
	opts   Options
	ws     *warnings
	parent *string
	model  string
	// pending collects consecutive tool nodes, which Claude Code holds as
	// the tool_result blocks of one user message.
	pending []*transcript.Node
}

func writeClaudeCode(out *countingWriter, b *branch, opts Options, ws *warnings) error {
	if opts.CWD == "" {
		return fmt.Errorf("export to claude-code needs a working directory")
	}
	w := &ccWriter{out: out, opts: opts, ws: ws, model: "claude-sonnet-4-5"}
	for _, n := range b.nodes {
		if m := ccMeta(n, "model"); m != "" {
			w.model = m
			break
		}
	}
	for k, n := range b.nodes {
		if b.summary != nil && k == b.at+b.n {
			w.flush()
			w.compaction(b)
		}
		w.node(n)
	}
	w.flush()
	if b.summary != nil && b.at+b.n == len(b.nodes) {
		w.compaction(b)
	}
	return out.err
}

// compaction writes the boundary and the summary line. The boundary starts
// a new chain (parentUuid null) as the client's own does, so a resume
// sends the summary, then what follows it, and nothing before.
func (w *ccWriter) compaction(b *branch) {
	s := b.summary
	boundary, summary := ccMeta(s, "boundary_uuid"), ccMeta(s, "summary_uuid")
	if boundary == "" {
		boundary = ClientID(s.ID + "/boundary")
	}
	if summary == "" {
		summary = ClientID(s.ID)
	}
	trigger := "manual"
	var pre int
	if raw, ok := ccMetaRaw(s, "compact_metadata"); ok {
		var m ccCompactMeta
		if json.Unmarshal(raw, &m) == nil {
			trigger, pre = m.Trigger, m.PreTokens
		}
	}
	if b.tokensBefore > 0 {
		pre = b.tokensBefore
	}
	f := false
	line := w.base(s, "system", boundary)
	line.ParentUUID = nil
	if w.parent != nil {
		line.LogicalParentUUID = *w.parent
	}
	line.Subtype, line.Content, line.IsMeta, line.Level = "compact_boundary", "Conversation compacted", &f, "info"
	line.CompactMetadata = &ccCompactMeta{Trigger: trigger, PreTokens: pre, PostTokens: b.tokensAfter}
	w.emit(line, boundary)
	sl := w.base(s, "user", summary)
	sl.Message = ccUserMessage{Role: "user", Content: summaryText(s)}
	sl.IsVisibleInTranscriptOnly, sl.IsCompactSummary = true, true
	w.emit(sl, summary)
}

func (w *ccWriter) base(n *transcript.Node, typ, uuid string) ccLine {
	return ccLine{ParentUUID: w.parent, UserType: "external", CWD: w.opts.CWD, SessionID: w.opts.SessionID,
		Version: ClaudeCodeVersion, Type: typ, UUID: uuid, Timestamp: stamp(n, w.opts.Now)}
}

func (w *ccWriter) emit(l ccLine, uuid string) {
	w.out.line(l)
	w.parent = strp(uuid)
}

// sessionContextAttachments are the user-role attachments Claude Code
// builds for a session itself and adds again to a resumed one that does
// not record them as its own attachment lines, as an export does (the
// attribution reminder of 2.1.3xx): written as user lines, a resume
// would send them twice (docs/EXPORT.md, interop/claude-code
// TestLiveExportResume). System-role attachments are system nodes, which
// are not exported either.
var sessionContextAttachments = map[string]bool{"remote_session_change": true}

func (w *ccWriter) node(n *transcript.Node) {
	if n.Role == transcript.RoleTool {
		w.pending = append(w.pending, n)
		return
	}
	w.flush()
	if clientCompactionOutput(n, w.ws) {
		return
	}
	switch n.Role {
	case transcript.RoleSystem:
		w.ws.add("system", n.ID, "system prompts are not exported: Claude Code sends its own")
	case transcript.RoleUser:
		if sessionContextAttachments[ccMeta(n, "attachment")] {
			w.ws.add("client_context", n.ID, "Claude Code's own session context is not exported: the client adds it again on resume")
			return
		}
		w.user(n)
	case transcript.RoleAssistant:
		w.assistant(n)
	}
}

// flush writes pending tool nodes as one user message of tool_result
// blocks, under the first one's id.
func (w *ccWriter) flush() {
	if len(w.pending) == 0 {
		return
	}
	first := w.pending[0]
	var blocks []ccBlock
	for _, t := range w.pending {
		for _, r := range t.ToolResults() {
			blocks = append(blocks, ccBlock{Type: "tool_result", ToolUseID: r.ToolCallID, Content: strp(r.Text), IsError: r.IsError})
		}
	}
	if len(w.pending) > 1 {
		w.ws.add("tool_nodes_merged", w.pending[1].ID, "consecutive tool nodes become one user message of tool results (the later nodes' ids are not kept)")
	}
	w.pending = nil
	id := ClientID(first.ID)
	l := w.base(first, "user", id)
	l.Message = ccUserMessage{Role: "user", Content: blocks}
	w.emit(l, id)
}

func (w *ccWriter) user(n *transcript.Node) {
	id := ClientID(n.ID)
	l := w.base(n, "user", id)
	if ccMeta(n, "is_meta") == "true" {
		t := true
		l.IsMeta = &t
	}
	if !n.Content.IsBlocks {
		l.Message = ccUserMessage{Role: "user", Content: n.Content.Text}
		w.emit(l, id)
		return
	}
	var blocks []ccBlock
	for _, bl := range n.Content.Blocks {
		switch bl.Type {
		case transcript.BlockText:
			blocks = append(blocks, ccBlock{Type: "text", Text: strp(bl.Text)})
		case transcript.BlockToolResult:
			blocks = append(blocks, ccBlock{Type: "tool_result", ToolUseID: bl.ToolCallID, Content: strp(bl.Text), IsError: bl.IsError})
		case transcript.BlockThinking:
			w.ws.add("user_thinking", n.ID, "thinking in a user message has no Claude Code form and is dropped")
		default:
			blocks = append(blocks, ccBlock{Type: "text", Text: strp(mediaNotice(bl))})
			w.ws.add("media", n.ID, "media is kept by reference only; a text notice stands in for it")
		}
	}
	l.Message = ccUserMessage{Role: "user", Content: blocks}
	w.emit(l, id)
}

func (w *ccWriter) assistant(n *transcript.Node) {
	id := ClientID(n.ID)
	l := w.base(n, "assistant", id)
	l.RequestID = ccMeta(n, "request_id")
	msg := ccAssistantMessage{ID: ccMeta(n, "message_id"), Type: "message", Role: "assistant", Model: w.model, StopReason: "end_turn", Content: []ccBlock{}}
	if m := ccMeta(n, "model"); m != "" {
		msg.Model = m
	}
	if msg.ID == "" {
		msg.ID = "msg_" + strings.ReplaceAll(ClientID(n.ID+"/message"), "-", "")[:24]
	}
	if n.Usage != nil {
		msg.Usage = ccUsage{InputTokens: n.Usage.InputTokens, OutputTokens: n.Usage.OutputTokens, CacheReadInputTokens: n.Usage.CachedInputTokens}
	}
	add := func(c transcript.ToolCall) {
		input, ok := argumentsObject(c.Arguments)
		if !ok {
			w.ws.add("arguments_wrapped", n.ID, `tool arguments that are not a JSON object are wrapped as {"input": …}`)
		}
		msg.Content = append(msg.Content, ccBlock{Type: "tool_use", ID: c.ID, Name: c.Name, Input: input})
		msg.StopReason = "tool_use"
	}
	if !n.Content.IsBlocks {
		if n.Content.Text != "" {
			msg.Content = append(msg.Content, ccBlock{Type: "text", Text: strp(n.Content.Text)})
		}
	}
	for _, bl := range n.Content.Blocks {
		switch bl.Type {
		case transcript.BlockText:
			msg.Content = append(msg.Content, ccBlock{Type: "text", Text: strp(bl.Text)})
		case transcript.BlockThinking:
			msg.Content = append(msg.Content, ccBlock{Type: "thinking", Thinking: strp(bl.Text), Signature: strp(bl.Signature)})
		case transcript.BlockToolCall:
			add(transcript.ToolCall{ID: bl.ID, Name: bl.Name, Arguments: bl.Arguments})
		case transcript.BlockToolResult:
			w.ws.add("assistant_result", n.ID, "a tool result inside an assistant message has no Claude Code form and is dropped")
		default:
			msg.Content = append(msg.Content, ccBlock{Type: "text", Text: strp(mediaNotice(bl))})
			w.ws.add("media", n.ID, "media is kept by reference only; a text notice stands in for it")
		}
	}
	for _, c := range n.ToolCalls {
		add(c)
	}
	l.Message = msg
	w.emit(l, id)
}

func mediaNotice(b transcript.Block) string {
	kind := b.Type
	if b.MediaType != "" {
		kind += " " + b.MediaType
	}
	return fmt.Sprintf("[%s: %s]", kind, b.Source)
}

// ccMeta reads a string (or the JSON text of another value) from
// metadata.claude_code, which the importer fills.
func ccMeta(n *transcript.Node, key string) string {
	raw, ok := ccMetaRaw(n, key)
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

func ccMetaRaw(n *transcript.Node, key string) (json.RawMessage, bool) {
	raw, ok := n.Metadata["claude_code"]
	if !ok {
		return nil, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil, false
	}
	v, ok := m[key]
	return v, ok
}

var slugRE = regexp.MustCompile(`[^a-zA-Z0-9]`)

// ClaudeCodePath is where Claude Code looks for session id of a project in
// cwd: <config>/projects/<cwd with every non-alphanumeric as '-'>/<id>.jsonl,
// config being $CLAUDE_CONFIG_DIR or ~/.claude.
func ClaudeCodePath(configDir, cwd, sessionID string) string {
	return filepath.Join(configDir, "projects", slugRE.ReplaceAllString(cwd, "-"), sessionID+".jsonl")
}

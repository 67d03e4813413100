package claudecode

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ctxfold/ctxfold/transcript"
)

// fullRecord is a line as the second pass reads it.
type fullRecord struct {
	record
	Timestamp         string          `json:"timestamp"`
	IsMeta            bool            `json:"isMeta"`
	IsAPIErrorMessage bool            `json:"isApiErrorMessage"`
	Content           json.RawMessage `json:"content"`
	CompactMetadata   json.RawMessage `json:"compactMetadata"`
	// Version is read raw: a line whose version is no string still imports.
	Version json.RawMessage `json:"version"`
	// Entrypoint (Claude Code 2.1.x: "cli", "sdk-cli", "sdk-ts" …) is
	// read raw as Version is.
	Entrypoint json.RawMessage `json:"entrypoint"`
	// Origin says who wrote a user line ({"kind":"task-notification"}:
	// the client, reporting a background task: notification.go).
	Origin json.RawMessage `json:"origin"`
}

// ccMeta is what a node keeps of Claude Code's own fields, under
// metadata.claude_code.
type ccMeta struct {
	UUIDs           []string        `json:"uuids,omitempty"`
	MessageID       string          `json:"message_id,omitempty"`
	RequestID       string          `json:"request_id,omitempty"`
	Model           string          `json:"model,omitempty"`
	StopReason      string          `json:"stop_reason,omitempty"`
	IsMeta          bool            `json:"is_meta,omitempty"`
	IsSidechain     bool            `json:"is_sidechain,omitempty"`
	AgentID         string          `json:"agent_id,omitempty"`
	APIError        bool            `json:"api_error,omitempty"`
	Unmatched       []string        `json:"unmatched_tool_results,omitempty"`
	BoundaryUUID    string          `json:"boundary_uuid,omitempty"`
	SummaryUUID     string          `json:"summary_uuid,omitempty"`
	CompactMetadata json.RawMessage `json:"compact_metadata,omitempty"`
	// ClientVersion is the version of Claude Code that wrote the file,
	// kept on a chain's first message only (its line has no parent): the
	// prior of a session's first request is looked up by it
	// (docs/ACCURACY.md, "The prior").
	ClientVersion string `json:"client_version,omitempty"`
	// Entrypoint is how that chain was started (Claude Code 2.1.x records
	// "cli" for a person's terminal, "sdk-…" for a program's run), kept
	// beside ClientVersion: a program's session before its first call is
	// predicted with the recording harness's smaller tool set
	// (docs/ACCURACY.md, "The prior").
	Entrypoint string `json:"entrypoint,omitempty"`
}

// usage is Claude Code's (the Messages API's) usage object.
type usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
}

// emit builds each planned node from its lines and hands it to the sink,
// in plan order: a node is planned only after its predecessor and caller.
func (p *planner) emit() error {
	if err := p.readSent(); err != nil {
		return err
	}
	order := p.emitOrder()
	if !plannedFirst(order, p.emitFrom) {
		// Cannot happen when the resume point stood (resume.go); the
		// session would no longer be a fresh import's equal.
		return fmt.Errorf("%w: the nodes before it are no longer emitted first", ErrCannotResume)
	}
	cp, _ := p.sink.(Checkpointer)
	var point *Point
	if p.res != nil && p.res.point != nil && cp != nil && plannedFirst(order, p.res.point.Nodes) {
		point = p.res.point
	} else if p.res != nil {
		p.res.point = nil
	}
	nb := p.startBuilding(order)
	defer nb.close()
	for k := p.emitFrom; k <= len(order); k++ {
		if point != nil && k == point.Nodes {
			if err := cp.Checkpoint(); err != nil {
				return err
			}
		}
		if k == len(order) {
			break
		}
		if k%1024 == 0 {
			if err := p.ctx.Err(); err != nil {
				return err
			}
		}
		b := nb.next()
		for _, w := range b.warns {
			p.warnf(w.ref, "%s", w.msg)
		}
		if b.err != nil {
			return b.err
		}
		if err := p.sink.Node(b.node); err != nil {
			ref := p.peek(order[k]).first
			return fmt.Errorf("%s:%d: %w", p.files[ref.file], ref.line, err)
		}
	}
	if p.model != "" {
		p.sink.SetModel(p.model)
	}
	if p.head >= 0 {
		p.sink.SetHead(p.peek(p.head).id)
	}
	return nil
}

// buildNode builds planned node i from its lines, with the text the
// client sent where that differs (useSent). Its warnings are collected in
// warns, for the emit loop to hand over in order: nodes are built on
// several goroutines (emitpar.go), so building reads the plan and the
// files and writes nothing shared.
func (p *planner) buildNode(i int32, warns *[]builtWarning) (transcript.Node, error) {
	n := p.peek(i)
	var node transcript.Node
	var err error
	switch n.kind {
	case kindSummary:
		node, err = p.buildSummary(n, warns)
	case kindSystem:
		node, err = p.buildSystem(n)
	case kindAttachUser, kindAttachSystem:
		node, err = p.buildAttachment(n)
	case kindAgentContext:
		node, err = p.buildAgentContext(i, n)
	default:
		node, err = p.buildMessage(n, warns)
	}
	if err == nil && (n.kind == kindUser || n.kind == kindAttachUser) {
		if rec := p.useSent(i, &node); rec != "" {
			var meta map[string]json.RawMessage
			_ = json.Unmarshal(node.Metadata["claude_code"], &meta)
			if meta == nil {
				meta = map[string]json.RawMessage{}
			}
			meta["recorded_text"], _ = json.Marshal(rec)
			node.SetMeta("claude_code", meta)
		}
	}
	return node, err
}

// readSent reads the user message each request recorded for a group
// (api-request-blob) and pairs its text blocks with the group's text
// nodes, in order. Where Claude Code sent a line differently from how it
// recorded it — a task notification wrapped in a system reminder — the
// node carries what was sent. A pairing is kept only when the counts agree
// and each sent text contains the recorded one, so a misread order can
// never swap contents.
func (p *planner) readSent() error {
	for _, g := range p.sent {
		if !emitsAny(g.nodes, p.emitFrom) {
			// Its nodes are in the sink already (a resumed import).
			continue
		}
		var r fullRecord
		if err := p.read(g.blob, &r, true); err != nil {
			return err
		}
		text, bl, isBlocks, err := decodeContent[block](r.Message.Content)
		if err != nil {
			continue
		}
		var texts []string
		if !isBlocks {
			texts = []string{text}
		}
		for _, b := range bl {
			if b.Type == "text" {
				texts = append(texts, b.Text)
			}
		}
		var targets []int32
		for _, i := range g.nodes {
			n := p.node(i)
			if (n.kind == kindUser && len(n.results) == 0) || n.kind == kindAttachUser {
				targets = append(targets, i)
			}
		}
		if len(targets) != len(texts) {
			continue
		}
		if p.sentText == nil {
			p.sentText = map[int32]string{}
		}
		for k, i := range targets {
			p.sentText[i] = texts[k]
		}
	}
	return nil
}

// useSent replaces a text node's content by the text the client sent for
// it, when that differs by more than the newline Claude Code adds between
// merged lines and contains the recorded text; the recorded text is kept
// in metadata.claude_code.recorded_text.
func (p *planner) useSent(i int32, node *transcript.Node) (recorded string) {
	sent, ok := p.sentText[i]
	if !ok {
		return ""
	}
	own := node.Content.PlainText()
	if strings.TrimRight(sent, "\n") == strings.TrimRight(own, "\n") || !strings.Contains(sent, strings.TrimRight(own, "\n")) {
		return ""
	}
	node.Content = transcript.TextContent(sent)
	return own
}

// plannedFirst: the first n nodes of order are the first n planned.
func plannedFirst(order []int32, n int) bool {
	for _, i := range order[:n] {
		if int(i) >= n {
			return false
		}
	}
	return true
}

// emitsAny: one of nodes is emitted by an import that skips the first
// from planned nodes.
func emitsAny(nodes []int32, from int) bool {
	for _, i := range nodes {
		if int(i) >= from {
			return true
		}
	}
	return false
}

// emitOrder is plan order, except that a node planned before its
// predecessor or caller — the system node, found after the first prompt,
// and attachments moved up their turn — waits for them.
func (p *planner) emitOrder() []int32 {
	done := make([]bool, len(p.nodes))
	out := make([]int32, 0, len(p.nodes))
	// The nodes of the state the planner was restored from are emitted
	// first, as they were (no line since changed one: the point stands),
	// so only the nodes planned since are ordered.
	from := 0
	if p.base != nil && p.emitFrom == len(p.base.ID) && p.res != nil && !p.res.lost {
		from = p.emitFrom
	}
	for i := range from {
		done[i] = true
		out = append(out, int32(i))
	}
	var stack []int32
	for i := from; i < len(p.nodes); i++ {
		stack = append(stack[:0], int32(i))
		for len(stack) > 0 {
			cur := stack[len(stack)-1]
			if done[cur] {
				stack = stack[:len(stack)-1]
				continue
			}
			n := p.node(cur)
			if n.pred >= 0 && !done[n.pred] {
				stack = append(stack, n.pred)
				continue
			}
			if n.caller >= 0 && !done[n.caller] {
				stack = append(stack, n.caller)
				continue
			}
			done[cur] = true
			out = append(out, cur)
			stack = stack[:len(stack)-1]
		}
	}
	return out
}

// shapeRecord is an api-request-shape line: the system blocks and tool
// definitions of the requests that share its hash.
type shapeRecord struct {
	Timestamp string          `json:"timestamp"`
	ShapeHash string          `json:"shapeHash"`
	Version   json.RawMessage `json:"version"`
	Shape     struct {
		System json.RawMessage   `json:"system"`
		Tools  []json.RawMessage `json:"tools"`
	} `json:"shape"`
}

// buildSystem builds the system node: the shape's system text blocks
// joined by a blank line (render's rule for consecutive system text), and
// its tool definitions, in Anthropic form, in metadata.tools.
func (p *planner) buildSystem(n *pnode) (transcript.Node, error) {
	buf := make([]byte, n.first.n)
	if _, err := p.open[n.first.file].ReadAt(buf, n.first.off); err != nil {
		return transcript.Node{}, p.errorf(n.first, "re-read: %v", err)
	}
	var r shapeRecord
	if err := json.Unmarshal(buf, &r); err != nil {
		return transcript.Node{}, p.errorf(n.first, "api-request-shape: %s", jsonErrorText(err))
	}
	text, blocks, _, err := decodeContent[block](r.Shape.System)
	if err != nil {
		return transcript.Node{}, p.errorf(n.first, "api-request-shape: shape.system: %s", jsonErrorText(err))
	}
	parts := []string{}
	if text != "" {
		parts = append(parts, text)
	}
	for _, b := range blocks {
		if b.Type == "text" && b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	node := transcript.Node{ID: n.id, Role: transcript.RoleSystem, CreatedAt: r.Timestamp,
		Content: transcript.TextContent(strings.Join(parts, "\n\n"))}
	if len(r.Shape.Tools) > 0 {
		node.SetMeta("tools", r.Shape.Tools)
	}
	cc := struct {
		Record        string `json:"record"`
		ShapeHash     string `json:"shape_hash,omitempty"`
		ClientVersion string `json:"client_version,omitempty"`
	}{Record: "api-request-shape", ShapeHash: r.ShapeHash}
	if n.pred < 0 {
		_ = json.Unmarshal(r.Version, &cc.ClientVersion)
	}
	node.SetMeta("claude_code", cc)
	return node, nil
}

// attachmentRecord is the part of an attachment line its node keeps.
type attachmentRecord struct {
	UUID         string     `json:"uuid"`
	Timestamp    string     `json:"timestamp"`
	RenderedRole string     `json:"renderedRole"`
	Rendered     []rendered `json:"rendered"`
	Attachment   attachment `json:"attachment"`
	// Version and Entrypoint, read raw as a message's are, name the
	// client on a chain's first node: an attachment moves up before the
	// prompt it came with (closeGroup), so it may be that node.
	Version    json.RawMessage `json:"version"`
	Entrypoint json.RawMessage `json:"entrypoint"`
}

// buildAttachment builds an attachment node from its rendered content. A
// system-role one is sent without its <system-reminder> wrapper (Claude
// Code unwraps the text it puts in a system message) and is marked
// system_message, so render sends it as a system-role message.
func (p *planner) buildAttachment(n *pnode) (transcript.Node, error) {
	buf := make([]byte, n.first.n)
	if _, err := p.open[n.first.file].ReadAt(buf, n.first.off); err != nil {
		return transcript.Node{}, p.errorf(n.first, "re-read: %v", err)
	}
	var r attachmentRecord
	if err := json.Unmarshal(buf, &r); err != nil {
		return transcript.Node{}, p.errorf(n.first, "attachment: %s", jsonErrorText(err))
	}
	var parts []string
	for _, x := range r.Rendered {
		c := x.Content
		if n.kind == kindAttachSystem {
			c = unwrapReminder(c)
		}
		if c != "" {
			parts = append(parts, c)
		}
	}
	if len(parts) == 0 {
		// Written without rendered content (before 2.1.3xx): rebuilt.
		if c, ok := r.Attachment.message(); ok {
			if n.kind == kindAttachSystem {
				c = unwrapReminder(c)
			}
			parts = append(parts, c)
		}
	}
	node := transcript.Node{ID: n.id, Role: n.role(), Predecessor: p.idOf(n.pred), Caller: p.idOf(n.caller),
		CreatedAt: r.Timestamp, Content: transcript.TextContent(strings.Join(parts, "\n\n"))}
	if n.kind == kindAttachSystem {
		node.SetMeta("system_message", true)
	}
	meta := struct {
		Attachment    string `json:"attachment"`
		IsSidechain   bool   `json:"is_sidechain,omitempty"`
		ClientVersion string `json:"client_version,omitempty"`
		Entrypoint    string `json:"entrypoint,omitempty"`
	}{Attachment: r.Attachment.Type, IsSidechain: n.sidechain}
	if n.pred < 0 {
		_ = json.Unmarshal(r.Version, &meta.ClientVersion)
		_ = json.Unmarshal(r.Entrypoint, &meta.Entrypoint)
	}
	node.SetMeta("claude_code", meta)
	return node, nil
}

// buildAgentContext builds the parent's message placed before a
// sub-agent's second request (agentcontext.go), timed as the line it
// follows.
func (p *planner) buildAgentContext(i int32, n *pnode) (transcript.Node, error) {
	node := transcript.Node{ID: n.id, Role: n.role(), Predecessor: p.idOf(n.pred), Caller: p.idOf(n.caller),
		Content: transcript.TextContent(p.contextText[i])}
	if n.first.n > 0 {
		var r fullRecord
		if err := p.read(n.first, &r, false); err != nil {
			return transcript.Node{}, err
		}
		node.CreatedAt = r.Timestamp
	}
	node.SetMeta("system_message", true)
	node.SetMeta("claude_code", struct {
		Rebuilt     string `json:"rebuilt"`
		IsSidechain bool   `json:"is_sidechain"`
	}{"the agent types and MCP instructions a sub-agent's second request carries from its parent (not written before 2.1.259)", true})
	return node, nil
}

// unwrapReminder strips one <system-reminder> wrapper.
func unwrapReminder(s string) string {
	const open, closing = "<system-reminder>\n", "\n</system-reminder>"
	if strings.HasPrefix(s, open) && strings.HasSuffix(s, closing) && len(s) >= len(open)+len(closing) {
		return s[len(open) : len(s)-len(closing)]
	}
	return s
}

// read decodes one line again; a line whose message is needed must have
// a readable one (the first pass checked it).
func (p *planner) read(ref lineRef, r *fullRecord, needMessage bool) error {
	buf := make([]byte, ref.n)
	if _, err := p.open[ref.file].ReadAt(buf, ref.off); err != nil {
		return p.errorf(ref, "re-read: %v", err)
	}
	if err := decodeRecord(buf, r, &r.badMessage); err != nil {
		return p.errorf(ref, "expected a Claude Code record: %s", jsonErrorText(err))
	}
	if needMessage && (r.Message == nil || r.badMessage != "") {
		return p.errorf(ref, "expected a message object")
	}
	return nil
}

func (p *planner) idOf(i int32) string {
	if i < 0 {
		return ""
	}
	return p.peek(i).id
}

func (p *planner) buildMessage(n *pnode, warns *[]builtWarning) (transcript.Node, error) {
	node := transcript.Node{ID: n.id, Role: n.role(), Predecessor: p.idOf(n.pred), Caller: p.idOf(n.caller)}
	meta := ccMeta{IsSidechain: n.sidechain}
	accepted := map[string]bool{}
	for _, id := range n.results {
		accepted[id] = true
	}
	seenCalls := map[string]bool{}
	var blocks []transcript.Block
	var lastUsage json.RawMessage
	lines := n.lines()
	single := len(lines) == 1
	useBlocks := !single
	for k, ref := range lines {
		var r fullRecord
		if err := p.read(ref, &r, true); err != nil {
			return node, err
		}
		m := r.Message
		if k == 0 {
			node.CreatedAt = r.Timestamp
			meta.MessageID, meta.RequestID, meta.AgentID = m.ID, r.RequestID, r.AgentID
			meta.IsMeta = r.IsMeta
			if n.pred < 0 || r.ParentUUID == "" {
				// A chain's first message: the import may put an
				// attachment before it.
				_ = json.Unmarshal(r.Version, &meta.ClientVersion)
				_ = json.Unmarshal(r.Entrypoint, &meta.Entrypoint)
			}
		}
		if !single {
			meta.UUIDs = append(meta.UUIDs, r.UUID)
		}
		if m.Model != "" {
			meta.Model = m.Model
		}
		if m.StopReason != "" {
			meta.StopReason = m.StopReason
		}
		meta.APIError = meta.APIError || r.IsAPIErrorMessage
		if len(trimSpace(m.Usage)) > 0 && string(trimSpace(m.Usage)) != "null" {
			lastUsage = m.Usage
		}
		text, bl, isBlocks, err := decodeContent[block](m.Content)
		if err != nil {
			return node, p.errorf(ref, "%s", jsonErrorText(err))
		}
		if !isBlocks {
			if single {
				if sent, ok := notificationSent(text, &r); ok && n.kind == kindUser {
					text, meta.IsMeta = sent, true
				}
				node.Content = transcript.TextContent(text)
				continue
			}
			if text != "" {
				blocks = append(blocks, transcript.Block{Type: transcript.BlockText, Text: text})
			}
			continue
		}
		useBlocks = true
		blocks, meta.Unmatched = convertBlocks(bl, m.Content, accepted, seenCalls, blocks, meta.Unmatched)
	}
	if useBlocks {
		node.Content = transcript.Content{Blocks: blocks, IsBlocks: true}
	}
	if n.kind == kindAssistant && lastUsage != nil {
		node.Usage = convertUsage(lastUsage, lines[len(lines)-1], warns)
	}
	if n.kind != kindAssistant {
		meta.Model, meta.StopReason = "", ""
	}
	node.SetMeta("claude_code", meta)
	return node, nil
}

// buildSummary builds the summary node of a compaction (docs/FORMAT.md §4).
func (p *planner) buildSummary(n *pnode, warns *[]builtWarning) (transcript.Node, error) {
	var r fullRecord
	if err := p.read(n.first, &r, false); err != nil {
		return transcript.Node{}, err
	}
	meta := ccMeta{BoundaryUUID: r.UUID, CompactMetadata: r.CompactMetadata}
	var text string
	if n.sum.text.line > 0 {
		var s fullRecord
		if err := p.read(n.sum.text, &s, true); err != nil {
			return transcript.Node{}, err
		}
		meta.SummaryUUID = s.UUID
		m := s.Message
		t, blocks, _, err := decodeContent[scanBlock](m.Content)
		if err != nil {
			return transcript.Node{}, p.errorf(n.sum.text, "%s", jsonErrorText(err))
		}
		var parts []string
		if t != "" {
			parts = append(parts, t)
		}
		for _, b := range blocks {
			if b.Type == "text" {
				parts = append(parts, b.Text)
			}
		}
		text = strings.Join(parts, "\n")
	} else {
		var c string
		_ = json.Unmarshal(r.Content, &c)
		text = strings.TrimSpace(c + " (Claude Code's summary text is not in the file)")
		*warns = append(*warns, builtWarning{n.first, "compaction boundary without its summary text"})
	}
	// The summary covers every turn before it: handed over as its span
	// (docs/FORMAT.md §4), which the store checks by walking the chain,
	// rather than as a list of every id, which a session compacting
	// hundreds of times would build, encode and decode again each time.
	var span transcript.CoverSpan
	if n.sum.count > 0 {
		span = transcript.CoverSpan{First: p.peek(n.sum.first).id, Last: p.peek(n.sum.last).id, Count: n.sum.count}
	}
	node := transcript.Node{ID: n.id, Role: transcript.SummaryRole, Name: transcript.SummaryName,
		Predecessor: p.idOf(n.pred), CreatedAt: r.Timestamp,
		Content: transcript.TextContent(transcript.SummaryPrefix + text)}
	node.SetMeta("compaction", true)
	if span.Count > 0 {
		node.SetMeta(transcript.MetaCoversSpan, span)
	} else {
		node.SetMeta(transcript.MetaCoversIDs, []string(nil)) // refused by the store, as before
	}
	node.SetMeta("claude_code", meta)
	return node, nil
}

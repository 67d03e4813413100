package crush

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// part is one element of a message's parts: Crush's partWrapper.
type part struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// partData holds the fields of every part type Crush writes (its
// internal/message content types; binary's fields carry no JSON tags).
type partData struct {
	Text       string `json:"text"`
	Thinking   string `json:"thinking"`
	Signature  string `json:"signature"`
	URL        string `json:"url"`
	ID         string `json:"id"`
	Name       string `json:"name"`
	Input      string `json:"input"`
	ToolCallID string `json:"tool_call_id"`
	Content    string `json:"content"`
	Data       string `json:"data"`
	MIMEType   string `json:"mime_type"`
	IsError    bool   `json:"is_error"`
	Command    string `json:"command"`
	Output     string `json:"output"`
	ExitCode   int    `json:"exit_code"`
	Path       string `json:"Path"`
	BinMIME    string `json:"MIMEType"`
	BinData    []byte `json:"Data"`
}

// finishReason is why a finish part imports as no content of its own:
// Crush writes one on every message and never sends it.
const finishReason = "how the message ended; bookkeeping of its message, never sent"

// conv is the state of one session's import.
type conv struct {
	file, session string
	sink          transcript.ImportSink
	last          string
	chain         []string // every non-summary node so far, in order
	open          []string // tool calls of the last assistant node not answered yet
	used          map[string]bool
	// calls and results are the tool call ids of the calls and results
	// Crush knew when it sent the current message (its knownToolCallIDs,
	// knownToolResultIDs): those of its segment (read).
	calls, results map[string]bool
	// callNodes maps each call id to the node holding it (a sub-agent's
	// caller); caller is the caller of every node of a sub-agent's
	// session ("" in a top-level session).
	callNodes map[string]string
	caller    string
	// summaryID is the session's summary_message_id: in a database older
	// than is_summary_message, the only mark of its summary (read).
	summaryID string
}

// row is one message row, its parts decoded, with the calls and results
// of its segment.
type row struct {
	calls, results  map[string]bool
	id, role, model string
	created         int64
	summary         bool
	parts           []part
	datas           []partData
}

func importSession(ctx context.Context, db *sql.DB, file string, s sessionRow, kids map[string][]sessionRow, opts Options, target transcript.ImportTarget) error {
	sink, err := target.Conversation(s.id)
	if err != nil {
		return err
	}
	c := newConv(file, s.id, sink, map[string]bool{}, "")
	c.summaryID = s.summaryID
	model, err := c.run(ctx, db, opts)
	if err != nil {
		return err
	}
	head := c.last
	if err := c.subagents(ctx, db, kids, opts, map[string]bool{s.id: true}); err != nil {
		return err
	}
	if head != "" {
		sink.SetHead(head)
	}
	if model != "" {
		sink.SetModel(model)
	}
	reportWindow(ctx, db, file, s.id, model, opts.Env, sink)
	return nil
}

func newConv(file, session string, sink transcript.ImportSink, used map[string]bool, caller string) *conv {
	return &conv{file: file, session: session, sink: sink, used: used, calls: map[string]bool{}, results: map[string]bool{},
		callNodes: map[string]string{}, caller: caller}
}

// run imports the session's messages and returns the model of its last
// assistant message.
func (c *conv) run(ctx context.Context, db *sql.DB, opts Options) (string, error) {
	msgs, err := c.read(ctx, db, opts)
	if err != nil {
		return "", err
	}
	c.sink.Count("session", transcript.OutcomeMerged, "session metadata (title, token totals: Crush records no usage per request)")
	model := ""
	for _, r := range msgs {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		c.calls, c.results = r.calls, r.results
		if err := c.message(r); err != nil {
			return "", err
		}
		if r.model != "" && r.role == "assistant" {
			model = r.model
		}
	}
	return model, nil
}

// read decodes the session's messages in Crush's order and notes which tool
// calls and results each segment holds: Crush drops a result whose call is
// not in the list and answers a call that has no result with an error of
// its own, over the messages it sends — from the summary on once there is
// one (its getSessionMessages) — so each summary message starts a new
// segment.
//
// Crush before its migration 20250810000000 marked no message as a summary:
// its session's summary_message_id named the last one, from which on it
// sent the history (as a user message), as it does now.
func (c *conv) read(ctx context.Context, db *sql.DB, opts Options) ([]row, error) {
	query, args := `SELECT id, role, parts, COALESCE(model, ''), created_at, is_summary_message
		FROM messages WHERE session_id = ? ORDER BY created_at, rowid`, []any{c.session}
	if !hasColumn(ctx, db, "messages", "is_summary_message") {
		query, args = `SELECT id, role, parts, COALESCE(model, ''), created_at, id = ?
		FROM messages WHERE session_id = ? ORDER BY created_at, rowid`, []any{c.summaryID, c.session}
	}
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, input.Errorf(c.file, 0, "not a Crush database (messages table): %v", err)
	}
	defer rows.Close()
	var out []row
	calls, results := map[string]bool{}, map[string]bool{}
	for rows.Next() {
		var r row
		var raw string
		if err := rows.Scan(&r.id, &r.role, &raw, &r.model, &r.created, &r.summary); err != nil {
			return nil, input.Errorf(c.file, 0, "session %s: %v", c.session, err)
		}
		if len(raw) > opts.Max() {
			return nil, c.errorf(r.id, "parts is longer than the %d-byte limit (raise it with --max-line-bytes)", opts.Max())
		}
		if err := c.decode(&r, raw); err != nil {
			return nil, err
		}
		if r.summary {
			calls, results = map[string]bool{}, map[string]bool{}
		}
		r.calls, r.results = calls, results
		for i, p := range r.parts {
			switch {
			case p.Type == "tool_call" && r.role == "assistant":
				calls[r.datas[i].ID] = true
			case p.Type == "tool_result" && r.role == "tool":
				results[r.datas[i].ToolCallID] = true
			}
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, input.Errorf(c.file, 0, "session %s: %v", c.session, err)
	}
	return out, nil
}

func (c *conv) errorf(id, format string, args ...any) error {
	return input.Errorf(c.file, 0, "session %s, message %s: %s", c.session, id, fmt.Sprintf(format, args...))
}

// decode reads a row's parts.
func (c *conv) decode(r *row, raw string) error {
	if err := json.Unmarshal([]byte(raw), &r.parts); err != nil {
		return c.errorf(r.id, "parts must be a JSON array of {type, data}: %s", input.JSONErrorText(err))
	}
	r.datas = make([]partData, len(r.parts))
	for i, p := range r.parts {
		if len(p.Data) > 0 && string(p.Data) != "null" {
			if err := json.Unmarshal(p.Data, &r.datas[i]); err != nil {
				return c.errorf(r.id, "parts[%d] (%s): %s", i, p.Type, input.JSONErrorText(err))
			}
		}
	}
	return nil
}

// message imports one row as Crush sends it (its preparePrompt): a message
// with no parts, or an assistant message with no text, reasoning or call
// (cancelled before it returned anything), is not sent.
func (c *conv) message(r row) error {
	at := ""
	switch {
	case r.created > 1e11: // milliseconds, as the schema's comments say
		at = time.UnixMilli(r.created).UTC().Format(time.RFC3339Nano)
	case r.created > 0: // seconds, as Crush's queries write it
		at = time.Unix(r.created, 0).UTC().Format(time.RFC3339)
	}
	if len(r.parts) == 0 {
		c.sink.Count("message/"+r.role, transcript.OutcomeSkipped, "no parts: Crush does not send it")
		return nil
	}
	switch {
	case r.summary:
		return c.summary(r.id, r.parts, r.datas, at)
	case r.role == "user":
		return c.user(r.id, r.parts, r.datas, at)
	case r.role == "assistant":
		return c.assistant(r.id, r.parts, r.datas, at)
	case r.role == "tool":
		return c.tool(r.id, r.parts, r.datas, at)
	}
	return c.errorf(r.id, "role must be user, assistant or tool, got %q", r.role)
}

func (c *conv) newID(id string) string {
	out := input.ID(id, "m")
	for i := 2; c.used[out]; i++ {
		out = fmt.Sprintf("%s-%d", input.ID(id, "m"), i)
	}
	c.used[out] = true
	return out
}

func (c *conv) add(n transcript.Node, record string) error {
	n.Predecessor, n.Caller = c.last, c.caller
	if err := c.sink.Node(n); err != nil {
		return err
	}
	if record != "" { // "": a node Crush adds, counted by its caller
		c.sink.Count(record, transcript.OutcomeImported, "")
	}
	c.last = n.ID
	c.chain = append(c.chain, n.ID)
	return nil
}

// user is what Crush sends for a user message: its text (trimmed) with
// text attachments and bang-mode shell commands appended, then its images.
func (c *conv) user(id string, parts []part, datas []partData, at string) error {
	text := ""
	var attachments []partData
	var shells []string
	var images []transcript.Block
	for i, p := range parts {
		d := datas[i]
		switch p.Type {
		case "text":
			if text == "" {
				text = strings.TrimSpace(d.Text)
			}
		case "binary":
			if strings.HasPrefix(d.BinMIME, "text/") {
				attachments = append(attachments, d)
			} else {
				images = append(images, input.Image("", d.BinMIME, base64.StdEncoding.EncodeToString(d.BinData)))
			}
		case "image_url":
			images = append(images, input.Image(d.URL, "", ""))
		case "shell_command":
			shells = append(shells, fmt.Sprintf("$ %s\n%s\n(exit code %d)", d.Command, d.Output, d.ExitCode))
		case "finish":
			// Crush 0.90.0 ends every user message with one
			// (testdata/interop/crush).
			c.sink.Count("part/finish", transcript.OutcomeMerged, finishReason)
		default:
			c.sink.Count("part/"+p.Type, transcript.OutcomeSkipped, "a part Crush does not send in a user message")
		}
	}
	text = withAttachments(text, attachments)
	for _, s := range shells {
		if text != "" {
			text += "\n\n"
		}
		text += s
	}
	n := transcript.Node{ID: c.newID(id), Role: transcript.RoleUser, CreatedAt: at, Content: transcript.TextContent(text)}
	if len(images) > 0 {
		blocks := []transcript.Block{}
		if text != "" {
			blocks = append(blocks, transcript.Block{Type: transcript.BlockText, Text: text})
		}
		n.Content = transcript.Content{IsBlocks: true, Blocks: append(blocks, images...)}
	}
	return c.add(n, "message/user")
}

// withAttachments appends text attachments as Crush's
// PromptWithTextAttachments does.
func withAttachments(text string, files []partData) string {
	if len(files) == 0 {
		return text
	}
	var sb strings.Builder
	sb.WriteString(text)
	sb.WriteString("\n<system_info>The files below have been attached by the user, consider them in your response</system_info>\n")
	for _, f := range files {
		if f.Path != "" {
			fmt.Fprintf(&sb, "<file path='%s'>\n", f.Path)
		} else {
			sb.WriteString("<file>\n")
		}
		sb.WriteString("\n")
		sb.Write(f.BinData)
		sb.WriteString("\n</file>\n")
	}
	return sb.String()
}

// assistant is an assistant node: its reasoning, its text (trimmed) and
// its tool calls, whose input Crush keeps as the JSON text it streamed.
func (c *conv) assistant(id string, parts []part, datas []partData, at string) error {
	var text, thinking, signature string
	var calls []transcript.ToolCall
	for i, p := range parts {
		d := datas[i]
		switch p.Type {
		case "text":
			if text == "" {
				text = strings.TrimSpace(d.Text)
			}
		case "reasoning":
			if thinking == "" {
				thinking, signature = d.Thinking, d.Signature
			}
		case "tool_call":
			if d.ID == "" {
				return c.errorf(id, "parts[%d]: a tool_call without an id", i)
			}
			args := json.RawMessage(d.Input)
			if strings.TrimSpace(d.Input) == "" {
				args = json.RawMessage("{}")
			} else if !json.Valid(args) {
				args = input.Raw(d.Input)
			}
			if slices.ContainsFunc(calls, func(tc transcript.ToolCall) bool { return tc.ID == d.ID }) {
				// A provider that gave two calls one id: the store holds one
				// result per call, so the repeat (and its result) is text.
				c.sink.Warn(c.file, 0, fmt.Sprintf("session %s, message %s: tool call id %q repeats in the message; the repeat is not imported", c.session, id, d.ID))
				c.sink.Count("part/tool_call", transcript.OutcomeSkipped, "its id repeats a call of the same message")
				continue
			}
			calls = append(calls, transcript.ToolCall{ID: d.ID, Name: d.Name, Arguments: args})
		case "finish":
			c.sink.Count("part/finish", transcript.OutcomeMerged, finishReason)
		default:
			c.sink.Count("part/"+p.Type, transcript.OutcomeSkipped, "a part Crush does not send in an assistant message")
		}
	}
	if text == "" && thinking == "" && len(calls) == 0 {
		c.sink.Count("message/assistant", transcript.OutcomeSkipped, "no text, reasoning or tool call (cancelled): Crush does not send it")
		return nil
	}
	n := transcript.Node{ID: c.newID(id), Role: transcript.RoleAssistant, CreatedAt: at, ToolCalls: calls, Content: transcript.TextContent(text)}
	if thinking != "" {
		blocks := []transcript.Block{{Type: transcript.BlockThinking, Text: thinking, Signature: signature}}
		if text != "" {
			blocks = append(blocks, transcript.Block{Type: transcript.BlockText, Text: text})
		}
		n.Content = transcript.Content{IsBlocks: true, Blocks: blocks}
	}
	c.open = nil
	for _, call := range calls {
		c.open = append(c.open, call.ID)
		c.callNodes[call.ID] = n.ID
	}
	if err := c.add(n, "message/assistant"); err != nil {
		return err
	}
	return c.interrupted(id, calls, at)
}

// interruptedText is the result Crush sends for a tool call that has no
// result in the session (its syntheticToolResultsForOrphanedCalls).
const interruptedText = "tool call was interrupted and did not produce a result, you may retry this call if the result is still needed"

// interrupted adds, after an assistant node, the error result Crush sends
// for each of its calls that no tool message answers.
func (c *conv) interrupted(id string, calls []transcript.ToolCall, at string) error {
	for i, call := range calls {
		if c.results[call.ID] {
			continue
		}
		n := transcript.Node{ID: c.newID(fmt.Sprintf("%s-interrupted-%d", id, i)), Role: transcript.RoleTool, ToolCallID: call.ID, Name: call.Name,
			CreatedAt: at, Content: transcript.TextContent(interruptedText)}
		n.SetMeta("is_error", true)
		if err := c.add(n, ""); err != nil {
			return err
		}
		c.sink.Count("part/tool_call", transcript.OutcomeMerged, "no result recorded: Crush sends an interrupted-call error for it, imported as that result")
		c.open = slices.DeleteFunc(c.open, func(o string) bool { return o == call.ID })
	}
	return nil
}

// tool is one tool node per result of a tool message. A result that
// answers no open call is kept as a user node's text, with a warning: the
// store accepts a result only for an open call.
func (c *conv) tool(id string, parts []part, datas []partData, at string) error {
	for i, p := range parts {
		d := datas[i]
		if p.Type == "finish" { // as on every tool message of Crush 0.90.0
			c.sink.Count("part/finish", transcript.OutcomeMerged, finishReason)
			continue
		}
		if p.Type != "tool_result" {
			c.sink.Count("part/"+p.Type, transcript.OutcomeSkipped, "a part Crush does not send in a tool message")
			continue
		}
		k := -1
		for j, o := range c.open {
			if o == d.ToolCallID {
				k = j
			}
		}
		if !c.calls[d.ToolCallID] {
			c.sink.Count("part/tool_result", transcript.OutcomeSkipped, "its tool call is not in the session: Crush drops it")
			continue
		}
		nid := c.newID(fmt.Sprintf("%s-%d", id, i))
		if k < 0 {
			c.sink.Warn(c.file, 0, fmt.Sprintf("session %s, message %s: tool_result for %q answers no open tool call; kept as text", c.session, id, d.ToolCallID))
			n := transcript.Node{ID: nid, Role: transcript.RoleUser, CreatedAt: at, Content: transcript.TextContent("[tool_result for " + d.ToolCallID + "]\n" + d.Content)}
			if err := c.add(n, "part/tool_result"); err != nil {
				return err
			}
			continue
		}
		c.open = append(c.open[:k:k], c.open[k+1:]...)
		n := transcript.Node{ID: nid, Role: transcript.RoleTool, ToolCallID: d.ToolCallID, Name: d.Name, CreatedAt: at, Content: transcript.TextContent(d.Content)}
		if d.Data != "" && !d.IsError {
			n.Content = transcript.Content{IsBlocks: true, Blocks: []transcript.Block{input.Image("", d.MIMEType, d.Data)}}
		}
		if d.IsError {
			n.SetMeta("is_error", true)
		}
		if err := c.add(n, "part/tool_result"); err != nil {
			return err
		}
	}
	return nil
}

// summary is Crush's summary message: from it on, Crush sends the summary
// as a user message in place of everything before it, so the summary node
// covers every node so far.
func (c *conv) summary(id string, parts []part, datas []partData, at string) error {
	text := ""
	for i, p := range parts {
		switch {
		case p.Type == "text" && text == "":
			text = strings.TrimSpace(datas[i].Text)
		case p.Type == "finish":
			c.sink.Count("part/finish", transcript.OutcomeMerged, finishReason)
		default:
			c.sink.Count("part/"+p.Type, transcript.OutcomeSkipped, "Crush sends only the summary's text")
		}
	}
	if len(c.chain) == 0 {
		c.sink.Count("message/summary", transcript.OutcomeSkipped, "a summary with no message before it to cover")
		return nil
	}
	if c.caller != "" {
		c.sink.Warn(c.file, 0, fmt.Sprintf("session %s, message %s: a summary in a sub-agent's session is not imported (a summary may not sit in a caller subtree); its turns stay as they are", c.session, id))
		c.sink.Count("message/summary", transcript.OutcomeSkipped, "a summary in a sub-agent's session: a summary may not sit in a caller subtree")
		return nil
	}
	n := transcript.Node{ID: transcript.SummaryIDPrefix + c.newID(id), Role: transcript.SummaryRole, Name: transcript.SummaryName,
		CreatedAt: at, Content: transcript.TextContent(transcript.SummaryPrefix + text)}
	n.SetMeta("compaction", true)
	n.SetMeta("covers_ids", append([]string(nil), c.chain...))
	n.SetMeta("source", "crush summary message")
	if err := c.sink.Node(n); err != nil {
		return err
	}
	c.open = nil
	c.sink.Count("message/summary", transcript.OutcomeImported, "")
	return nil
}

// hasColumn reports whether table has the column (false when it cannot
// tell: the query that needs it then names what is missing).
func hasColumn(ctx context.Context, db *sql.DB, table, column string) bool {
	var n int
	err := db.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`, table, column).Scan(&n)
	return err != nil || n > 0
}

package crush

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
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

// conv is the state of one session's import.
type conv struct {
	file, session string
	sink          transcript.ImportSink
	last          string
	chain         []string // every non-summary node so far, in order
	open          []string // tool calls of the last assistant node not answered yet
	used          map[string]bool
}

func importSession(ctx context.Context, db *sql.DB, file string, s sessionRow, opts Options, target transcript.ImportTarget) error {
	rows, err := db.QueryContext(ctx, `SELECT id, role, parts, COALESCE(model, ''), created_at, is_summary_message
		FROM messages WHERE session_id = ? ORDER BY created_at, rowid`, s.id)
	if err != nil {
		return input.Errorf(file, 0, "not a Crush database (messages table): %v", err)
	}
	defer rows.Close()
	sink, err := target.Conversation(s.id)
	if err != nil {
		return err
	}
	sink.Count("session", transcript.OutcomeMerged, "session metadata (title, token totals: Crush records no usage per request)")
	c := &conv{file: file, session: s.id, sink: sink, used: map[string]bool{}}
	model := ""
	for rows.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		var id, role, parts, m string
		var created int64
		var summary bool
		if err := rows.Scan(&id, &role, &parts, &m, &created, &summary); err != nil {
			return input.Errorf(file, 0, "session %s: %v", s.id, err)
		}
		if len(parts) > opts.Max() {
			return input.Errorf(file, 0, "session %s, message %s: parts is longer than the %d-byte limit (raise it with --max-line-bytes)", s.id, id, opts.Max())
		}
		if err := c.message(id, role, parts, created, summary); err != nil {
			return err
		}
		if m != "" && role == "assistant" {
			model = m
		}
	}
	if err := rows.Err(); err != nil {
		return input.Errorf(file, 0, "session %s: %v", s.id, err)
	}
	if c.last != "" {
		sink.SetHead(c.last)
	}
	if model != "" {
		sink.SetModel(model)
	}
	return nil
}

func (c *conv) errorf(id, format string, args ...any) error {
	return input.Errorf(c.file, 0, "session %s, message %s: %s", c.session, id, fmt.Sprintf(format, args...))
}

// message imports one row.
func (c *conv) message(id, role, raw string, created int64, summary bool) error {
	var parts []part
	if err := json.Unmarshal([]byte(raw), &parts); err != nil {
		return c.errorf(id, "parts must be a JSON array of {type, data}: %s", input.JSONErrorText(err))
	}
	datas := make([]partData, len(parts))
	for i, p := range parts {
		if len(p.Data) > 0 && string(p.Data) != "null" {
			if err := json.Unmarshal(p.Data, &datas[i]); err != nil {
				return c.errorf(id, "parts[%d] (%s): %s", i, p.Type, input.JSONErrorText(err))
			}
		}
	}
	at := ""
	switch {
	case created > 1e11: // milliseconds, as the schema's comments say
		at = time.UnixMilli(created).UTC().Format(time.RFC3339Nano)
	case created > 0: // seconds, as Crush's queries write it
		at = time.Unix(created, 0).UTC().Format(time.RFC3339)
	}
	switch {
	case summary:
		return c.summary(id, parts, datas, at)
	case role == "user":
		return c.user(id, parts, datas, at)
	case role == "assistant":
		return c.assistant(id, parts, datas, at)
	case role == "tool":
		return c.tool(id, parts, datas, at)
	}
	return c.errorf(id, "role must be user, assistant or tool, got %q", role)
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
	n.Predecessor = c.last
	if err := c.sink.Node(n); err != nil {
		return err
	}
	c.sink.Count(record, transcript.OutcomeImported, "")
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
			calls = append(calls, transcript.ToolCall{ID: d.ID, Name: d.Name, Arguments: args})
		case "finish":
			c.sink.Count("part/finish", transcript.OutcomeMerged, "how the response ended; bookkeeping of its message")
		default:
			c.sink.Count("part/"+p.Type, transcript.OutcomeSkipped, "a part Crush does not send in an assistant message")
		}
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
	}
	return c.add(n, "message/assistant")
}

// tool is one tool node per result of a tool message. A result that
// answers no open call is kept as a user node's text, with a warning: the
// store accepts a result only for an open call.
func (c *conv) tool(id string, parts []part, datas []partData, at string) error {
	for i, p := range parts {
		d := datas[i]
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
			c.sink.Count("part/finish", transcript.OutcomeMerged, "how the response ended; bookkeeping of its message")
		default:
			c.sink.Count("part/"+p.Type, transcript.OutcomeSkipped, "Crush sends only the summary's text")
		}
	}
	if len(c.chain) == 0 {
		c.sink.Count("message/summary", transcript.OutcomeSkipped, "a summary with no message before it to cover")
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

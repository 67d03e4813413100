package gemini

// This file builds the nodes of the folded messages: a gemini message's assistant and tool nodes, a user message's user or tool nodes.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

type record struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Timestamp string          `json:"timestamp"`
	Content   json.RawMessage `json:"content"`
	Parts     json.RawMessage `json:"parts"`
	Thoughts  []struct {
		Subject     string `json:"subject"`
		Description string `json:"description"`
	} `json:"thoughts"`
	Tokens *struct {
		Input    int64 `json:"input"`
		Output   int64 `json:"output"`
		Cached   int64 `json:"cached"`
		Thoughts int64 `json:"thoughts"`
		Tool     int64 `json:"tool"`
		Total    int64 `json:"total"`
	} `json:"tokens"`
	Model     string     `json:"model"`
	ToolCalls []toolCall `json:"toolCalls"`
}

type toolCall struct {
	ID     string          `json:"id"`
	Name   string          `json:"name"`
	Args   json.RawMessage `json:"args"`
	Status string          `json:"status"`
	// AgentID is the session id of the sub-agent an invoke_agent call ran.
	AgentID string `json:"agentId"`
	Result  []struct {
		FunctionResponse *functionResponse `json:"functionResponse"`
	} `json:"result"`
}

type functionResponse struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

// part is one Gemini Part.
type part struct {
	Text       *string `json:"text"`
	Thought    bool    `json:"thought"`
	InlineData *struct {
		MimeType string `json:"mimeType"`
		Data     string `json:"data"`
	} `json:"inlineData"`
	FileData *struct {
		MimeType string `json:"mimeType"`
		FileURI  string `json:"fileUri"`
	} `json:"fileData"`
	FunctionCall *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *functionResponse `json:"functionResponse"`
}

// parseParts reads a message's content (or parts) as Gemini parts; a
// string or anything else is no parts.
func parseParts(raw, parts json.RawMessage) []part {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = parts
	}
	var ps []part
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &ps) != nil {
		return nil
	}
	return ps
}

// emit writes the folded messages in the order they were created, so each
// one's predecessor (the last node of the message before it) exists.
func (fo *fold) emit() error {
	tails := make([]string, len(fo.msgs))
	emitted := make([][]string, len(fo.msgs))
	answered := fo.answeredCalls()
	model := ""
	for i, m := range fo.msgs {
		if done, err := fo.emitCompression(m, tails, emitted, i); done || err != nil {
			if err != nil {
				return err
			}
			continue
		}
		pred := ""
		if m.pred >= 0 {
			pred = tails[m.pred]
		}
		tails[i] = pred
		var r record
		if err := json.Unmarshal(m.raw, &r); err != nil {
			return input.Errorf(fo.file, m.line, "message %q: %s", m.key, input.JSONErrorText(err))
		}
		kind := "message/" + r.Type
		var nodes []transcript.Node
		switch r.Type {
		case "user":
			nodes = userNodes(m, r)
		case "gemini", "model":
			nodes = fo.assistant(m, r, answered[i])
			if r.Model != "" {
				model = r.Model
			}
		case "info", "error", "warning":
			fo.sink.Count(kind, transcript.OutcomeSkipped, "a notice shown to the user, not sent to the model")
			continue
		default:
			fo.sink.Count(kind, transcript.OutcomeSkipped, "message type not known to this importer")
			continue
		}
		fo.sink.Count(kind, transcript.OutcomeImported, "")
		var err error
		if pred, err = fo.emitNodes(m, r, nodes, pred); err != nil {
			return err
		}
		tails[i] = pred
		for _, n := range nodes {
			emitted[i] = append(emitted[i], n.ID)
		}
	}
	if fo.sub {
		return nil
	}
	if len(fo.path) > 0 {
		if head := tails[fo.path[len(fo.path)-1]]; head != "" {
			fo.sink.SetHead(head)
		}
	}
	if model != "" {
		fo.sink.SetModel(model)
	}
	return nil
}

// answeredCalls holds, per message, the call ids a following user message
// answers with a functionResponse: Gemini CLI 0.61 records a result
// twice, in the call's toolCalls[].result and as that user message,
// which is what it sends. The user message becomes the tool node.
func (fo *fold) answeredCalls() []map[string]bool {
	answered := make([]map[string]bool, len(fo.msgs))
	for _, m := range fo.msgs {
		if m.pred < 0 {
			continue
		}
		var r record
		if json.Unmarshal(m.raw, &r) != nil || r.Type != "user" {
			continue
		}
		for _, p := range parseParts(r.Content, r.Parts) {
			if fr := p.FunctionResponse; fr != nil {
				if answered[m.pred] == nil {
					answered[m.pred] = map[string]bool{}
				}
				answered[m.pred][fr.ID] = true
			}
		}
	}
	return answered
}

// emitNodes hands one message's nodes to the sink as a chain after pred
// and returns the chain's new tail.
func (fo *fold) emitNodes(m *message, r record, nodes []transcript.Node, pred string) (string, error) {
	for j := range nodes {
		n := &nodes[j]
		if j > 0 {
			// A result's id is derived from its message's; a message
			// may already hold it (ids are the export's to choose).
			for fo.used[n.ID] > 0 {
				n.ID += "~"
			}
			fo.used[n.ID] = 1
		}
		n.Predecessor = pred
		n.Caller = fo.caller
		n.CreatedAt = r.Timestamp
		if m.rewound {
			n.SetMeta("gemini_rewound", true)
		}
		if err := fo.sink.Node(*n); err != nil {
			return "", err
		}
		pred = n.ID
	}
	return pred, nil
}

// assistant is a gemini message: its text, thoughts and tool calls, then
// one tool node per call result (Gemini records results with the call).
func (fo *fold) assistant(m *message, r record, answered map[string]bool) []transcript.Node {
	a := transcript.Node{ID: m.key, Role: transcript.RoleAssistant}
	c := content(r.Content, r.Parts)
	var blocks []transcript.Block
	for _, t := range r.Thoughts {
		text := t.Description
		if t.Subject != "" {
			text = t.Subject + ": " + text
		}
		blocks = append(blocks, transcript.Block{Type: transcript.BlockThinking, Text: text})
	}
	if len(blocks) > 0 {
		if c.IsBlocks {
			blocks = append(blocks, c.Blocks...)
		} else if c.Text != "" {
			blocks = append(blocks, transcript.Block{Type: transcript.BlockText, Text: c.Text})
		}
		c = transcript.Content{IsBlocks: true, Blocks: blocks}
	}
	a.Content = c
	if t := r.Tokens; t != nil {
		a.Usage = &transcript.Usage{InputTokens: t.Input, OutputTokens: t.Output, CachedInputTokens: t.Cached,
			Extra: map[string]json.RawMessage{"thoughts_tokens": input.Raw(t.Thoughts), "tool_tokens": input.Raw(t.Tool),
				"total_tokens": input.Raw(t.Total), "input_includes_cached": json.RawMessage("true")}}
	}
	nodes := []transcript.Node{a}
	if len(r.ToolCalls) == 0 {
		// A rewritten history (after a resume or a compression) may keep
		// the call only as a functionCall part of the content.
		for _, p := range parseParts(r.Content, r.Parts) {
			if fc := p.FunctionCall; fc != nil {
				r.ToolCalls = append(r.ToolCalls, toolCall{ID: fc.ID, Name: fc.Name, Args: fc.Args})
			}
		}
	}
	var unanswered []string
	for k, tc := range r.ToolCalls {
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("%s-call%d", m.key, k+1)
		}
		args := tc.Args
		if len(bytes.TrimSpace(args)) == 0 {
			args = json.RawMessage("{}")
		}
		nodes[0].ToolCalls = append(nodes[0].ToolCalls, transcript.ToolCall{ID: id, Name: tc.Name, Arguments: args})
		if tc.AgentID != "" {
			fo.agents[tc.AgentID] = nodes[0].ID
		}
		if answered[id] {
			if len(tc.Result) > 0 {
				fo.sink.Count("toolCalls.result", transcript.OutcomeMerged, "the same result is the following user message's functionResponse, imported as the tool node")
			}
			continue
		}
		var texts []string
		for _, res := range tc.Result {
			if res.FunctionResponse != nil {
				texts = append(texts, responseText(res.FunctionResponse.Response))
			}
		}
		if len(tc.Result) == 0 {
			unanswered = append(unanswered, id)
			continue
		}
		t := transcript.Node{ID: fmt.Sprintf("%s.r%d", m.key, k+1), Role: transcript.RoleTool, ToolCallID: id, Name: tc.Name,
			Content: transcript.TextContent(strings.Join(texts, "\n"))}
		if tc.Status != "" && tc.Status != "success" {
			t.SetMeta("is_error", true)
			t.SetMeta("gemini_status", tc.Status)
		}
		nodes = append(nodes, t)
	}
	if len(unanswered) > 0 {
		nodes[0].SetMeta("unanswered_tool_calls", unanswered)
		fo.sink.Warn(fo.file, m.line, fmt.Sprintf("message %q: %d tool call(s) without a result: imported and flagged in metadata.unanswered_tool_calls", m.key, len(unanswered)))
	}
	return nodes
}

// responseText is a functionResponse.response as text: its "output" (or
// "error") string when there is one, else its JSON.
func responseText(raw json.RawMessage) string {
	var obj struct {
		Output *string `json:"output"`
		Error  *string `json:"error"`
	}
	if json.Unmarshal(raw, &obj) == nil {
		if obj.Output != nil {
			return *obj.Output
		}
		if obj.Error != nil {
			return *obj.Error
		}
	}
	return input.Text(raw)
}

// content reads a message's content: a string, or Gemini parts
// ({text}, {inlineData}, {fileData}, …).
func content(raw, parts json.RawMessage) transcript.Content {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return transcript.TextContent(s)
	}
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = parts
	}
	var ps []part
	if json.Unmarshal(raw, &ps) != nil {
		if t := input.Text(raw); t != "" {
			return transcript.TextContent(t)
		}
		return transcript.TextContent("")
	}
	return partsContent(ps)
}

// partsContent is the text and media of parts; function calls and
// responses are not content (they become tool calls and tool nodes).
func partsContent(ps []part) transcript.Content {
	var blocks []transcript.Block
	for _, p := range ps {
		switch {
		case p.Text != nil && p.Thought:
			blocks = append(blocks, transcript.Block{Type: transcript.BlockThinking, Text: *p.Text})
		case p.Text != nil:
			blocks = append(blocks, transcript.Block{Type: transcript.BlockText, Text: *p.Text})
		case p.InlineData != nil:
			blocks = append(blocks, input.Image("", p.InlineData.MimeType, p.InlineData.Data))
		case p.FileData != nil:
			blocks = append(blocks, input.Image(p.FileData.FileURI, p.FileData.MimeType, ""))
		}
	}
	if len(blocks) == 1 && blocks[0].Type == transcript.BlockText {
		return transcript.TextContent(blocks[0].Text)
	}
	return transcript.Content{IsBlocks: true, Blocks: blocks}
}

// userNodes is a user message: one tool node per functionResponse part (in
// Gemini's wire format a function's result is a user turn), then a user node
// for the rest when there is any.
func userNodes(m *message, r record) []transcript.Node {
	ps := parseParts(r.Content, r.Parts)
	var tools []transcript.Node
	var rest []part
	answered := map[string]bool{}
	for _, p := range ps {
		fr := p.FunctionResponse
		if fr == nil {
			rest = append(rest, p)
			continue
		}
		// Gemini CLI's compression merges a resumed call's two results
		// (docs/INTEROP-gemini-cli.md) into one message: a call has one
		// result node.
		if fr.ID != "" && answered[fr.ID] {
			continue
		}
		answered[fr.ID] = true
		id := m.key
		if len(tools) > 0 {
			id = fmt.Sprintf("%s.r%d", m.key, len(tools)+1)
		}
		t := transcript.Node{ID: id, Role: transcript.RoleTool, ToolCallID: fr.ID, Name: fr.Name,
			Content: transcript.TextContent(responseText(fr.Response))}
		if !plainOutput(fr.Response) {
			// Kept whole so the gemini format renders it as it was sent.
			t.SetMeta("gemini_response", json.RawMessage(fr.Response))
		}
		if isErrorResponse(fr.Response) {
			t.SetMeta("is_error", true)
		}
		tools = append(tools, t)
	}
	if len(tools) == 0 {
		return []transcript.Node{{ID: m.key, Role: transcript.RoleUser, Content: content(r.Content, r.Parts)}}
	}
	if len(rest) > 0 {
		tools = append(tools, transcript.Node{ID: m.key + ".text", Role: transcript.RoleUser, Content: partsContent(rest)})
	}
	return tools
}

// plainOutput reports whether a functionResponse.response is exactly
// {"output": "<text>"}, which the tool node's text content says in full.
func plainOutput(raw json.RawMessage) bool {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || len(obj) != 1 {
		return false
	}
	var s string
	return json.Unmarshal(obj["output"], &s) == nil
}

func isErrorResponse(raw json.RawMessage) bool {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return false
	}
	_, ok := obj["error"]
	return ok
}

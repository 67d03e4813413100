// Package openaibody imports an OpenAI Chat Completions conversation: a
// JSON array of messages, or a request body {"model", "messages", …}. The
// messages become a linear chain: system and developer messages system
// nodes, assistant tool_calls tool calls, tool messages tool nodes. The
// array is decoded one message at a time. It only reads the files and
// hands nodes to a transcript.ImportSink.
package openaibody

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// Options tune the import.
type Options = input.Options

// Detect reports whether head is a messages array or a body with
// "messages" whose messages have a "role".
func Detect(head []byte) bool {
	h := bytes.TrimSpace(head)
	if len(h) == 0 {
		return false
	}
	switch h[0] {
	case '[':
		return bytes.Contains(h, []byte(`"role"`)) && !bytes.Contains(h, []byte(`"mapping"`))
	case '{':
		return bytes.Contains(h, []byte(`"messages"`)) && bytes.Contains(h, []byte(`"role"`)) && !eventLog(h)
	}
	return false
}

// eventLog reports whether head is a JSONL log whose first line is a whole
// record without "messages" (a GitHub Copilot CLI events.jsonl quotes the
// messages of a request further on): not a request body.
func eventLog(head []byte) bool {
	i := bytes.IndexByte(head, '\n')
	if i < 0 {
		return false
	}
	first := bytes.TrimSpace(head[:i])
	return len(first) > 0 && first[0] == '{' && !bytes.Contains(first, []byte(`"messages"`)) && json.Valid(first)
}

type msg struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
	FunctionCall *struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function_call"`
	Reasoning string `json:"reasoning_content"`
	Refusal   string `json:"refusal"`
}

// Import reads each file as one conversation.
func Import(ctx context.Context, files []string, opts Options, target transcript.ImportTarget) error {
	for _, file := range files {
		if err := importFile(ctx, file, opts, target); err != nil {
			return err
		}
	}
	return nil
}

type state struct {
	ids   input.ChainIDs
	d     *input.Doc
	sink  transcript.ImportSink
	prev  string
	open  map[string]string // call id → name, of the last assistant node
	order []string
	n     int
	// legacy function_call: the synthetic id of the call a "function"
	// message answers.
	fnCall string
}

func importFile(ctx context.Context, file string, opts Options, target transcript.ImportTarget) error {
	d, err := input.OpenDoc(file, opts)
	if err != nil {
		return err
	}
	defer d.Close()
	sink, err := target.Conversation(strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)))
	if err != nil {
		return err
	}
	st := &state{d: d, sink: sink}
	each := func(i int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		var raw json.RawMessage
		if err := d.Value(&raw, "a message object {role, content}"); err != nil {
			return err
		}
		var m msg
		if err := json.Unmarshal(raw, &m); err != nil {
			return d.Errorf("messages[%d]: expected a message object {role, content}: %s", i, input.JSONErrorText(err))
		}
		return st.message(i, m, raw)
	}
	switch d.First {
	case '[':
		err = d.Each("messages", each)
	case '{':
		seen := false
		err = d.Fields("a Chat Completions body", func(key string) error {
			switch key {
			case "messages":
				seen = true
				return d.Each("messages", each)
			case "model":
				var model string
				if err := d.Value(&model, `"model" (a string)`); err != nil {
					return err
				}
				sink.SetModel(model)
				sink.Count("body/model", transcript.OutcomeMerged, "recorded in session.json")
				return nil
			}
			sink.Count("body/"+key, transcript.OutcomeSkipped, "request parameter, not part of the conversation")
			return d.Skip(key)
		})
		if err == nil && !seen {
			err = input.Errorf(file, 1, `expected a Chat Completions body with "messages"`)
		}
	default:
		err = input.Errorf(file, 1, "expected a JSON array of messages or a body with \"messages\"")
	}
	if err != nil {
		return err
	}
	st.flag()
	return d.End()
}

func (st *state) message(i int, m msg, raw json.RawMessage) error {
	st.n++
	n := transcript.Node{ID: st.ids.Next(fmt.Sprintf("m%d", i+1), raw), Predecessor: st.prev, Name: m.Name}
	kind := "message/" + m.Role
	switch m.Role {
	case "system", "developer":
		n.Role = transcript.RoleSystem
		if m.Role == "developer" {
			n.SetMeta("openai_role", "developer")
		}
	case "user":
		n.Role = transcript.RoleUser
	case "assistant":
		n.Role = transcript.RoleAssistant
	case "tool", "function":
		n.Role = transcript.RoleTool
	default:
		return st.d.Errorf("messages[%d]: role must be system, developer, user, assistant or tool, got %q", i, m.Role)
	}
	c, err := content(m.Content)
	if err != nil {
		return st.d.Errorf("messages[%d]: %v", i, err)
	}
	n.Content = c
	if m.Role != "tool" && m.Role != "function" {
		st.flag()
	}
	switch m.Role {
	case "assistant":
		if err := st.assistant(i, m, &n); err != nil {
			return err
		}
	case "tool", "function":
		id := m.ToolCallID
		if m.Role == "function" {
			id = st.fnCall
		}
		name, ok := st.open[id]
		if !ok {
			return st.d.Errorf("messages[%d]: a %s message answers tool call %q, but the assistant message before it made no such call (or it was already answered)", i, m.Role, id)
		}
		delete(st.open, id)
		n.ToolCallID = id
		if n.Name == "" {
			n.Name = name
		}
	}
	if err := st.sink.Node(n); err != nil {
		return err
	}
	st.sink.Count(kind, transcript.OutcomeImported, "")
	st.prev = n.ID
	return nil
}

// assistant adds an assistant message's reasoning, refusal and tool
// calls to n; its calls become the ones the next tool messages answer.
func (st *state) assistant(i int, m msg, n *transcript.Node) error {
	if m.Reasoning != "" {
		blocks := []transcript.Block{{Type: transcript.BlockThinking, Text: m.Reasoning}}
		if n.Content.IsBlocks {
			blocks = append(blocks, n.Content.Blocks...)
		} else if n.Content.Text != "" {
			blocks = append(blocks, transcript.Block{Type: transcript.BlockText, Text: n.Content.Text})
		}
		n.Content = transcript.Content{IsBlocks: true, Blocks: blocks}
	}
	if m.Refusal != "" {
		n.SetMeta("refusal", m.Refusal)
	}
	st.open, st.order = map[string]string{}, nil
	for k, tc := range m.ToolCalls {
		if tc.ID == "" {
			return st.d.Errorf("messages[%d].tool_calls[%d]: missing \"id\"", i, k)
		}
		if _, dup := st.open[tc.ID]; dup {
			return st.d.Errorf("messages[%d].tool_calls[%d]: id %q repeats", i, k, tc.ID)
		}
		args := tc.Function.Arguments
		if len(bytes.TrimSpace(args)) == 0 {
			args = json.RawMessage(`"{}"`)
		}
		n.ToolCalls = append(n.ToolCalls, transcript.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: args})
		st.open[tc.ID] = tc.Function.Name
		st.order = append(st.order, tc.ID)
	}
	if fc := m.FunctionCall; fc != nil {
		st.fnCall = fmt.Sprintf("fc-m%d", i+1)
		n.ToolCalls = append(n.ToolCalls, transcript.ToolCall{ID: st.fnCall, Name: fc.Name, Arguments: fc.Arguments})
		st.open[st.fnCall] = fc.Name
		st.order = append(st.order, st.fnCall)
	}
	return nil
}

// flag warns about calls left without a result when the conversation moves
// on (they are imported as they are).
func (st *state) flag() {
	var left []string
	for _, id := range st.order {
		if _, ok := st.open[id]; ok {
			left = append(left, id)
		}
	}
	if len(left) > 0 {
		st.sink.Warn(st.d.File, 0, fmt.Sprintf("tool call(s) without a result: %s", strings.Join(left, ", ")))
	}
	st.open, st.order = nil, nil
}

// content reads a string, null, or an array of parts (text, image_url,
// refusal, input_audio, file).
func content(raw json.RawMessage) (transcript.Content, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return transcript.TextContent(""), nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return transcript.TextContent(s), nil
	}
	var parts []struct {
		Type     string          `json:"type"`
		Text     string          `json:"text"`
		Refusal  string          `json:"refusal"`
		ImageURL json.RawMessage `json:"image_url"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return transcript.Content{}, fmt.Errorf("content must be a string, null or an array of parts")
	}
	var blocks []transcript.Block
	for _, p := range parts {
		switch p.Type {
		case "text":
			blocks = append(blocks, transcript.Block{Type: transcript.BlockText, Text: p.Text})
		case "refusal":
			blocks = append(blocks, transcript.Block{Type: transcript.BlockText, Text: p.Refusal})
		case "image_url":
			var u struct {
				URL string `json:"url"`
			}
			if json.Unmarshal(p.ImageURL, &u) != nil {
				u.URL = input.Text(p.ImageURL)
			}
			blocks = append(blocks, input.Image(u.URL, "", ""))
		default:
			blocks = append(blocks, transcript.Block{Type: transcript.BlockText, Text: "[" + p.Type + " part]"})
		}
	}
	return transcript.Content{IsBlocks: true, Blocks: blocks}, nil
}

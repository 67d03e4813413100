// Package anthropicbody imports an Anthropic Messages API request body
// ({"system", "messages", …}): the system prompt becomes a system node and
// each message a node of a linear chain, with tool_use blocks as tool_call
// blocks, tool_result blocks kept in the user turn that carries them,
// thinking kept as thinking and images as references (never the bytes).
// It only reads the files and hands nodes to a transcript.ImportSink.
package anthropicbody

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// Options tune the import.
type Options = input.Options

// Detect reports whether head is a Messages body: an object with
// "messages" and something only Anthropic bodies have (a top-level
// "system" key, tool_use/tool_result blocks, a claude model).
func Detect(head []byte) bool {
	h := bytes.TrimSpace(head)
	if len(h) == 0 || h[0] != '{' || !bytes.Contains(h, []byte(`"messages"`)) || eventLog(h) {
		return false
	}
	for _, sig := range []string{`"system":`, `"system" :`, `"tool_use"`, `"tool_result"`, `"anthropic_version"`, `"model":"claude`, `"model": "claude`} {
		if bytes.Contains(h, []byte(sig)) {
			return true
		}
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
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
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
	calls transcript.CallChain
}

func importFile(ctx context.Context, file string, opts Options, target transcript.ImportTarget) error {
	d, err := input.OpenDoc(file, opts)
	if err != nil {
		return err
	}
	defer d.Close()
	if d.First != '{' {
		return input.Errorf(file, 1, `expected a Messages API body (an object with "messages")`)
	}
	sink, err := target.Conversation(strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)))
	if err != nil {
		return err
	}
	st := &state{d: d, sink: sink}
	seen := false
	err = d.Fields("a Messages API body", func(key string) error {
		switch key {
		case "system":
			var raw json.RawMessage
			if err := d.Value(&raw, `"system"`); err != nil {
				return err
			}
			return st.system(raw)
		case "messages":
			seen = true
			return d.Each("messages", func(i int) error {
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
			})
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
	if err != nil {
		return err
	}
	if !seen {
		return input.Errorf(file, 1, `expected a Messages API body with "messages"`)
	}
	return d.End()
}

func (st *state) system(raw json.RawMessage) error {
	if string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		var blocks []input.AnthropicBlock
		if err := json.Unmarshal(raw, &blocks); err != nil {
			return st.d.Errorf(`"system" must be a string or an array of text blocks`)
		}
		var texts []string
		for _, b := range blocks {
			texts = append(texts, b.Text)
		}
		s = strings.Join(texts, "\n")
	}
	if st.prev != "" {
		return st.d.Errorf(`"system" after "messages" is not supported; put it first`)
	}
	n := transcript.Node{ID: st.ids.Next("system", raw), Role: transcript.RoleSystem, Content: transcript.TextContent(s)}
	if err := st.sink.Node(n); err != nil {
		return err
	}
	st.sink.Count("body/system", transcript.OutcomeImported, "")
	st.prev = n.ID
	return nil
}

func (st *state) message(i int, m msg, raw json.RawMessage) error {
	n := transcript.Node{ID: st.ids.Next(fmt.Sprintf("m%d", i+1), raw), Predecessor: st.prev}
	switch m.Role {
	case "user":
		n.Role = transcript.RoleUser
	case "assistant":
		n.Role = transcript.RoleAssistant
	default:
		return st.d.Errorf("messages[%d]: role must be user or assistant, got %q", i, m.Role)
	}
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		n.Content = transcript.TextContent(s)
	} else {
		var blocks []input.AnthropicBlock
		if err := json.Unmarshal(m.Content, &blocks); err != nil {
			return st.d.Errorf("messages[%d]: content must be a string or an array of blocks", i)
		}
		out := transcript.Content{IsBlocks: true}
		open := st.calls.Open(st.prev)
		results := map[string]bool{}
		for k, b := range blocks {
			cb, err := b.Block("anthropic_block")
			if err != nil {
				return st.d.Errorf("messages[%d].content[%d]: %v", i, k, err)
			}
			switch cb.Type {
			case transcript.BlockToolCall:
				if m.Role != "assistant" {
					return st.d.Errorf("messages[%d].content[%d]: tool_use in a %s message", i, k, m.Role)
				}
			case transcript.BlockToolResult:
				if m.Role != "user" || !slices.Contains(open, cb.ToolCallID) || results[cb.ToolCallID] {
					return st.d.Errorf("messages[%d].content[%d]: tool_result for %q answers no open tool_use of the assistant message before it", i, k, cb.ToolCallID)
				}
				results[cb.ToolCallID] = true
			}
			out.Blocks = append(out.Blocks, cb)
		}
		n.Content = out
	}
	st.calls.Add(&n)
	if err := st.sink.Node(n); err != nil {
		return err
	}
	st.sink.Count("message/"+m.Role, transcript.OutcomeImported, "")
	st.prev = n.ID
	return nil
}

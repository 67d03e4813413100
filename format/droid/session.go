package droid

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// session is the state of one file's import.
type session struct {
	file string
	sink transcript.ImportSink
	// node maps a message id to its node's id, or, for a message that
	// became no node (shown to the user only), to the node before it.
	node map[string]string
	// pred is each node's predecessor ("" for a root), to walk a path.
	pred map[string]string
	// last is the node of the last message imported: the client's leaf.
	last string
	// calls maps a node to the tool calls it leaves open, so a result is
	// kept as a result only where it answers its call (docs/FORMAT.md §2).
	calls map[string][]string
	// summary is the last compaction's summary node ("" before one);
	// covers is what it covers (compact.go).
	summary string
	covers  []string
	// manual is set once a parent's messages are imported: the next
	// compaction_state (the child's first) is the manual compaction that
	// folded them all (parent.go).
	manual bool
	model  string
	used   map[string]bool
}

func newSession(file string, sink transcript.ImportSink) *session {
	return &session{file: file, sink: sink, node: map[string]string{}, pred: map[string]string{},
		calls: map[string][]string{}, used: map[string]bool{}}
}

// message imports a message record as one node whose predecessor is the
// node of its parentId (the last message's when it names none).
func (s *session) message(r record, lines *input.Lines) error {
	m := r.Message
	if m == nil {
		return lines.Errorf(`a message record without a "message" object`)
	}
	if r.ID == "" {
		return lines.Errorf(`a message record without an "id"`)
	}
	pred, err := s.parent(r, lines)
	if err != nil {
		return err
	}
	if m.Visibility == "user_only" {
		// Shown in Droid's UI only (a hook's run, a notice): never sent.
		s.node[r.ID] = pred
		s.sink.Count("message/"+m.Role, transcript.OutcomeSkipped, "visibility user_only: shown to the user, never sent to the model")
		return nil
	}
	n := transcript.Node{ID: s.newID(r.ID), Predecessor: pred, CreatedAt: r.Timestamp}
	switch m.Role {
	case "user":
		n.Role = transcript.RoleUser
	case "assistant":
		n.Role = transcript.RoleAssistant
		if m.ModelID != "" {
			s.model = m.ModelID
		}
	default:
		return lines.Errorf("message %s: role must be user or assistant, got %q", r.ID, m.Role)
	}
	content, err := s.content(m.Content, pred, n.ID, n.Role, lines)
	if err != nil {
		return err
	}
	n.Content = content
	if m.Visibility != "" {
		n.SetMeta("droid_visibility", m.Visibility)
	}
	if len(r.Tokens) > 0 {
		// Droid's own count of the message, not a provider's usage.
		n.SetMeta("droid_tokens", json.RawMessage(r.Tokens))
	}
	if err := s.sink.Node(n); err != nil {
		return err
	}
	s.sink.Count("message/"+m.Role, transcript.OutcomeImported, "")
	s.node[r.ID], s.pred[n.ID], s.last = n.ID, pred, n.ID
	return nil
}

// parent is the node a message follows: its parentId's, or with none the
// last message's (Droid leaves parentId out only on a session's first
// message and on messages it wrote for another session's file).
func (s *session) parent(r record, lines *input.Lines) (string, error) {
	if r.ParentID == nil || *r.ParentID == "" {
		return s.last, nil
	}
	p, ok := s.node[*r.ParentID]
	if !ok {
		s.sink.Warn(s.file, lines.Line, fmt.Sprintf("message %s: parentId %q names no earlier message; it follows the last message instead", r.ID, *r.ParentID))
		return s.last, nil
	}
	return p, nil
}

// newID is a message id as a node id, unique in the conversation.
func (s *session) newID(id string) string {
	out := input.ID(id, "m")
	for i := 2; s.used[out]; i++ {
		out = fmt.Sprintf("%s-%d", input.ID(id, "m"), i)
	}
	s.used[out] = true
	return out
}

// content converts a message's content: a string, or Anthropic-style
// blocks (text, thinking, image, tool_use, tool_result). A tool_result
// that answers no open call of the node before it is kept as text, since
// the store accepts a result only for an open call.
func (s *session) content(raw json.RawMessage, pred, id string, role transcript.Role, lines *input.Lines) (transcript.Content, error) {
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '"' {
		var text string
		if err := input.Unmarshal(t, &text); err != nil {
			return transcript.Content{}, lines.Errorf("message %s: content: %s", id, input.JSONErrorText(err))
		}
		return transcript.TextContent(text), nil
	}
	var blocks []input.AnthropicBlock
	if err := input.Unmarshal(raw, &blocks); err != nil {
		return transcript.Content{}, lines.Errorf("message %s: content must be a string or an array of blocks", id)
	}
	if len(blocks) == 1 && blocks[0].Type == "text" {
		return transcript.TextContent(blocks[0].Text), nil
	}
	out := transcript.Content{IsBlocks: true}
	open := s.calls[pred]
	var calls []string
	for k, b := range blocks {
		cb, err := b.Block("droid_block")
		if err != nil {
			return out, lines.Errorf("message %s, content[%d]: %v", id, k, err)
		}
		switch cb.Type {
		case transcript.BlockToolCall:
			if role != transcript.RoleAssistant {
				s.sink.Warn(s.file, lines.Line, fmt.Sprintf("message %s: a tool_use block in a user message is kept as text", id))
				cb = demote(cb, "tool_use in a user message")
			} else {
				calls = append(calls, cb.ID)
			}
		case transcript.BlockToolResult:
			i := indexOf(open, cb.ToolCallID)
			if role != transcript.RoleUser || i < 0 {
				s.sink.Warn(s.file, lines.Line, fmt.Sprintf("message %s: tool_result for %q answers no open tool_use of the message before it; kept as text", id, cb.ToolCallID))
				cb = demote(cb, "tool_result for "+cb.ToolCallID)
			} else {
				open = append(open[:i:i], open[i+1:]...)
			}
		}
		out.Blocks = append(out.Blocks, cb)
	}
	if role == transcript.RoleUser {
		calls = open // a later message may answer the rest
	}
	s.calls[id] = calls
	return out, nil
}

func indexOf(list []string, v string) int {
	for i, x := range list {
		if x == v {
			return i
		}
	}
	return -1
}

// demote turns a tool block the store would refuse into text that says
// what it was.
func demote(b transcript.Block, what string) transcript.Block {
	text := b.Text
	if b.Type == transcript.BlockToolCall {
		text = b.Name + " " + transcript.ArgumentsText(b.Arguments)
	}
	return transcript.Block{Type: transcript.BlockText, Text: "[" + what + "]\n" + text}
}

// finish names HEAD (the last message, where Droid resumes) and the model.
func (s *session) finish() error {
	if s.last != "" {
		s.sink.SetHead(s.last)
	}
	if s.model != "" {
		s.sink.SetModel(s.model)
	}
	return nil
}

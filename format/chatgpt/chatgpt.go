// Package chatgpt imports a ChatGPT data export's conversations.json: an
// array of conversations, each a mapping tree of {id, parent, children,
// message}. The tree becomes the session's DAG with every branch (an edited
// prompt, a regenerated answer), and HEAD is current_node. One conversation
// is one session; the conversation's id names it (never its title). The
// file is decoded one conversation at a time. It only reads the file and
// hands nodes to a transcript.ImportSink.
package chatgpt

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// Options tune the import.
type Options = input.Options

// Detect reports whether head is a conversations.json (or one
// conversation object): a "mapping" with "children".
func Detect(head []byte) bool {
	h := bytes.TrimSpace(head)
	if len(h) == 0 || (h[0] != '[' && h[0] != '{') {
		return false
	}
	return bytes.Contains(h, []byte(`"mapping"`)) && (bytes.Contains(h, []byte(`"children"`)) || bytes.Contains(h, []byte(`"current_node"`)))
}

type conversation struct {
	ID             string           `json:"id"`
	ConversationID string           `json:"conversation_id"`
	CurrentNode    string           `json:"current_node"`
	DefaultModel   string           `json:"default_model_slug"`
	Mapping        map[string]*node `json:"mapping"`
}

type node struct {
	ID       string   `json:"id"`
	Parent   *string  `json:"parent"`
	Children []string `json:"children"`
	Message  *message `json:"message"`
}

type message struct {
	ID     string `json:"id"`
	Author struct {
		Role string `json:"role"`
		Name string `json:"name"`
	} `json:"author"`
	CreateTime *float64 `json:"create_time"`
	Content    struct {
		ContentType string            `json:"content_type"`
		Parts       []json.RawMessage `json:"parts"`
		Text        string            `json:"text"`
		Language    string            `json:"language"`
		Result      string            `json:"result"`
		Thoughts    []struct {
			Summary string `json:"summary"`
			Content string `json:"content"`
		} `json:"thoughts"`
		Content         string `json:"content"`
		UserProfile     string `json:"user_profile"`
		UserInstruction string `json:"user_instructions"`
	} `json:"content"`
	Recipient string                     `json:"recipient"`
	Metadata  map[string]json.RawMessage `json:"metadata"`
}

// Import reads each file; every conversation in it is one conversation.
func Import(ctx context.Context, files []string, opts Options, target transcript.ImportTarget) error {
	for _, file := range files {
		d, err := input.OpenDoc(file, opts)
		if err != nil {
			return err
		}
		one := func(i int) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			var c conversation
			if err := d.Value(&c, "a conversation object"); err != nil {
				return err
			}
			return importConversation(file, d.Line(), i, &c, target)
		}
		switch d.First {
		case '[':
			err = d.Each("conversations", one)
		case '{':
			err = one(0)
		default:
			err = input.Errorf(file, 1, "expected a conversations.json array or a conversation object")
		}
		if err == nil {
			err = d.End()
		}
		d.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func importConversation(file string, line, index int, c *conversation, target transcript.ImportTarget) error {
	if c.Mapping == nil {
		return input.Errorf(file, line, `conversation %d: missing "mapping"`, index+1)
	}
	name := c.ID
	if name == "" {
		name = c.ConversationID
	}
	if name == "" {
		name = fmt.Sprintf("conversation-%d", index+1)
	}
	sink, err := target.Conversation(name)
	if err != nil {
		return err
	}
	im := &importer{file: file, line: line, c: c, sink: sink, nodeOf: map[string]string{}, calls: map[string]string{}, answered: map[string]bool{}}
	return im.run()
}

type importer struct {
	file string
	line int
	c    *conversation
	sink transcript.ImportSink
	// nodeOf maps a mapping key to the node id that stands for it (the
	// nearest imported ancestor for a key without a message).
	nodeOf map[string]string
	// calls maps an imported assistant node making a tool call to the call
	// id; answered marks calls whose result was imported.
	calls    map[string]string
	answered map[string]bool
	model    string
}

func (im *importer) run() error {
	keys := make([]string, 0, len(im.c.Mapping))
	for k := range im.c.Mapping {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var roots []string
	for _, k := range keys {
		n := im.c.Mapping[k]
		if n == nil {
			im.sink.Count("mapping node", transcript.OutcomeSkipped, "null entry")
			continue
		}
		if n.Parent == nil || *n.Parent == "" {
			roots = append(roots, k)
		} else if _, ok := im.c.Mapping[*n.Parent]; !ok {
			im.sink.Warn(im.file, im.line, fmt.Sprintf("mapping node %q: parent %q is not in the mapping; imported as a root", k, *n.Parent))
			roots = append(roots, k)
		}
	}
	visited := map[string]bool{}
	// Depth-first in children order, iteratively (a deep tree must not
	// exhaust the stack): each node follows its parent.
	type frame struct{ key, pred string }
	for _, r := range roots {
		stack := []frame{{r, ""}}
		for len(stack) > 0 {
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if visited[f.key] {
				continue
			}
			visited[f.key] = true
			n := im.c.Mapping[f.key]
			if n == nil {
				continue
			}
			id, err := im.node(f.key, n, f.pred)
			if err != nil {
				return err
			}
			for i := len(n.Children) - 1; i >= 0; i-- {
				ch := n.Children[i]
				if cn, ok := im.c.Mapping[ch]; ok && cn != nil && !visited[ch] {
					if cn.Parent != nil && *cn.Parent != f.key {
						continue // listed as a child but names another parent: reached from there
					}
					stack = append(stack, frame{ch, id})
				}
			}
		}
	}
	for _, k := range keys {
		if !visited[k] && im.c.Mapping[k] != nil {
			im.sink.Count("mapping node", transcript.OutcomeSkipped, "not reachable from a root (a cycle)")
			im.sink.Warn(im.file, im.line, fmt.Sprintf("mapping node %q is not reachable from a root (a cycle); not imported", k))
		}
	}
	if cur := im.c.CurrentNode; cur != "" {
		if id, ok := im.nodeOf[cur]; ok && id != "" {
			im.sink.SetHead(id)
		} else {
			im.sink.Warn(im.file, im.line, fmt.Sprintf("current_node %q is not an imported message; HEAD is the last node of the main chain", cur))
		}
	}
	model := im.model
	if model == "" {
		model = im.c.DefaultModel
	}
	if model != "" {
		im.sink.SetModel(model)
	}
	return nil
}

// node imports one mapping entry after pred and returns the node id its
// children follow.
func (im *importer) node(key string, n *node, pred string) (string, error) {
	m := n.Message
	if m == nil {
		im.sink.Count("mapping node", transcript.OutcomeSkipped, "no message (the tree's root placeholder)")
		im.nodeOf[key] = pred
		return pred, nil
	}
	role := m.Author.Role
	out := transcript.Node{ID: input.ID(key, "m-"+m.ID), Predecessor: pred, Name: m.Author.Name}
	if m.CreateTime != nil && !math.IsNaN(*m.CreateTime) && !math.IsInf(*m.CreateTime, 0) && *m.CreateTime > 0 && *m.CreateTime < 1e11 {
		sec, frac := math.Modf(*m.CreateTime)
		out.CreatedAt = time.Unix(int64(sec), int64(frac*1e9)).UTC().Format(time.RFC3339Nano)
	}
	out.Content = im.content(m)
	kind := "message/" + role
	switch role {
	case "user":
		out.Role = transcript.RoleUser
	case "system":
		out.Role = transcript.RoleSystem
	case "assistant":
		out.Role = transcript.RoleAssistant
		if m.Recipient != "" && m.Recipient != "all" {
			// A message addressed to a tool is a tool call; its argument
			// is the message text.
			callID := "call-" + out.ID
			args := out.Content.PlainText()
			out.ToolCalls = []transcript.ToolCall{{ID: callID, Name: m.Recipient, Arguments: input.Raw(args)}}
			out.Content = transcript.TextContent("")
			im.calls[out.ID] = callID
		}
		var slug string
		if json.Unmarshal(m.Metadata["model_slug"], &slug) == nil && slug != "" {
			im.model = slug
		}
	case "tool":
		if call, ok := im.calls[pred]; ok && !im.answered[pred+"\x00"+call] {
			out.Role = transcript.RoleTool
			out.ToolCallID = call
			im.answered[pred+"\x00"+call] = true
		} else {
			// Not the direct answer to a call (a second tool message, or
			// a tool speaking on its own): kept as a user turn, named.
			out.Role = transcript.RoleUser
			out.SetMeta("chatgpt_role", "tool")
			im.sink.Count(kind, transcript.OutcomeImported, "")
			return im.add(key, out)
		}
	default:
		im.sink.Count(kind, transcript.OutcomeSkipped, "unknown author role")
		im.nodeOf[key] = pred
		return pred, nil
	}
	if ct := m.Content.ContentType; ct != "" && ct != "text" {
		out.SetMeta("chatgpt_content_type", ct)
	}
	if m.Recipient != "" && m.Recipient != "all" {
		out.SetMeta("chatgpt_recipient", m.Recipient)
	}
	im.sink.Count(kind, transcript.OutcomeImported, "")
	return im.add(key, out)
}

func (im *importer) add(key string, n transcript.Node) (string, error) {
	if err := im.sink.Node(n); err != nil {
		return "", err
	}
	im.nodeOf[key] = n.ID
	return n.ID, nil
}

// content reads the content types of the export: text and multimodal
// parts, code, execution output, browsing results, thoughts.
func (im *importer) content(m *message) transcript.Content {
	c := m.Content
	switch c.ContentType {
	case "code", "execution_output":
		return transcript.TextContent(c.Text)
	case "tether_browsing_display":
		return transcript.TextContent(c.Result)
	case "thoughts":
		var blocks []transcript.Block
		for _, t := range c.Thoughts {
			blocks = append(blocks, transcript.Block{Type: transcript.BlockThinking, Text: strings.TrimSpace(t.Summary + "\n" + t.Content)})
		}
		return transcript.Content{IsBlocks: true, Blocks: blocks}
	case "reasoning_recap":
		return transcript.Content{IsBlocks: true, Blocks: []transcript.Block{{Type: transcript.BlockThinking, Text: c.Content}}}
	case "user_editable_context":
		return transcript.TextContent(strings.TrimSpace(c.UserProfile + "\n" + c.UserInstruction))
	}
	if c.Parts == nil && c.Text != "" {
		return transcript.TextContent(c.Text)
	}
	var blocks []transcript.Block
	for _, raw := range c.Parts {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			blocks = append(blocks, transcript.Block{Type: transcript.BlockText, Text: s})
			continue
		}
		var p struct {
			ContentType  string `json:"content_type"`
			AssetPointer string `json:"asset_pointer"`
			Text         string `json:"text"`
		}
		_ = json.Unmarshal(raw, &p)
		switch {
		case p.AssetPointer != "":
			blocks = append(blocks, input.Image(p.AssetPointer, "", ""))
		case p.Text != "":
			blocks = append(blocks, transcript.Block{Type: transcript.BlockText, Text: p.Text})
		default:
			blocks = append(blocks, transcript.Block{Type: transcript.BlockText, Text: input.Text(raw)})
		}
	}
	if len(blocks) == 0 {
		return transcript.TextContent("")
	}
	allText := true
	var texts []string
	for _, b := range blocks {
		if b.Type != transcript.BlockText {
			allText = false
		}
		texts = append(texts, b.Text)
	}
	if allText {
		return transcript.TextContent(strings.Join(texts, "\n"))
	}
	return transcript.Content{IsBlocks: true, Blocks: blocks}
}

package render

import (
	"bufio"
	"encoding/json"
	"strings"

	"github.com/ctxfold/ctxfold/transcript"
)

// ResponsesMessage is a message item of a Responses API input.
type ResponsesMessage struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content []ResponsesPart `json:"content"`
}

// ResponsesPart is one content part: input_text, output_text or input_image.
type ResponsesPart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL string `json:"image_url,omitempty"`
}

// ResponsesCall is a function_call item.
type ResponsesCall struct {
	Type      string `json:"type"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
}

// ResponsesCustomCall is a custom_tool_call item (a freeform tool such as
// Codex's apply_patch: the input is raw text, not JSON arguments).
type ResponsesCustomCall struct {
	Type   string `json:"type"`
	Name   string `json:"name"`
	Input  string `json:"input"`
	CallID string `json:"call_id"`
}

// ResponsesOutput is a function_call_output (or custom_tool_call_output) item.
type ResponsesOutput struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

// ResponsesReasoning is a reasoning item sent back to the provider.
type ResponsesReasoning struct {
	Type             string          `json:"type"`
	Summary          []ResponsesPart `json:"summary"`
	Content          []ResponsesPart `json:"content"`
	EncryptedContent string          `json:"encrypted_content,omitempty"`
}

// ResponsesInput converts rendered nodes to the items of a Responses API
// `input`, in order. Rules (docs/FORMAT.md §5): system nodes are developer
// messages; thinking imported from a reasoning item is sent back as one,
// other thinking is not sent; a summary imported from a client's own compaction is
// the items that client sent in its place (metadata.responses_input).
func ResponsesInput(nodes []*transcript.Node) []any {
	var out []any
	var c responsesConverter
	for _, n := range nodes {
		out = append(out, c.items(n)...)
	}
	return out
}

// responsesConverter converts nodes in view order, remembering which calls
// were custom so their outputs are custom_tool_call_output items.
type responsesConverter struct {
	custom map[string]bool
}

func (c *responsesConverter) output(callID, text string) ResponsesOutput {
	typ := "function_call_output"
	if c.custom[callID] {
		typ = "custom_tool_call_output"
	}
	return ResponsesOutput{Type: typ, CallID: callID, Output: text}
}

func (c *responsesConverter) call(tc transcript.ToolCall) any {
	var custom bool
	if json.Unmarshal(tc.Extra[transcript.ExtraCustom], &custom) == nil && custom {
		if c.custom == nil {
			c.custom = map[string]bool{}
		}
		c.custom[tc.ID] = true
		return ResponsesCustomCall{Type: "custom_tool_call", Name: tc.Name, Input: tc.ArgumentsText(), CallID: tc.ID}
	}
	return responsesCall(tc)
}

// items converts one node (a node can yield several items).
func (c *responsesConverter) items(n *transcript.Node) []any {
	if n.IsSummary() {
		var items []json.RawMessage
		if raw, ok := n.Metadata[transcript.MetaResponsesInput]; ok && json.Unmarshal(raw, &items) == nil && len(items) > 0 {
			out := make([]any, len(items))
			for i, it := range items {
				out[i] = it
			}
			return out
		}
	}
	if n.Role == transcript.RoleTool {
		return []any{c.output(n.ToolCallID, n.Content.PlainText())}
	}
	role, textType := string(n.Role), "input_text"
	switch n.Role {
	case transcript.RoleSystem:
		role = "developer"
	case transcript.RoleAssistant:
		textType = "output_text"
	}
	var out, reasoning, calls []any
	var parts []ResponsesPart
	blocks := n.Content.Blocks
	if !n.Content.IsBlocks && n.Content.Text != "" {
		blocks = []transcript.Block{{Type: transcript.BlockText, Text: n.Content.Text}}
	}
	for _, b := range blocks {
		switch b.Type {
		case transcript.BlockText:
			parts = append(parts, ResponsesPart{Type: textType, Text: b.Text})
		case transcript.BlockImage:
			if isURL(b.Source) {
				parts = append(parts, ResponsesPart{Type: "input_image", ImageURL: b.Source})
			} else {
				parts = append(parts, ResponsesPart{Type: textType, Text: ImageNotice(b)})
			}
		case transcript.BlockToolResult:
			out = append(out, c.output(b.ToolCallID, b.Text))
		case transcript.BlockToolCall:
			calls = append(calls, c.call(transcript.ToolCall{ID: b.ID, Name: b.Name, Arguments: b.Arguments, Extra: b.Extra}))
		case transcript.BlockThinking:
			if r, ok := responsesReasoning(b); ok {
				reasoning = append(reasoning, r)
			}
		}
	}
	out = append(reasoning, out...)
	for _, tc := range n.ToolCalls {
		calls = append(calls, c.call(tc))
	}
	if len(parts) > 0 {
		out = append(out, ResponsesMessage{Type: "message", Role: role, Content: parts})
	}
	return append(out, calls...)
}

// responsesReasoning rebuilds a reasoning item from a thinking block that
// came from one (its Extra has summary_lengths): the parts are cut out of
// Text by their recorded lengths; if they do not fit, the text is one
// summary part.
func responsesReasoning(b transcript.Block) (ResponsesReasoning, bool) {
	var summary, content []int
	if json.Unmarshal(b.Extra[transcript.ExtraSummaryLengths], &summary) != nil {
		return ResponsesReasoning{}, false
	}
	hasContent := json.Unmarshal(b.Extra[transcript.ExtraContentLengths], &content) == nil
	r := ResponsesReasoning{Type: "reasoning", Summary: []ResponsesPart{}}
	_ = json.Unmarshal(b.Extra[transcript.ExtraEncryptedContent], &r.EncryptedContent)
	rest, ok := b.Text, true
	cut := func(n int, typ string) ResponsesPart {
		if n < 0 || n > len(rest) {
			ok = false
			return ResponsesPart{}
		}
		p := ResponsesPart{Type: typ, Text: rest[:n]}
		rest = strings.TrimPrefix(rest[n:], "\n\n")
		return p
	}
	for _, n := range summary {
		r.Summary = append(r.Summary, cut(n, "summary_text"))
	}
	if hasContent {
		r.Content = []ResponsesPart{}
		for _, n := range content {
			r.Content = append(r.Content, cut(n, "reasoning_text"))
		}
	}
	if !ok || rest != "" {
		r.Summary, r.Content = []ResponsesPart{{Type: "summary_text", Text: b.Text}}, nil
	}
	return r, true
}

func responsesCall(c transcript.ToolCall) ResponsesCall {
	rc := ResponsesCall{Type: "function_call", Name: c.Name, Arguments: c.ArgumentsText(), CallID: c.ID}
	_ = json.Unmarshal(c.Extra[transcript.ExtraNamespace], &rc.Namespace)
	return rc
}

func writeResponses(w *bufio.Writer, src nodeSource) error {
	var c responsesConverter
	return writeJSONArray(w, src, c.items)
}

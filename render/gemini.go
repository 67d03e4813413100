package render

import (
	"bufio"
	"encoding/json"
	"strings"

	"github.com/ctxfold/ctxfold/transcript"
)

// GeminiBody is a generateContent request body (generationConfig and
// tools are the caller's to add).
type GeminiBody struct {
	SystemInstruction *GeminiContent  `json:"systemInstruction,omitempty"`
	Contents          []GeminiContent `json:"contents"`
}

// GeminiContent is one turn: role "user" or "model" (none for the system
// instruction).
type GeminiContent struct {
	Role  string       `json:"role,omitempty"`
	Parts []GeminiPart `json:"parts"`
}

// GeminiPart is one part: text, media, a function call or its response.
type GeminiPart struct {
	Text             *string                 `json:"text,omitempty"`
	InlineData       *GeminiBlob             `json:"inlineData,omitempty"`
	FileData         *GeminiFile             `json:"fileData,omitempty"`
	FunctionCall     *GeminiFunctionCall     `json:"functionCall,omitempty"`
	FunctionResponse *GeminiFunctionResponse `json:"functionResponse,omitempty"`
}

// GeminiBlob is inline media (base64 data).
type GeminiBlob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

// GeminiFile is media by URI.
type GeminiFile struct {
	MimeType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
}

// GeminiFunctionCall is a model's call; args is always an object.
type GeminiFunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// GeminiFunctionResponse is a call's result; response is always an object.
type GeminiFunctionResponse struct {
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

// GeminiRequest converts rendered nodes to a generateContent body. Rules
// (docs/FORMAT.md §5): leading system nodes form systemInstruction; a later
// one becomes a user text "[system] …"; assistant nodes are "model" turns
// with a functionCall part per call; a tool node is a functionResponse part
// in a user turn ({"output": text}, {"error": text} when it failed, or the
// response an importer kept whole in metadata.gemini_response);
// consecutive turns of one role are merged, as Gemini CLI sends them;
// thinking is not sent; nodes without parts are dropped.
func GeminiRequest(nodes []*transcript.Node) GeminiBody {
	var body GeminiBody
	var system []string
	leading := true
	names := map[string]string{} // call id → function name, for results in blocks
	for _, n := range nodes {
		if n.Role == transcript.RoleSystem && leading {
			system = append(system, n.Content.PlainText())
			continue
		}
		leading = false
		for _, c := range geminiContents(n, names) {
			if len(c.Parts) == 0 {
				continue
			}
			if k := len(body.Contents) - 1; k >= 0 && body.Contents[k].Role == c.Role {
				body.Contents[k].Parts = append(body.Contents[k].Parts, c.Parts...)
				continue
			}
			body.Contents = append(body.Contents, c)
		}
	}
	if body.Contents == nil {
		body.Contents = []GeminiContent{}
	}
	if len(system) > 0 {
		text := strings.Join(system, "\n\n")
		body.SystemInstruction = &GeminiContent{Parts: []GeminiPart{{Text: &text}}}
	}
	return body
}

// geminiContents converts one node: a summary imported from Gemini CLI's
// own compression is the contents the client sent in its place
// (metadata.gemini_contents: the snapshot and the model's acknowledgement);
// any other node is one content.
func geminiContents(n *transcript.Node, names map[string]string) []GeminiContent {
	if n.IsSummary() {
		var cs []GeminiContent
		if raw, ok := n.Metadata[transcript.MetaGeminiContents]; ok && json.Unmarshal(raw, &cs) == nil && len(cs) > 0 {
			return cs
		}
	}
	role, parts := geminiParts(n, names)
	return []GeminiContent{{Role: role, Parts: parts}}
}

func geminiParts(n *transcript.Node, names map[string]string) (string, []GeminiPart) {
	text := func(s string) GeminiPart { return GeminiPart{Text: &s} }
	switch n.Role {
	case transcript.RoleTool:
		isErr := false
		for _, r := range n.ToolResults() {
			isErr = isErr || (r.ToolCallID == n.ToolCallID && r.IsError)
		}
		resp := n.Metadata["gemini_response"]
		if len(resp) == 0 || resp[0] != '{' {
			resp = geminiResponse(n.Content.PlainText(), isErr)
		}
		name := n.Name
		if name == "" {
			name = names[n.ToolCallID]
		}
		return "user", []GeminiPart{{FunctionResponse: &GeminiFunctionResponse{ID: n.ToolCallID, Name: name, Response: resp}}}
	case transcript.RoleSystem:
		return "user", []GeminiPart{text("[system] " + n.Content.PlainText())}
	}
	role := "user"
	if n.Role == transcript.RoleAssistant {
		role = "model"
	}
	var parts []GeminiPart
	call := func(c transcript.ToolCall) {
		names[c.ID] = c.Name
		args := toolUse(c).Input // always an object, as for tool_use
		parts = append(parts, GeminiPart{FunctionCall: &GeminiFunctionCall{ID: c.ID, Name: c.Name, Args: args}})
	}
	if !n.Content.IsBlocks {
		if n.Content.Text != "" {
			parts = append(parts, text(n.Content.Text))
		}
	} else {
		for _, b := range n.Content.Blocks {
			switch b.Type {
			case transcript.BlockText:
				if b.Text != "" {
					parts = append(parts, text(b.Text))
				}
			case transcript.BlockImage:
				switch {
				case strings.HasPrefix(b.Source, "data:"):
					header, data, _ := strings.Cut(strings.TrimPrefix(b.Source, "data:"), ",")
					mt, _, _ := strings.Cut(header, ";")
					parts = append(parts, GeminiPart{InlineData: &GeminiBlob{MimeType: mt, Data: data}})
				case isURL(b.Source) || strings.HasPrefix(b.Source, "gs://"):
					parts = append(parts, GeminiPart{FileData: &GeminiFile{MimeType: b.MediaType, FileURI: b.Source}})
				default:
					parts = append(parts, text(ImageNotice(b)))
				}
			case transcript.BlockToolCall:
				call(transcript.ToolCall{ID: b.ID, Name: b.Name, Arguments: b.Arguments})
			case transcript.BlockToolResult:
				parts = append(parts, GeminiPart{FunctionResponse: &GeminiFunctionResponse{ID: b.ToolCallID, Name: names[b.ToolCallID],
					Response: geminiResponse(b.Text, b.IsError)}})
			}
		}
	}
	for _, c := range n.ToolCalls {
		call(c)
	}
	return role, parts
}

// geminiResponse is the response object for a result's text, the shape
// Gemini CLI uses.
func geminiResponse(text string, isErr bool) json.RawMessage {
	key := "output"
	if isErr {
		key = "error"
	}
	raw, _ := MarshalNoEscape(map[string]string{key: text})
	return raw
}

func writeGemini(w *bufio.Writer, src nodeSource) error {
	var nodes []*transcript.Node
	err := src.each(func(n *transcript.Node) error {
		nodes = append(nodes, n)
		return nil
	})
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(GeminiRequest(nodes))
}

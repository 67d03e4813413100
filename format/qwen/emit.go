package qwen

// This file turns records into nodes: the message of a user, assistant or
// tool_result record as Qwen Code converts it for the provider (its
// OpenAI converter: function responses become tool messages before the
// user text, thoughts become reasoning), and a chat_compression as a
// summary node followed by the contents the client keeps after it.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

type importer struct {
	sink transcript.ImportSink
	file string
	// eff maps a record's uuid to the node the records under it extend
	// ("" for the root): bookkeeping records add no node and pass their
	// parent's on.
	eff map[string]string
	// pred maps each node to its predecessor, to walk a spine back to the
	// root for a compression's coverage.
	pred  map[string]string
	last  string // uuid of the last record: the client's current tail
	model string
	// seenModel is the model a telemetry record names, for a session
	// whose first answer is not written yet.
	seenModel string
	// open holds the calls (id, name) of the last model message that no
	// function response has answered yet.
	open [][2]string
	// calls maps each call id to the node holding it (a sub-agent's
	// caller), shared with the sub-agents' importers.
	calls map[string]string
	// session is the client's session id, which names its sub-agents'
	// folder.
	session string
	// sub marks a sub-agent's transcript: its nodes carry caller and never
	// set HEAD or the model; nextCaller is the caller of the next one.
	sub                bool
	caller, nextCaller string
}

func newImporter(sink transcript.ImportSink, file string) *importer {
	return &importer{sink: sink, file: file, eff: map[string]string{}, pred: map[string]string{}, calls: map[string]string{}}
}

// uniq is id, or id with a suffix when a node already has it (a uuid that
// happens to equal an id derived from another record's).
func (im *importer) uniq(id string) string {
	if !im.taken(id) {
		return id
	}
	for i := 2; ; i++ {
		if alt := fmt.Sprintf("%s~%d", id, i); !im.taken(alt) {
			return alt
		}
	}
}

func (im *importer) taken(id string) bool {
	_, ok := im.pred[id]
	return ok
}

// content is a Gemini content as the client records and sends it.
type content struct {
	Role  string `json:"role"`
	Parts []part `json:"parts"`
}

func (im *importer) add(r *record, line int) error {
	kind := r.Type
	if r.Subtype != "" {
		kind += "/" + r.Subtype
	}
	if _, dup := im.eff[r.UUID]; dup {
		im.sink.Count(kind, transcript.OutcomeMerged, "a record the client wrote again under the same uuid: the first one holds it")
		return nil
	}
	parent := ""
	if p := r.ParentUUID; p != nil && *p != "" {
		got, ok := im.eff[*p]
		if !ok {
			im.sink.Warn(im.file, line, fmt.Sprintf("record %s: parentUuid %s names no earlier record; imported as a root", r.UUID, *p))
		}
		parent = got
	}
	im.eff[r.UUID], im.last = parent, r.UUID
	switch {
	case r.Type == "system" && r.Subtype == "chat_compression":
		tip, err := im.compression(r, parent, line)
		if err != nil {
			return err
		}
		im.eff[r.UUID] = tip
		return nil
	case r.Message == nil:
		if kind == "system/ui_telemetry" && im.model == "" && im.seenModel == "" {
			// Before the first answer is written, the telemetry of its
			// request already names the model.
			var p struct {
				UIEvent struct {
					Model string `json:"model"`
				} `json:"uiEvent"`
			}
			if json.Unmarshal(r.SystemPayload, &p) == nil {
				im.seenModel = p.UIEvent.Model
			}
		}
		im.sink.Count(kind, transcript.OutcomeSkipped, "the client's bookkeeping: no message, nothing sent to the model")
		return nil
	case r.Subtype == "realtime_message":
		im.sink.Count(kind, transcript.OutcomeSkipped, "a realtime message: the client leaves it out of the history it sends")
		return nil
	}
	c := content{Role: r.Message.Role, Parts: r.Message.Parts}
	var usage *transcript.Usage
	if u := r.UsageMetadata; u != nil && u.PromptTokenCount != nil {
		usage = &transcript.Usage{InputTokens: *u.PromptTokenCount, OutputTokens: u.CandidatesTokenCount, CachedInputTokens: u.CachedContentTokenCount,
			Extra: map[string]json.RawMessage{"thoughts_tokens": input.Raw(u.ThoughtsTokenCount), "total_tokens": input.Raw(u.TotalTokenCount),
				"input_includes_cached": json.RawMessage("true")}}
		if r.ContextWindowSize > 0 {
			usage.Extra[transcript.UsageContextWindow] = input.Raw(r.ContextWindowSize)
		}
	}
	failed := r.ToolCallResult != nil && r.ToolCallResult.Status == "error"
	tip, n, err := im.emit(input.ID(r.UUID, ""), parent, c, r.Timestamp, usage, failed, line)
	if err != nil {
		return err
	}
	if n == 0 {
		im.sink.Count(kind, transcript.OutcomeSkipped, "an empty message: the client sends nothing for it")
		return nil
	}
	if c.Role == "model" && r.Model != "" {
		im.model = r.Model
	}
	im.sink.Count(kind, transcript.OutcomeImported, "")
	im.eff[r.UUID] = tip
	return nil
}

// emit writes the nodes of one content after parent, the first with id
// and the others with id and a suffix, and returns the last node's id and
// how many it wrote. A model content is one assistant node; a user
// content is a tool node per function response, then a user node for its
// text and media.
func (im *importer) emit(id, parent string, c content, at string, usage *transcript.Usage, failed bool, line int) (string, int, error) {
	var nodes []transcript.Node
	nextID := func() string {
		if len(nodes) == 0 {
			return id
		}
		return fmt.Sprintf("%s/%d", id, len(nodes))
	}
	switch c.Role {
	case "model":
		n, ok := assistantNode(c.Parts)
		if !ok {
			return parent, 0, nil
		}
		n.ID, n.Usage = nextID(), usage
		nodes = append(nodes, n)
	case "user", "tool":
		var blocks []transcript.Block
		for _, p := range c.Parts {
			if fr := p.FunctionResponse; fr != nil {
				nodes = append(nodes, toolNode(nextID(), fr.ID, fr.Name, fr.Response, failed))
				continue
			}
			if b, ok := userBlock(p); ok {
				blocks = append(blocks, b)
			}
		}
		if len(blocks) > 0 {
			nodes = append(nodes, transcript.Node{ID: nextID(), Role: transcript.RoleUser, Content: blockContent(blocks)})
		}
	default:
		return "", 0, input.Errorf(im.file, line, "message role %q: expected \"user\" or \"model\"", c.Role)
	}
	for i := range nodes {
		nodes[i].ID = im.uniq(nodes[i].ID)
		if err := im.pair(&nodes[i]); err != nil {
			return "", 0, input.Errorf(im.file, line, "%v", err)
		}
		nodes[i].Predecessor, nodes[i].CreatedAt, nodes[i].Caller = parent, at, im.caller
		if err := im.sink.Node(nodes[i]); err != nil {
			return "", 0, err
		}
		im.pred[nodes[i].ID] = parent
		parent = nodes[i].ID
	}
	return parent, len(nodes), nil
}

// pair gives a function call recorded without an id (older clients,
// Gemini CLI's heritage) one derived from its node, and a function
// response without one the id of the first unanswered call of the same
// name in the last model message (the Gemini API pairs them by name and
// order); a response that answers no call is an error.
func (im *importer) pair(n *transcript.Node) error {
	switch n.Role {
	case transcript.RoleAssistant:
		im.open = im.open[:0]
		for i := range n.ToolCalls {
			c := &n.ToolCalls[i]
			if c.ID == "" {
				c.ID = fmt.Sprintf("%s#call%d", n.ID, i+1)
			}
			im.open = append(im.open, [2]string{c.ID, c.Name})
			im.calls[c.ID] = n.ID
		}
	case transcript.RoleTool:
		at := -1
		for i, c := range im.open {
			if (n.ToolCallID != "" && c[0] == n.ToolCallID) || (n.ToolCallID == "" && c[1] == n.Name) {
				at = i
				break
			}
		}
		if at < 0 && n.ToolCallID == "" {
			return fmt.Errorf("functionResponse %q has no id and answers no open functionCall of that name", n.Name)
		}
		if at >= 0 {
			n.ToolCallID = im.open[at][0]
			im.open = append(im.open[:at], im.open[at+1:]...)
		}
	}
	return nil
}

// assistantNode is a model content as one assistant node: thoughts as
// thinking blocks, text, function calls as tool calls; false when the
// client would send nothing for it.
func assistantNode(parts []part) (transcript.Node, bool) {
	n := transcript.Node{Role: transcript.RoleAssistant}
	var blocks []transcript.Block
	thinking := false
	for _, p := range parts {
		switch {
		case p.FunctionCall != nil:
			args := p.FunctionCall.Args
			if len(args) == 0 || string(args) == "null" {
				args = json.RawMessage("{}")
			}
			n.ToolCalls = append(n.ToolCalls, transcript.ToolCall{ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Arguments: args})
		case p.Text != nil && p.Thought:
			thinking = true
			blocks = append(blocks, transcript.Block{Type: transcript.BlockThinking, Text: *p.Text})
		case p.Text != nil && *p.Text != "":
			blocks = append(blocks, transcript.Block{Type: transcript.BlockText, Text: *p.Text})
		}
	}
	if len(blocks) == 0 && len(n.ToolCalls) == 0 {
		return n, false
	}
	if thinking {
		n.Content = transcript.Content{IsBlocks: true, Blocks: blocks}
	} else {
		// The client joins a model message's text parts into one string.
		var sb strings.Builder
		for _, b := range blocks {
			sb.WriteString(b.Text)
		}
		n.Content = transcript.TextContent(sb.String())
	}
	return n, true
}

// toolNode is a function response as the client sends it: its output,
// else its error, else the response as JSON.
func toolNode(id, callID, name string, response json.RawMessage, failed bool) transcript.Node {
	var r struct {
		Output *string `json:"output"`
		Error  *string `json:"error"`
	}
	text := input.Text(response)
	if json.Unmarshal(response, &r) == nil {
		switch {
		case r.Output != nil:
			text = *r.Output
		case r.Error != nil:
			text, failed = *r.Error, true
		}
	}
	n := transcript.Node{ID: id, Role: transcript.RoleTool, ToolCallID: callID, Name: name, Content: transcript.TextContent(text)}
	if failed {
		n.SetMeta("is_error", true)
	}
	return n
}

// userBlock is a user part the client sends: text, or an image.
func userBlock(p part) (transcript.Block, bool) {
	switch {
	case p.Text != nil:
		return transcript.Block{Type: transcript.BlockText, Text: *p.Text}, true
	case p.InlineData != nil:
		return input.Image("", p.InlineData.MimeType, p.InlineData.Data), true
	case p.FileData != nil:
		return input.Image(p.FileData.FileURI, p.FileData.MimeType, ""), true
	}
	return transcript.Block{}, false
}

// blockContent is one text block as plain text, anything else as blocks
// (the client sends a user message as a list of parts).
func blockContent(blocks []transcript.Block) transcript.Content {
	if len(blocks) == 1 && blocks[0].Type == transcript.BlockText {
		return transcript.TextContent(blocks[0].Text)
	}
	return transcript.Content{IsBlocks: true, Blocks: blocks}
}

// compressionPayload is a chat_compression record's systemPayload.
type compressionPayload struct {
	Info              json.RawMessage `json:"info"`
	CompressedHistory []content       `json:"compressedHistory"`
}

// compression imports the client's compression: compressedHistory is the
// whole history it sends from then on (the summary as a user message, the
// model's acknowledgement, and what it keeps: a pending call and its
// results, restored files). The summary node covers the spine up to the
// record; the rest of compressedHistory follows the last covered node as
// new nodes, so the view after the summary is what the client sends. It
// returns the node the records after it extend.
func (im *importer) compression(r *record, parent string, line int) (string, error) {
	var p compressionPayload
	if raw := bytes.TrimSpace(r.SystemPayload); len(raw) == 0 || string(raw) == "null" {
		im.sink.Count("system/chat_compression", transcript.OutcomeSkipped, "a compression that records no payload: what the client kept is not known, the turns stay as they are")
		return parent, nil
	}
	if err := json.Unmarshal(r.SystemPayload, &p); err != nil {
		return "", input.Errorf(im.file, line, "chat_compression: expected a systemPayload with compressedHistory: %s", input.JSONErrorText(err))
	}
	hist := p.CompressedHistory
	if im.sub && len(hist) > 0 {
		im.sink.Count("system/chat_compression", transcript.OutcomeSkipped, "a compression inside a sub-agent's transcript: a summary may not sit in a caller subtree, its turns stay as they are")
		return parent, nil
	}
	if len(hist) == 0 || hist[0].Role != "user" {
		im.sink.Count("system/chat_compression", transcript.OutcomeSkipped, "no compressedHistory beginning with the summary (older clients record only the token counts): what the client kept is not known, the turns stay as they are")
		return parent, nil
	}
	var covers []string
	for id := parent; id != ""; id = im.pred[id] {
		covers = append(covers, id)
	}
	if len(covers) == 0 {
		im.sink.Count("system/chat_compression", transcript.OutcomeSkipped, "nothing imported before it to cover")
		return parent, nil
	}
	for i, j := 0, len(covers)-1; i < j; i, j = i+1, j-1 {
		covers[i], covers[j] = covers[j], covers[i]
	}
	var texts []string
	for _, p := range hist[0].Parts {
		if p.Text != nil {
			texts = append(texts, *p.Text)
		}
	}
	s := transcript.Node{ID: transcript.SummaryIDPrefix + r.UUID, Role: transcript.SummaryRole, Name: transcript.SummaryName,
		Content: transcript.TextContent(transcript.SummaryPrefix + strings.Join(texts, "\n")), CreatedAt: r.Timestamp}
	s.SetMeta("compaction", true)
	s.SetMeta("source", "qwen-code chat_compression")
	s.SetMeta("covers_ids", covers)
	// The client's own figures (tokens before and after, its trigger),
	// under a key that names the client for audit.
	info := p.Info
	if len(info) == 0 {
		info = json.RawMessage("{}")
	}
	s.Metadata["qwen_code_compression"] = info
	if err := im.sink.Node(s); err != nil {
		return "", err
	}
	im.sink.Count("system/chat_compression", transcript.OutcomeImported, "")
	tip := parent
	for i, c := range hist[1:] {
		next, n, err := im.emit(fmt.Sprintf("%s/kept%d", input.ID(r.UUID, ""), i+1), tip, c, r.Timestamp, nil, false, line)
		if err != nil {
			return "", err
		}
		if n == 0 {
			im.sink.Count("chat_compression/kept content", transcript.OutcomeSkipped, "an empty content: the client sends nothing for it")
			continue
		}
		im.sink.Count("chat_compression/kept content", transcript.OutcomeImported, "")
		tip = next
	}
	return tip, nil
}

// finish names the model and HEAD: the node the client's last record
// extends, its current tail.
func (im *importer) finish() {
	if im.sub {
		return
	}
	if im.model == "" {
		im.model = im.seenModel
	}
	if im.model != "" {
		im.sink.SetModel(im.model)
	}
	if head := im.eff[im.last]; head != "" {
		im.sink.SetHead(head)
	}
}

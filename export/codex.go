package export

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/ctxfold/ctxfold/transcript"
)

// CodexVersion is the client version the session_meta line claims: the
// newest one the interop recordings cover (docs/INTEROP.md).
const CodexVersion = "0.169.0"

// cxLine is one rollout record.
type cxLine struct {
	Timestamp string `json:"timestamp"`
	Type      string `json:"type"`
	Payload   any    `json:"payload"`
}

type cxMeta struct {
	ID         string `json:"id"`
	Timestamp  string `json:"timestamp"`
	CWD        string `json:"cwd"`
	Originator string `json:"originator"`
	CLIVersion string `json:"cli_version"`
	Source     string `json:"source"`
	// BaseInstructions are the instructions Codex sends first, as a
	// developer message, on every request of the session (and on resume).
	BaseInstructions *cxText `json:"base_instructions,omitempty"`
}

type cxText struct {
	Text string `json:"text"`
}

type cxContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type cxMessage struct {
	Type    string      `json:"type"`
	Role    string      `json:"role"`
	Content []cxContent `json:"content"`
}

type cxReasoning struct {
	Type             string      `json:"type"`
	Summary          []cxContent `json:"summary"`
	Content          any         `json:"content"`
	EncryptedContent *string     `json:"encrypted_content"`
}

type cxCall struct {
	Type      string `json:"type"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
}

type cxOutput struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

type cxCompacted struct {
	Message            string `json:"message"`
	ReplacementHistory []any  `json:"replacement_history"`
}

// writeCodex writes a rollout: session_meta, then one response_item per
// message, reasoning, call and output. A summary becomes a compacted record
// whose replacement history is the summary alone, placed between the
// covered and the kept items: Codex rebuilds its history from the
// replacement and then appends what follows, so it sends [summary, kept
// tail, new turns], and an import reads the covered items as what the
// summary covers.
//
// Codex sends its base instructions from session_meta and adds its own
// initial context (skills, environment) to a resumed rollout that records
// no world state, as an export does; so the base instructions go into
// session_meta only, and neither they nor that context go into the
// replacement history, as in Codex's own compacted record (docs/EXPORT.md).
func writeCodex(out *countingWriter, b *branch, opts Options, ws *warnings) error {
	now := opts.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	base := codexBase(b.nodes)
	meta := cxMeta{ID: opts.SessionID, Timestamp: now, CWD: opts.CWD, Originator: "codex_cli_rs", CLIVersion: CodexVersion, Source: "exec"}
	if base != nil {
		meta.BaseInstructions = &cxText{Text: base.Content.PlainText()}
	}
	out.line(cxLine{Timestamp: now, Type: "session_meta", Payload: meta})
	item := func(n *transcript.Node, p any) {
		out.line(cxLine{Timestamp: stamp(n, opts.Now), Type: "response_item", Payload: p})
	}
	inInitial := true
	for k, n := range b.nodes {
		if b.summary != nil && k == b.at+b.n {
			codexCompacted(out, b, opts, ws)
		}
		inInitial = inInitial && !n.IsRealRequest()
		switch {
		case n == base:
		case clientCompactionOutput(n, ws):
		case b.summary == nil && inInitial && codexOwnContext(n):
			// Sent on resume: no compacted record follows to replace it.
			ws.add("client_context", n.ID, "Codex's own initial context (skills, environment) is not exported: the client adds it again on resume")
		default:
			codexNode(n, item, ws)
		}
	}
	if b.summary != nil && b.at+b.n == len(b.nodes) {
		codexCompacted(out, b, opts, ws)
	}
	return out.err
}

// codexBase is the node imported from session_meta.base_instructions, when
// it leads the branch.
func codexBase(nodes []*transcript.Node) *transcript.Node {
	for _, n := range nodes {
		if n.Role != transcript.RoleSystem {
			return nil
		}
		if string(n.Metadata["codex_base_instructions"]) == "true" {
			return n
		}
	}
	return nil
}

// codexOwnContext reports whether n, before the first request the user
// typed, is context Codex builds itself: its developer messages (skills,
// permissions) and its <environment_context> user message. Codex sends a
// fresh copy of them on resume.
func codexOwnContext(n *transcript.Node) bool {
	if n.Role == transcript.RoleSystem {
		_, fromCodex := n.Metadata["codex_role"]
		return fromCodex
	}
	return n.Role == transcript.RoleUser && strings.HasPrefix(strings.TrimSpace(n.Content.PlainText()), "<environment_context>")
}

// codexCompacted writes the compacted record. What the view keeps before
// the summary leads the replacement history, so the client sends it first
// as the view does, except what Codex sends itself: its base instructions
// (from session_meta) and its own initial context before the first request.
func codexCompacted(out *countingWriter, b *branch, opts Options, ws *warnings) {
	text := summaryText(b.summary)
	var history []any
	inInitial := true
	for _, n := range b.nodes[:b.at] {
		inInitial = inInitial && !n.IsRealRequest()
		if inInitial && codexOwnContext(n) {
			continue
		}
		codexNode(n, func(_ *transcript.Node, p any) { history = append(history, p) }, ws)
	}
	history = append(history, cxMessage{Type: "message", Role: "user", Content: []cxContent{{Type: "input_text", Text: text}}})
	out.line(cxLine{Timestamp: stamp(b.summary, opts.Now), Type: "compacted", Payload: cxCompacted{Message: text, ReplacementHistory: history}})
}

func codexNode(n *transcript.Node, item func(*transcript.Node, any), ws *warnings) {
	switch n.Role {
	case transcript.RoleSystem:
		// Codex records its instructions to the model as developer
		// messages and sends them again on resume.
		item(n, cxMessage{Type: "message", Role: "developer", Content: []cxContent{{Type: "input_text", Text: n.Content.PlainText()}}})
		return
	case transcript.RoleTool:
		for _, r := range n.ToolResults() {
			item(n, cxOutput{Type: "function_call_output", CallID: r.ToolCallID, Output: r.Text})
		}
		return
	}
	textType := "input_text"
	if n.Role == transcript.RoleAssistant {
		textType = "output_text"
	}
	var texts []cxContent
	flushText := func() {
		if len(texts) > 0 {
			item(n, cxMessage{Type: "message", Role: string(n.Role), Content: texts})
			texts = nil
		}
	}
	if !n.Content.IsBlocks && n.Content.Text != "" {
		texts = append(texts, cxContent{Type: textType, Text: n.Content.Text})
	}
	for _, bl := range n.Content.Blocks {
		switch bl.Type {
		case transcript.BlockText:
			texts = append(texts, cxContent{Type: textType, Text: bl.Text})
		case transcript.BlockThinking:
			flushText()
			if n.Role != transcript.RoleAssistant {
				ws.add("user_thinking", n.ID, "thinking in a user message has no Codex form and is dropped")
				continue
			}
			item(n, cxReasoning{Type: "reasoning", Summary: []cxContent{{Type: "summary_text", Text: bl.Text}}})
		case transcript.BlockToolCall:
			flushText()
			item(n, cxCall{Type: "function_call", Name: bl.Name, Arguments: argumentsString(bl.Arguments), CallID: bl.ID})
		case transcript.BlockToolResult:
			flushText()
			item(n, cxOutput{Type: "function_call_output", CallID: bl.ToolCallID, Output: bl.Text})
		default:
			texts = append(texts, cxContent{Type: textType, Text: mediaNotice(bl)})
			ws.add("media", n.ID, "media is kept by reference only; a text notice stands in for it")
		}
	}
	flushText()
	for _, c := range n.ToolCalls {
		item(n, cxCall{Type: "function_call", Name: c.Name, Arguments: argumentsString(c.Arguments), CallID: c.ID})
	}
}

// CodexPath is where Codex looks for a rollout of session id started at t:
// <codex home>/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<id>.jsonl,
// codex home being $CODEX_HOME or ~/.codex.
func CodexPath(codexHome, sessionID string, t time.Time) string {
	t = t.UTC()
	name := fmt.Sprintf("rollout-%s-%s.jsonl", t.Format("2006-01-02T15-04-05"), sessionID)
	return filepath.Join(codexHome, "sessions", t.Format("2006"), t.Format("01"), t.Format("02"), name)
}

// ResumeCommand is the command that continues the exported session.
func ResumeCommand(to Target, sessionID string) string {
	switch to {
	case ClaudeCode:
		return "claude --resume " + sessionID
	case Codex:
		return "codex resume " + sessionID
	case Gemini:
		return "gemini --resume " + sessionID
	}
	return ""
}

package export

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ctxfold/ctxfold/render"
	"github.com/ctxfold/ctxfold/transcript"
)

// GeminiCLIVersion is the client version whose session files the export
// writes: the one the interop recordings cover (docs/INTEROP-gemini-cli.md).
const GeminiCLIVersion = "0.61.0"

// geminiAck is the model's answer to the snapshot in Gemini CLI's own
// compressed history, sent with it.
const geminiAck = "Got it. Thanks for the additional context!"

// gmHeader is the first line of a Gemini CLI 0.61 session file.
type gmHeader struct {
	SessionID   string `json:"sessionId"`
	ProjectHash string `json:"projectHash"`
	StartTime   string `json:"startTime"`
	LastUpdated string `json:"lastUpdated"`
	Kind        string `json:"kind"`
}

// gmMessage is one message record.
type gmMessage struct {
	ID        string              `json:"id"`
	Timestamp string              `json:"timestamp"`
	Type      string              `json:"type"`
	Content   []render.GeminiPart `json:"content"`
	Thoughts  []gmThought         `json:"thoughts,omitempty"`
	ToolCalls []gmToolCall        `json:"toolCalls,omitempty"`
	Model     string              `json:"model,omitempty"`
}

type gmThought struct {
	Subject     string `json:"subject"`
	Description string `json:"description"`
	Timestamp   string `json:"timestamp"`
}

type gmToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Args      json.RawMessage `json:"args"`
	Status    string          `json:"status"`
	Timestamp string          `json:"timestamp"`
}

// gmSet is the record Gemini CLI writes its history back with.
type gmSet struct {
	Set struct {
		Messages []gmMessage `json:"messages"`
	} `json:"$set"`
}

// writeGemini writes a Gemini CLI 0.61 session file: the header, then one
// message per node (consecutive tool results in one user message, as the
// CLI records them). A summary is written as the CLI writes its own
// compression (its chatCompressionService): after the covered messages, a
// {"$set": {"messages": …}} record whose list is what the view keeps
// before the summary, a user <state_snapshot> message with the summary,
// the model's acknowledgement, then the kept tail. The CLI's loader
// (loadConversationRecord) replaces its history with that list, so a
// resume sends [snapshot, acknowledgement, kept tail, new turns] and none
// of the covered turns, which stay in the file before the record; and the
// importer reads the record back as a compaction covering them.
//
// What each message holds is render's Gemini contents for its nodes: text
// and media parts, functionCall parts as the message's toolCalls (the form
// the CLI records; their results are the next user message's
// functionResponse parts), thinking as thoughts.
func writeGemini(out *countingWriter, b *branch, opts Options, ws *warnings) error {
	now := opts.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	hash := opts.ProjectHash
	if hash == "" {
		hash = GeminiProjectHash(opts.CWD)
	}
	out.line(gmHeader{SessionID: opts.SessionID, ProjectHash: hash, StartTime: now, LastUpdated: now, Kind: "main"})
	w := &gmWriter{opts: opts, ws: ws, names: map[string]string{}}
	for _, n := range b.nodes {
		for _, c := range n.AllToolCalls() {
			w.names[c.ID] = c.Name
		}
	}
	if b.summary == nil {
		for _, m := range w.messages(b.nodes) {
			out.line(m)
		}
		return out.err
	}
	before := w.messages(b.nodes[:b.at])
	for _, m := range before {
		out.line(m)
	}
	for _, m := range w.messages(b.nodes[b.at : b.at+b.n]) {
		out.line(m)
	}
	var set gmSet
	set.Set.Messages = append(append(before, w.snapshot(b.summary)...), w.messages(b.nodes[b.at+b.n:])...)
	out.line(set)
	return out.err
}

type gmWriter struct {
	opts  Options
	ws    *warnings
	names map[string]string // call id → function name
}

// messages converts a run of nodes; consecutive tool nodes share one user
// message.
func (w *gmWriter) messages(nodes []*transcript.Node) []gmMessage {
	var out []gmMessage
	toolRun := false
	for _, n := range nodes {
		m, ok := w.message(n)
		if !ok {
			toolRun = false
			continue
		}
		if n.Role == transcript.RoleTool && toolRun {
			last := &out[len(out)-1]
			last.Content = append(last.Content, m.Content...)
			continue
		}
		toolRun = n.Role == transcript.RoleTool
		out = append(out, m)
	}
	return out
}

func (w *gmWriter) message(n *transcript.Node) (gmMessage, bool) {
	if n.Role == transcript.RoleSystem {
		w.ws.add("system", n.ID, "system prompts are not exported: Gemini CLI sends its own")
		return gmMessage{}, false
	}
	if clientCompactionOutput(n, w.ws) {
		return gmMessage{}, false
	}
	if n.Role == transcript.RoleTool && n.Name == "" && w.names[n.ToolCallID] != "" {
		c := *n
		c.Name = w.names[n.ToolCallID]
		n = &c
	}
	m := gmMessage{ID: ClientID(n.ID), Timestamp: stamp(n, w.opts.Now), Type: "user", Content: []render.GeminiPart{}}
	for _, c := range render.GeminiRequest([]*transcript.Node{n}).Contents {
		for _, p := range c.Parts {
			if fc := p.FunctionCall; fc != nil {
				m.ToolCalls = append(m.ToolCalls, gmToolCall{ID: fc.ID, Name: fc.Name, Args: fc.Args, Status: "success", Timestamp: m.Timestamp})
				continue
			}
			m.Content = append(m.Content, p)
		}
	}
	w.mediaWarnings(n)
	if n.Role == transcript.RoleAssistant {
		m.Type = "gemini"
		for _, bl := range n.Content.Blocks {
			if bl.Type == transcript.BlockThinking {
				m.Thoughts = append(m.Thoughts, gmThought{Description: bl.Text, Timestamp: m.Timestamp})
			}
		}
	} else if n.Content.IsBlocks {
		for _, bl := range n.Content.Blocks {
			if bl.Type == transcript.BlockThinking {
				w.ws.add("user_thinking", n.ID, "thinking in a user message has no Gemini CLI form and is dropped")
			}
		}
	}
	if len(m.Content) == 0 && len(m.ToolCalls) == 0 && len(m.Thoughts) == 0 {
		return gmMessage{}, false
	}
	return m, true
}

// mediaWarnings names the media render's Gemini contents cannot carry as
// data: an image by local reference becomes a text notice, other media
// is not sent.
func (w *gmWriter) mediaWarnings(n *transcript.Node) {
	for _, bl := range n.Content.Blocks {
		switch bl.Type {
		case transcript.BlockText, transcript.BlockThinking, transcript.BlockToolCall, transcript.BlockToolResult:
		case transcript.BlockImage:
			if !strings.HasPrefix(bl.Source, "data:") && !strings.Contains(bl.Source, "://") {
				w.ws.add("media", n.ID, "an image by local reference is kept by reference only; a text notice stands in for it")
			}
		default:
			w.ws.add("media_dropped", n.ID, "media other than images has no Gemini part here and is not exported")
		}
	}
}

// snapshot is the summary as Gemini CLI's compression sends it: a user
// <state_snapshot> message and the model's acknowledgement. A summary
// imported from Gemini CLI carries the contents it sent
// (metadata.gemini_contents); ctxfold's own summary is wrapped in the
// snapshot tags, which is how the CLI and the importer know a compressed
// history.
func (w *gmWriter) snapshot(s *transcript.Node) []gmMessage {
	at := stamp(s, w.opts.Now)
	user := gmMessage{ID: ClientID(s.ID), Timestamp: at, Type: "user"}
	ack := gmMessage{ID: ClientID(s.ID + "/ack"), Timestamp: at, Type: "gemini"}
	var cs []render.GeminiContent
	if raw, ok := s.Metadata[transcript.MetaGeminiContents]; ok && json.Unmarshal(raw, &cs) == nil && len(cs) == 2 &&
		cs[0].Role == "user" && cs[1].Role == "model" {
		user.Content, ack.Content = cs[0].Parts, cs[1].Parts
		return []gmMessage{user, ack}
	}
	text := strings.TrimSpace(summaryText(s))
	if !strings.HasPrefix(text, "<state_snapshot>") {
		text = "<state_snapshot>\n" + text + "\n</state_snapshot>"
	}
	ackText := geminiAck
	user.Content = []render.GeminiPart{{Text: &text}}
	ack.Content = []render.GeminiPart{{Text: &ackText}}
	return []gmMessage{user, ack}
}

// GeminiProjectHash is the projectHash Gemini CLI records for a project
// folder: the hex SHA-256 of its path.
func GeminiProjectHash(cwd string) string {
	h := sha256.Sum256([]byte(cwd))
	return hex.EncodeToString(h[:])
}

// GeminiFileName is the name Gemini CLI 0.61 gives a session started at
// t: session-YYYY-MM-DDThh-mm-<first 8 characters of the id>.jsonl.
func GeminiFileName(sessionID string, t time.Time) string {
	id := sessionID
	if len(id) > 8 {
		id = id[:8]
	}
	return "session-" + t.UTC().Format("2006-01-02T15-04") + "-" + id + ".jsonl"
}

// GeminiPath is where Gemini CLI 0.61 looks for a session of the project
// folder cwd: <gemini home>/tmp/<project>/chats/<GeminiFileName>, gemini
// home being $GEMINI_CLI_HOME/.gemini or ~/.gemini. The project's folder is
// the one projects.json maps cwd to, else the one whose .project_root
// names cwd, else the folder named by the path's hash, which the CLI adopts
// (copies to its own name) the first time it runs in cwd.
func GeminiPath(geminiHome, cwd, sessionID string, t time.Time) string {
	return filepath.Join(geminiHome, "tmp", geminiProjectFolder(geminiHome, cwd), "chats", GeminiFileName(sessionID, t))
}

func geminiProjectFolder(geminiHome, cwd string) string {
	valid := func(s string) bool { return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, `/\`) }
	if b, err := os.ReadFile(filepath.Join(geminiHome, "projects.json")); err == nil {
		var reg struct {
			Projects map[string]string `json:"projects"`
		}
		if json.Unmarshal(b, &reg) == nil && valid(reg.Projects[cwd]) {
			return reg.Projects[cwd]
		}
	}
	roots, _ := filepath.Glob(filepath.Join(geminiHome, "tmp", "*", ".project_root"))
	for _, r := range roots {
		if b, err := os.ReadFile(r); err == nil && strings.TrimSpace(string(b)) == cwd {
			return filepath.Base(filepath.Dir(r))
		}
	}
	return GeminiProjectHash(cwd)
}

// GeminiSessions lists the session files of the project folder of cwd
// whose name carries sessionID's first 8 characters: Gemini CLI names a
// file after its start time, so a second export with the same id would
// write a second file beside the first instead of replacing it.
func GeminiSessions(geminiHome, cwd, sessionID string) []string {
	id := sessionID
	if len(id) > 8 {
		id = id[:8]
	}
	m, _ := filepath.Glob(filepath.Join(filepath.Dir(GeminiPath(geminiHome, cwd, sessionID, time.Time{})), "session-*-"+id+".json*"))
	return m
}

// Package opencode imports OpenCode sessions, from its SQLite database
// (opencode.db: session, message and part tables, each row's JSON in a
// "data" column) or from the older file layout storage/session/<project>/
// <id>.json, storage/message/<session>/<id>.json and
// storage/part/<message>/<id>.json. Each session is one conversation.
//
// A message is its parts (OpenCode's MessageV2): text, reasoning, file and
// tool parts become the content of user and assistant nodes. An assistant
// message is one node per step (each step is one request to the model),
// its tool parts calls with their output as tool results; a tool part that
// never finished gets the error result OpenCode itself sends for it. The
// tokens of a step-finish part (or the message's tokens) are the usage of
// its step. A compaction (a user message with a "compaction" part, then
// the assistant message marked summary) becomes a summary node covering
// every turn before it. The database is opened read-only. It only reads
// and hands nodes to a transcript.ImportSink.
package opencode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// Options tune the import.
type Options = input.Options

// sqliteMagic starts every SQLite 3 database file.
var sqliteMagic = []byte("SQLite format 3\x00")

// Detect reports whether head is OpenCode's database: a SQLite file whose
// schema (on its first page) has the message and part tables.
func Detect(head []byte) bool {
	return bytes.HasPrefix(head, sqliteMagic) && hasSchema(head)
}

func hasSchema(head []byte) bool {
	return bytes.Contains(head, []byte("message")) && bytes.Contains(head, []byte("part")) && bytes.Contains(head, []byte("session_id"))
}

// DetectPath reports whether path is an OpenCode store by its layout: a
// storage directory (session/ and message/), the data directory holding
// one or opencode.db, or a session file inside storage/session/.
func DetectPath(path string) bool {
	if _, ok := storageRoot(path); ok {
		return true
	}
	st, err := os.Stat(path)
	if err == nil && st.IsDir() {
		_, err := os.Stat(filepath.Join(path, "opencode.db"))
		return err == nil
	}
	return false
}

// Near explains why an input looks like OpenCode's but is not.
func Near(path string, head []byte) string {
	if bytes.HasPrefix(head, sqliteMagic) {
		return "a SQLite database, but not OpenCode's (no session, message and part tables on its first page)"
	}
	return ""
}

// storageRoot finds the storage directory path stands for.
func storageRoot(path string) (string, bool) {
	isStorage := func(dir string) bool {
		a, errA := os.Stat(filepath.Join(dir, "session"))
		b, errB := os.Stat(filepath.Join(dir, "message"))
		return errA == nil && errB == nil && a.IsDir() && b.IsDir()
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", false
	}
	if st.IsDir() {
		if isStorage(path) {
			return path, true
		}
		if s := filepath.Join(path, "storage"); isStorage(s) {
			return s, true
		}
		return "", false
	}
	// storage/session/<project>/<id>.json
	if strings.HasSuffix(path, ".json") {
		s := filepath.Dir(filepath.Dir(filepath.Dir(path)))
		if filepath.Base(filepath.Dir(filepath.Dir(path))) == "session" && isStorage(s) {
			return s, true
		}
	}
	return "", false
}

// Import reads each input: opencode.db, a storage directory (or the data
// directory above it), or one session file of the storage.
func Import(ctx context.Context, files []string, opts Options, target transcript.ImportTarget) error {
	for _, path := range files {
		st, err := os.Stat(path)
		if err != nil {
			return &transcript.ParseError{File: path, Msg: err.Error(), Err: err}
		}
		var src source
		db := filepath.Join(path, "opencode.db")
		_, dbErr := os.Stat(db)
		switch root, ok := storageRoot(path); {
		case st.IsDir() && dbErr == nil:
			// A data directory with both: OpenCode moved the storage
			// into the database, which is what it now reads and writes.
			src = &database{path: db, opts: opts}
		case ok:
			only := ""
			if !st.IsDir() {
				only = strings.TrimSuffix(filepath.Base(path), ".json")
			}
			src = &storage{root: root, only: only, opts: opts}
		case st.IsDir():
			return input.Errorf(path, 0, "neither storage/ nor opencode.db: not an OpenCode data directory")
		default:
			src = &database{path: path, opts: opts}
		}
		if err := importSource(ctx, src, target); err != nil {
			return err
		}
	}
	return nil
}

// source is where sessions are read from.
type source interface {
	// sessions lists the session ids in creation order.
	sessions(ctx context.Context) ([]sessionInfo, error)
	// messages returns a session's messages in order, each with its parts.
	messages(ctx context.Context, id string) ([]message, error)
	close()
}

type sessionInfo struct {
	id, title, parent string
	file              string
}

type message struct {
	id    string
	file  string
	line  int
	info  messageInfo
	parts []part
}

type messageInfo struct {
	ID   string `json:"id"`
	Role string `json:"role"`
	Time struct {
		Created   float64 `json:"created"`
		Completed float64 `json:"completed"`
	} `json:"time"`
	ModelID    string          `json:"modelID"`
	ProviderID string          `json:"providerID"`
	Summary    json.RawMessage `json:"summary"`
	Error      json.RawMessage `json:"error"`
	Tokens     *tokens         `json:"tokens"`
	Model      *struct {
		ModelID string `json:"modelID"`
	} `json:"model"`
}

type tokens struct {
	Input     int64 `json:"input"`
	Output    int64 `json:"output"`
	Reasoning int64 `json:"reasoning"`
	Cache     struct {
		Read  int64 `json:"read"`
		Write int64 `json:"write"`
	} `json:"cache"`
}

type part struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Synthetic bool            `json:"synthetic"`
	Ignored   bool            `json:"ignored"`
	CallID    string          `json:"callID"`
	Tool      string          `json:"tool"`
	Mime      string          `json:"mime"`
	Filename  string          `json:"filename"`
	URL       string          `json:"url"`
	Tokens    *tokens         `json:"tokens"`
	State     *toolState      `json:"state"`
	Auto      json.RawMessage `json:"auto"`
	file      string
}

type toolState struct {
	Status string          `json:"status"`
	Input  json.RawMessage `json:"input"`
	Output json.RawMessage `json:"output"`
	Error  json.RawMessage `json:"error"`
	Title  string          `json:"title"`
}

func importSource(ctx context.Context, src source, target transcript.ImportTarget) error {
	defer src.close()
	sessions, err := src.sessions(ctx)
	if err != nil {
		return err
	}
	for _, s := range sessions {
		if err := ctx.Err(); err != nil {
			return err
		}
		msgs, err := src.messages(ctx, s.id)
		if err != nil {
			return err
		}
		if len(msgs) == 0 {
			continue
		}
		sink, err := target.Conversation(s.id)
		if err != nil {
			return err
		}
		c := &conv{sink: sink, session: s}
		if err := c.run(msgs); err != nil {
			return err
		}
	}
	return nil
}

type conv struct {
	sink    transcript.ImportSink
	session sessionInfo
	prev    string
	real    []string
	model   string
	k       int
	// compacting is set between a compaction request and its summary.
	compacting bool
	covered    int
}

func (c *conv) run(msgs []message) error {
	sort.SliceStable(msgs, func(i, j int) bool {
		a, b := msgs[i], msgs[j]
		if a.info.Time.Created != b.info.Time.Created {
			return a.info.Time.Created < b.info.Time.Created
		}
		return a.id < b.id
	})
	for i := range msgs {
		if err := c.message(&msgs[i]); err != nil {
			return err
		}
	}
	if len(c.real) == 0 {
		c.sink.Warn(c.session.file, 0, fmt.Sprintf("session %q: no message with content", c.session.id))
		n := transcript.Node{ID: "opencode-empty", Role: transcript.RoleUser, Content: transcript.TextContent("")}
		n.SetMeta("opencode_placeholder", true)
		return c.sink.Node(n)
	}
	if c.model != "" {
		c.sink.SetModel(c.model)
	}
	return nil
}

func ms(v float64) string {
	if v <= 0 || v > 1e14 {
		return ""
	}
	return time.UnixMilli(int64(v)).UTC().Format(time.RFC3339Nano)
}

func isTrue(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "true" }

func (c *conv) message(m *message) error {
	role := m.info.Role
	kind := "message/" + role
	if m.info.ModelID != "" {
		c.model = m.info.ModelID
	} else if m.info.Model != nil && m.info.Model.ModelID != "" && c.model == "" {
		c.model = m.info.Model.ModelID
	}
	switch role {
	case "user":
		for _, p := range m.parts {
			if p.Type == "compaction" {
				// The request to compact: its answer is the summary.
				c.compacting = true
				c.sink.Count("part/compaction", transcript.OutcomeMerged, "the summary node of this compaction")
				c.sink.Count(kind, transcript.OutcomeMerged, "asks for the compaction summary; part of the summary node")
				for _, q := range m.parts {
					if q.Type != "compaction" {
						c.sink.Count("part/"+q.Type, transcript.OutcomeMerged, "part of a compaction request")
					}
				}
				return nil
			}
		}
		return c.user(m)
	case "assistant":
		if isTrue(m.info.Summary) || c.compacting {
			return c.summary(m)
		}
		return c.assistant(m)
	}
	c.sink.Count(kind, transcript.OutcomeSkipped, "unknown role")
	c.sink.Warn(m.file, m.line, fmt.Sprintf("message %q: unknown role %q; not imported", m.id, role))
	return nil
}

func (c *conv) emit(n transcript.Node) error {
	n.Predecessor = c.prev
	n.ID = input.ID(n.ID, fmt.Sprintf("oc-%d", c.k))
	if err := c.sink.Node(n); err != nil {
		return err
	}
	c.prev = n.ID
	c.real = append(c.real, n.ID)
	return nil
}

func (c *conv) user(m *message) error {
	var blocks []transcript.Block
	for _, p := range m.parts {
		kind := "part/" + p.Type
		switch p.Type {
		case "text":
			if p.Ignored {
				c.sink.Count(kind, transcript.OutcomeSkipped, "marked ignored: not sent to the model")
				continue
			}
			blocks = append(blocks, transcript.Block{Type: transcript.BlockText, Text: p.Text})
		case "file":
			if strings.HasPrefix(p.Mime, "image/") || p.Mime == "application/pdf" {
				blocks = append(blocks, input.Image(p.URL, p.Mime, ""))
			} else {
				// A text file's content reaches the model through the
				// synthetic text parts beside it.
				c.sink.Count(kind, transcript.OutcomeMerged, "its content is in the synthetic text parts of the message")
				continue
			}
		case "agent", "subtask":
			blocks = append(blocks, transcript.Block{Type: transcript.BlockText, Text: fmt.Sprintf("[%s] %s", p.Type, p.Text)})
		default:
			c.sink.Count(kind, transcript.OutcomeSkipped, "not part of what the model reads")
			continue
		}
		c.sink.Count(kind, transcript.OutcomeImported, "")
	}
	n := transcript.Node{ID: m.id, Role: transcript.RoleUser, CreatedAt: ms(m.info.Time.Created), Content: content(blocks)}
	c.sink.Count("message/user", transcript.OutcomeImported, "")
	c.k++
	return c.emit(n)
}

func content(blocks []transcript.Block) transcript.Content {
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

// step is one request of an assistant message: its output and the
// results of the calls it made.
type step struct {
	blocks  []transcript.Block
	calls   []transcript.ToolCall
	results []transcript.Node
	usage   *transcript.Usage
}

func usageOf(t *tokens) *transcript.Usage {
	if t == nil || (t.Input == 0 && t.Output == 0 && t.Cache.Read == 0 && t.Cache.Write == 0) {
		return nil
	}
	// OpenCode's input leaves out the cached reads and the cache writes;
	// usage.input_tokens is the whole prompt (docs/FORMAT.md §2).
	u := &transcript.Usage{InputTokens: t.Input + t.Cache.Read + t.Cache.Write, OutputTokens: t.Output, CachedInputTokens: t.Cache.Read,
		Extra: map[string]json.RawMessage{"opencode_input": input.Raw(t.Input)}}
	if t.Cache.Write != 0 {
		u.Extra["cache_write_tokens"] = input.Raw(t.Cache.Write)
	}
	if t.Reasoning != 0 {
		u.Extra["reasoning_output_tokens"] = input.Raw(t.Reasoning)
	}
	return u
}

func (c *conv) assistant(m *message) error {
	steps := c.steps(m)
	if len(steps) == 0 {
		if len(m.info.Error) > 0 && string(m.info.Error) != "null" {
			c.sink.Count("message/assistant", transcript.OutcomeSkipped, "a failed request with no output")
			c.sink.Warn(m.file, m.line, fmt.Sprintf("message %q: the request failed (%s)", m.id, input.Text(m.info.Error)))
			return nil
		}
		c.sink.Count("message/assistant", transcript.OutcomeSkipped, "no output")
		return nil
	}
	if steps[len(steps)-1].usage == nil {
		steps[len(steps)-1].usage = usageOf(m.info.Tokens)
	}
	if err := c.emitSteps(m, steps); err != nil {
		return err
	}
	c.sink.Count("message/assistant", transcript.OutcomeImported, "")
	return nil
}

// steps groups an assistant message's parts into the requests that
// produced them: one per step-start, or, without steps, a new one after
// each tool call answered.
func (c *conv) steps(m *message) []*step {
	var steps []*step
	cur := &step{}
	hasSteps := false
	for _, p := range m.parts {
		if p.Type == "step-start" {
			hasSteps = true
		}
	}
	newStep := func() {
		if len(cur.blocks) > 0 || len(cur.calls) > 0 {
			steps = append(steps, cur)
		}
		cur = &step{}
	}
	for _, p := range m.parts {
		kind := "part/" + p.Type
		switch p.Type {
		case "step-start":
			newStep()
			c.sink.Count(kind, transcript.OutcomeMerged, "starts the node of its step")
			continue
		case "step-finish":
			cur.usage = usageOf(p.Tokens)
			c.sink.Count(kind, transcript.OutcomeMerged, "usage of its step")
			continue
		case "text":
			if !hasSteps && len(cur.calls) > 0 {
				newStep() // text after a call answers its result: the next request
			}
			cur.blocks = append(cur.blocks, transcript.Block{Type: transcript.BlockText, Text: p.Text})
		case "reasoning":
			if !hasSteps && len(cur.calls) > 0 {
				newStep()
			}
			cur.blocks = append(cur.blocks, transcript.Block{Type: transcript.BlockThinking, Text: p.Text})
		case "tool":
			if p.CallID == "" {
				c.sink.Count(kind, transcript.OutcomeSkipped, "no callID")
				c.sink.Warn(p.file, 0, fmt.Sprintf("part %q: a tool part without a callID; not imported", p.ID))
				continue
			}
			call, res := toolCall(p)
			cur.calls = append(cur.calls, call)
			cur.results = append(cur.results, res)
		case "file":
			cur.blocks = append(cur.blocks, input.Image(p.URL, p.Mime, ""))
		default:
			c.sink.Count(kind, transcript.OutcomeSkipped, "not part of what the model reads (snapshot, patch, retry, …)")
			continue
		}
		c.sink.Count(kind, transcript.OutcomeImported, "")
	}
	newStep()
	return steps
}

// toolCall is a tool part's call and the result OpenCode sends back for it.
func toolCall(p part) (transcript.ToolCall, transcript.Node) {
	args := json.RawMessage("{}")
	res := transcript.Node{ID: "r-" + p.ID, Role: transcript.RoleTool, ToolCallID: p.CallID}
	if st := p.State; st != nil {
		if len(bytes.TrimSpace(st.Input)) > 0 && string(bytes.TrimSpace(st.Input)) != "null" {
			args = st.Input
		}
		switch st.Status {
		case "completed":
			res.Content = transcript.TextContent(input.Text(st.Output))
		case "error":
			res.Content = transcript.TextContent(input.Text(st.Error))
			res.SetMeta("is_error", true)
		default:
			// OpenCode answers an unfinished call this way when it
			// next sends the conversation.
			res.Content = transcript.TextContent("[Tool execution was interrupted]")
			res.SetMeta("is_error", true)
			res.SetMeta("opencode_status", st.Status)
		}
	} else {
		res.Content = transcript.TextContent("[Tool execution was interrupted]")
		res.SetMeta("is_error", true)
	}
	return transcript.ToolCall{ID: p.CallID, Name: p.Tool, Arguments: args}, res
}

// emitSteps writes one assistant node per step, each followed by its
// tool results.
func (c *conv) emitSteps(m *message, steps []*step) error {
	seen := map[string]bool{}
	for i, s := range steps {
		id := m.id
		if i > 0 {
			id = fmt.Sprintf("%s-%d", m.id, i+1)
		}
		n := transcript.Node{ID: id, Role: transcript.RoleAssistant, CreatedAt: ms(m.info.Time.Created), Usage: s.usage}
		n.Content = content(s.blocks)
		if len(s.blocks) == 0 {
			n.Content = transcript.TextContent("")
		}
		for _, call := range s.calls {
			if seen[call.ID] {
				call.ID = call.ID + "-" + id
			}
			seen[call.ID] = true
			n.ToolCalls = append(n.ToolCalls, call)
		}
		if len(m.info.Error) > 0 && string(m.info.Error) != "null" && i == len(steps)-1 {
			n.SetMeta("opencode_error", json.RawMessage(m.info.Error))
		}
		c.k++
		if err := c.emit(n); err != nil {
			return err
		}
		for j, r := range s.results {
			r.ToolCallID = n.ToolCalls[j].ID
			if err := c.emit(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// summary is the answer to a compaction: a summary node covering every
// turn so far (OpenCode sends nothing before it again).
func (c *conv) summary(m *message) error {
	c.compacting = false
	var texts []string
	for _, p := range m.parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
			c.sink.Count("part/text", transcript.OutcomeMerged, "text of the compaction summary")
		} else {
			c.sink.Count("part/"+p.Type, transcript.OutcomeSkipped, "part of the compaction summary message")
		}
	}
	text := strings.TrimSpace(strings.Join(texts, "\n"))
	if text == "" || len(c.real) == 0 {
		c.sink.Count("message/assistant", transcript.OutcomeSkipped, "a compaction summary with no text, or nothing before it")
		return nil
	}
	n := transcript.Node{ID: transcript.SummaryIDPrefix + m.id, Role: transcript.SummaryRole, Name: transcript.SummaryName,
		CreatedAt: ms(m.info.Time.Created), Content: transcript.TextContent(transcript.SummaryPrefix + text)}
	n.SetMeta("compaction", true)
	n.SetMeta("covers_ids", append([]string(nil), c.real...))
	n.SetMeta("source", "opencode compaction")
	if u := usageOf(m.info.Tokens); u != nil {
		// What the compaction request cost; not the usage of a turn the
		// model reads, so kept beside it.
		n.SetMeta("opencode_summary_usage", u)
	}
	if err := c.sink.Node(n); err != nil {
		return err
	}
	c.sink.Count("message/assistant", transcript.OutcomeImported, "as the compaction summary")
	return nil
}

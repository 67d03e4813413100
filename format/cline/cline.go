// Package cline imports Cline tasks: tasks/<id>/api_conversation_history.json
// is what Cline sent the model, an array of Anthropic Messages API messages
// (text, images, tool_use and tool_result blocks; tools Cline asks for in
// XML stay text, as the model read them); ui_messages.json beside it holds
// the usage of each request ("api_req_started" messages whose text is JSON
// {tokensIn, tokensOut, cacheWrites, cacheReads, cost}), which goes on the
// assistant message the request produced, and task_metadata.json the
// model. One task is one conversation, named after its directory; the input
// is the history file, a task directory, or a tasks directory holding
// several. It only reads the files and hands nodes to a
// transcript.ImportSink.
package cline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// Options tune the import.
type Options = input.Options

// File names of a Cline task directory.
const (
	HistoryFile  = "api_conversation_history.json"
	UIFile       = "ui_messages.json"
	MetadataFile = "task_metadata.json"
)

// Detect reports whether head is a Cline conversation history: a JSON
// array of messages whose first user message is Cline's "<task>" (or
// carries its environment details).
func Detect(head []byte) bool {
	// Cline writes JSON.stringify(history): the array opens with the first
	// message's "role".
	t := bytes.TrimSpace(head)
	h := bytes.TrimLeft(t, "[ \t\r\n")
	if len(t) == 0 || t[0] != '[' || !bytes.HasPrefix(bytes.TrimLeft(bytes.TrimPrefix(h, []byte("{")), " \t\r\n"), []byte(`"role"`)) {
		return false
	}
	return bytes.Contains(h, []byte(`<task>`)) || bytes.Contains(h, []byte(`<environment_details>`))
}

// DetectPath reports whether path is a Cline history by its layout: the
// history file itself, a task directory holding one, or a tasks directory
// whose subdirectories do.
func DetectPath(path string) bool {
	if filepath.Base(path) == HistoryFile {
		return true
	}
	st, err := os.Stat(path)
	if err != nil || !st.IsDir() {
		return false
	}
	tasks, _ := taskDirs(path)
	return len(tasks) > 0
}

// Near explains why a directory looks like a Cline task but is not one.
func Near(path string, _ []byte) string {
	if _, err := os.Stat(filepath.Join(path, UIFile)); err == nil {
		if _, err := os.Stat(filepath.Join(path, HistoryFile)); err != nil {
			return fmt.Sprintf("looks like a Cline task directory (%s) but has no %s, the conversation Cline sent the model", UIFile, HistoryFile)
		}
	}
	return ""
}

// taskDirs lists the task directories under path: path itself when it
// holds a history, else its subdirectories that do, in name order (Cline
// names tasks by their start time in milliseconds).
func taskDirs(path string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(path, HistoryFile)); err == nil {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if st, err := os.Lstat(filepath.Join(path, e.Name(), HistoryFile)); err == nil && st.Mode().IsRegular() {
			out = append(out, filepath.Join(path, e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}

// Import reads each input: a history file, a task directory or a tasks
// directory.
func Import(ctx context.Context, files []string, opts Options, target transcript.ImportTarget) error {
	for _, path := range files {
		st, err := os.Stat(path)
		if err != nil {
			return &transcript.ParseError{File: path, Msg: err.Error(), Err: err}
		}
		var histories []string
		if st.IsDir() {
			dirs, err := taskDirs(path)
			if err != nil {
				return &transcript.ParseError{File: path, Msg: err.Error(), Err: err}
			}
			if len(dirs) == 0 {
				return input.Errorf(path, 0, "no %s in the directory or its subdirectories: not a Cline task or tasks directory", HistoryFile)
			}
			for _, d := range dirs {
				histories = append(histories, filepath.Join(d, HistoryFile))
			}
		} else {
			histories = []string{path}
		}
		for _, h := range histories {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := importTask(ctx, h, opts, target); err != nil {
				return err
			}
		}
	}
	return nil
}

type message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	// Newer Cline versions stamp each message; older ones do not.
	TS        *float64 `json:"ts"`
	ModelInfo *struct {
		ModelID string `json:"modelId"`
	} `json:"modelInfo"`
	Metrics *struct {
		Tokens *struct {
			Prompt     int64 `json:"prompt"`
			Completion int64 `json:"completion"`
			Cached     int64 `json:"cached"`
		} `json:"tokens"`
	} `json:"metrics"`
}

// request is one api_req_started of ui_messages.json.
type request struct {
	usage *transcript.Usage
	// index is conversationHistoryIndex: the last history message when the
	// request started (-1 before the first); hasIndex is false in versions
	// that do not record it.
	index    int
	hasIndex bool
	line     int
	kind     string
}

type task struct {
	file  string
	d     *input.Doc
	sink  transcript.ImportSink
	ids   input.ChainIDs
	prev  string
	calls transcript.CallChain
	// assistant holds the assistant nodes in history order with their
	// history index, until the usage of the requests is matched to them.
	nodes    []transcript.Node
	indexOf  []int
	model    string
	requests []request
	// deleted is the latest truncation range of the UI messages.
	deleted []int
}

func importTask(ctx context.Context, file string, opts Options, target transcript.ImportTarget) error {
	d, err := input.OpenDoc(file, opts)
	if err != nil {
		return err
	}
	defer d.Close()
	if d.First != '[' {
		return input.Errorf(file, 1, "expected a Cline conversation history: a JSON array of messages")
	}
	dir := filepath.Dir(file)
	name := filepath.Base(dir)
	if name == "." || name == string(filepath.Separator) {
		name = "cline-task"
	}
	sink, err := target.Conversation(name)
	if err != nil {
		return err
	}
	t := &task{file: file, d: d, sink: sink}
	i := 0
	err = d.Each("messages", func(int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		var raw json.RawMessage
		if err := d.Value(&raw, "a message object {role, content}"); err != nil {
			return err
		}
		var m message
		if err := json.Unmarshal(raw, &m); err != nil {
			return d.Errorf("message %d: expected a message object {role, content}: %s", i+1, input.JSONErrorText(err))
		}
		err := t.message(i, m, raw)
		i++
		return err
	})
	if err != nil {
		return err
	}
	if err := d.End(); err != nil {
		return err
	}
	if err := t.readUI(filepath.Join(dir, UIFile), opts); err != nil {
		return err
	}
	t.readMetadata(filepath.Join(dir, MetadataFile), opts)
	t.matchUsage()
	for _, n := range t.nodes {
		if err := sink.Node(n); err != nil {
			return err
		}
	}
	if len(t.nodes) == 0 {
		return input.Errorf(file, 1, "the Cline conversation history holds no message")
	}
	if err := t.truncation(); err != nil {
		return err
	}
	if t.model != "" {
		sink.SetModel(t.model)
	}
	return nil
}

func (t *task) message(i int, m message, raw json.RawMessage) error {
	n := transcript.Node{ID: t.ids.Next(fmt.Sprintf("m%d", i+1), raw), Predecessor: t.prev}
	switch m.Role {
	case "user":
		n.Role = transcript.RoleUser
	case "assistant":
		n.Role = transcript.RoleAssistant
	default:
		return t.d.Errorf("message %d: role must be user or assistant, got %q", i+1, m.Role)
	}
	if m.TS != nil && *m.TS > 0 && *m.TS < 1e14 {
		n.CreatedAt = time.UnixMilli(int64(*m.TS)).UTC().Format(time.RFC3339Nano)
	}
	if m.ModelInfo != nil && m.ModelInfo.ModelID != "" {
		t.model = m.ModelInfo.ModelID
	}
	if m.Metrics != nil && m.Metrics.Tokens != nil && n.Role == transcript.RoleAssistant {
		tk := m.Metrics.Tokens
		n.Usage = &transcript.Usage{InputTokens: tk.Prompt, OutputTokens: tk.Completion, CachedInputTokens: tk.Cached}
	}
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		n.Content = transcript.TextContent(s)
	} else {
		var blocks []input.AnthropicBlock
		if err := json.Unmarshal(m.Content, &blocks); err != nil {
			return t.d.Errorf("message %d: content must be a string or an array of blocks", i+1)
		}
		out := transcript.Content{IsBlocks: true}
		open := t.calls.Open(t.prev)
		answered := map[string]bool{}
		for k, b := range blocks {
			cb, err := b.Block("cline_block")
			if err != nil {
				return t.d.Errorf("message %d, content[%d]: %v", i+1, k, err)
			}
			switch cb.Type {
			case transcript.BlockToolCall:
				if n.Role != transcript.RoleAssistant {
					cb = demote(cb, "tool_use in a user message")
					t.sink.Warn(t.file, t.d.Line(), fmt.Sprintf("message %d: a tool_use block in a user message is kept as text", i+1))
				}
			case transcript.BlockToolResult:
				if n.Role != transcript.RoleUser || !slices.Contains(open, cb.ToolCallID) || answered[cb.ToolCallID] {
					// Cline sent it, so it is kept, as text: the store
					// accepts a result only for an open call.
					t.sink.Warn(t.file, t.d.Line(), fmt.Sprintf("message %d: tool_result for %q answers no open tool_use of the assistant message before it; kept as text", i+1, cb.ToolCallID))
					cb = demote(cb, "tool_result for "+cb.ToolCallID)
				} else {
					answered[cb.ToolCallID] = true
				}
			}
			out.Blocks = append(out.Blocks, cb)
		}
		n.Content = out
	}
	t.calls.Add(&n)
	t.sink.Count("message/"+m.Role, transcript.OutcomeImported, "")
	t.nodes = append(t.nodes, n)
	t.indexOf = append(t.indexOf, i)
	t.prev = n.ID
	return nil
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

type uiMessage struct {
	Type                     string          `json:"type"`
	Say                      string          `json:"say"`
	Ask                      string          `json:"ask"`
	Text                     string          `json:"text"`
	ConversationHistoryIndex json.RawMessage `json:"conversationHistoryIndex"`
	// DeletedRange is Cline's context truncation: the history messages
	// [start, end] it no longer sends.
	DeletedRange []int `json:"conversationHistoryDeletedRange"`
	ModelInfo    *struct {
		ModelID string `json:"modelId"`
	} `json:"modelInfo"`
}

// readUI reads the requests' usage from ui_messages.json (absent: no
// usage) and counts every UI message.
func (t *task) readUI(path string, opts Options) error {
	if _, err := os.Lstat(path); err != nil {
		return nil
	}
	d, err := input.OpenDoc(path, opts)
	if err != nil {
		return err
	}
	defer d.Close()
	if d.First != '[' {
		return input.Errorf(path, 1, "expected Cline's UI messages: a JSON array")
	}
	uiModel := ""
	defer func() {
		if t.model == "" {
			t.model = uiModel
		}
	}()
	err = d.Each("UI messages", func(i int) error {
		var m uiMessage
		if err := d.Value(&m, "a Cline UI message {ts, type, say|ask, text}"); err != nil {
			return err
		}
		kind := "ui/" + m.Type + "/" + m.Say + m.Ask
		if m.ModelInfo != nil && m.ModelInfo.ModelID != "" {
			uiModel = m.ModelInfo.ModelID
		}
		if len(m.DeletedRange) == 2 {
			t.deleted = []int{m.DeletedRange[0], m.DeletedRange[1]}
		}
		// Older Cline wrote the counts in a separate api_req_finished;
		// newer ones update api_req_started in place.
		if m.Type != "say" || (m.Say != "api_req_started" && m.Say != "api_req_finished") {
			t.sink.Count(kind, transcript.OutcomeSkipped, "Cline's UI log; what reached the model is in "+HistoryFile)
			return nil
		}
		var info struct {
			TokensIn    *int64 `json:"tokensIn"`
			TokensOut   *int64 `json:"tokensOut"`
			CacheWrites int64  `json:"cacheWrites"`
			CacheReads  int64  `json:"cacheReads"`
			Cost        json.RawMessage
		}
		if json.Unmarshal([]byte(m.Text), &info) != nil || info.TokensIn == nil || info.TokensOut == nil {
			t.sink.Count(kind, transcript.OutcomeSkipped, "no token counts (the request did not finish)")
			return nil
		}
		// Anthropic's convention, which Cline's counts follow: tokensIn
		// leaves out the cached reads and the cache writes; usage.input_tokens
		// is the whole prompt (docs/FORMAT.md §2).
		u := &transcript.Usage{InputTokens: *info.TokensIn + info.CacheWrites + info.CacheReads, OutputTokens: *info.TokensOut,
			CachedInputTokens: info.CacheReads, Extra: map[string]json.RawMessage{
				"cline_tokens_in":    input.Raw(*info.TokensIn),
				"cache_write_tokens": input.Raw(info.CacheWrites),
			}}
		if len(info.Cost) > 0 {
			u.Extra["cost"] = info.Cost
		}
		r := request{usage: u, line: d.Line(), kind: kind}
		if idx, err := strconv.Atoi(string(bytes.TrimSpace(m.ConversationHistoryIndex))); err == nil {
			r.index, r.hasIndex = idx, true
		}
		t.requests = append(t.requests, r)
		return nil
	})
	if err != nil {
		return err
	}
	return d.End()
}

// matchUsage puts each request's usage on the assistant message it
// produced: the first one after conversationHistoryIndex where it is
// recorded, else the next one in order.
func (t *task) matchUsage() {
	next := 0
	for _, r := range t.requests {
		k := -1
		if r.hasIndex {
			for j := range t.nodes {
				if t.indexOf[j] > r.index && t.nodes[j].Role == transcript.RoleAssistant {
					k = j
					break
				}
			}
		} else {
			for j := next; j < len(t.nodes); j++ {
				if t.nodes[j].Role == transcript.RoleAssistant {
					k = j
					break
				}
			}
		}
		if k < 0 || t.nodes[k].Usage != nil && t.nodes[k].Usage.Extra["cline_tokens_in"] != nil {
			t.sink.Count(r.kind, transcript.OutcomeSkipped, "no assistant message of its own in the history (a cancelled or failed request)")
			continue
		}
		t.nodes[k].Usage = r.usage
		next = k + 1
		t.sink.Count(r.kind, transcript.OutcomeMerged, "usage of the assistant message it produced")
	}
}

// readMetadata takes the model from task_metadata.json when the history
// did not name it; the file is optional and its other fields are about
// the editor, not the conversation.
func (t *task) readMetadata(path string, opts Options) {
	if t.model != "" {
		return
	}
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() > int64(opts.Max()) {
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	var md struct {
		ModelUsage []struct {
			ModelID string `json:"model_id"`
		} `json:"model_usage"`
	}
	if json.Unmarshal(data, &md) != nil {
		t.sink.Warn(path, 1, "not a Cline task metadata object; the model is not known")
		return
	}
	for _, u := range md.ModelUsage {
		if u.ModelID != "" {
			t.model = u.ModelID
		}
	}
}

// truncation turns Cline's context truncation into a summary node: the
// messages in the deleted range are no longer sent, and Cline keeps no
// summary of them, so the node says how many were dropped. A range that
// would split a call from its result is widened over the result.
func (t *task) truncation() error {
	if t.deleted == nil {
		return nil
	}
	lo, hi := t.deleted[0], t.deleted[1]
	first, last := -1, -1
	for j, idx := range t.indexOf {
		if idx >= lo && idx <= hi {
			if first < 0 {
				first = j
			}
			last = j
		}
	}
	if lo < 1 || hi < lo || first < 0 {
		t.sink.Count("ui/conversationHistoryDeletedRange", transcript.OutcomeSkipped, "the range names no message after the first")
		t.sink.Warn(t.file, 0, fmt.Sprintf("conversationHistoryDeletedRange [%d, %d] names no message of the history; ignored", lo, hi))
		return nil
	}
	// Coverage never separates a call from its results (docs/FORMAT.md §2,
	// tool-call adjacency): a range ending inside a tool group takes the
	// rest of the group.
	chain := make([]*transcript.Node, len(t.nodes))
	for k := range t.nodes {
		chain[k] = &t.nodes[k]
	}
	for _, g := range transcript.ToolGroups(chain) {
		if g.Call <= last && last < g.Last() {
			last = g.Last()
		}
	}
	covers := make([]string, 0, last-first+1)
	for j := first; j <= last; j++ {
		covers = append(covers, t.nodes[j].ID)
	}
	n := transcript.Node{ID: transcript.SummaryIDPrefix + "cline-truncation", Role: transcript.SummaryRole, Name: transcript.SummaryName,
		Content: transcript.TextContent(transcript.SummaryPrefix + fmt.Sprintf("(Cline removed %d earlier messages to fit the context window; it keeps no summary of them.)", len(covers)))}
	if first > 0 {
		n.Predecessor = t.nodes[first-1].ID
	}
	n.SetMeta("compaction", true)
	n.SetMeta("covers_ids", covers)
	n.SetMeta("source", "cline conversationHistoryDeletedRange")
	n.SetMeta("cline_deleted_range", []int{lo, hi})
	if err := t.sink.Node(n); err != nil {
		return err
	}
	t.sink.Count("ui/conversationHistoryDeletedRange", transcript.OutcomeImported, "")
	return nil
}

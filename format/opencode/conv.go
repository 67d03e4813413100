package opencode

// conv turns one session's messages into nodes: the user turns, each
// assistant step with its tool calls and results, and the compactions as
// summary nodes (the package doc says how).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

type conv struct {
	sink    transcript.ImportSink
	session sessionInfo
	prev    string
	real    []string
	model   string
	// provider is the model's provider id (the configuration's key).
	provider string
	k        int
	// compacting is set between a compaction request and its summary;
	// ask is what that request sent in the compaction's place, tail the
	// first message it keeps verbatim ("" when none).
	compacting bool
	ask        []string
	tail       string
	// first maps a message id to the index in real of its first node.
	first map[string]int
}

func (c *conv) run(msgs []message) error {
	// A message id names one message: two would hand over one node id
	// twice (found by FuzzImportExport).
	seen := make(map[string]int, len(msgs))
	for i, m := range msgs {
		if j, dup := seen[m.id]; dup && m.id != "" {
			return &transcript.ParseError{File: m.file, Line: m.line,
				Msg: fmt.Sprintf("message id %q appears twice (messages %d and %d of session %q)", m.id, j+1, i+1, c.session.id)}
		}
		seen[m.id] = i
	}
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
		c.model, c.provider = m.info.ModelID, m.info.ProviderID
	} else if m.info.Model != nil && m.info.Model.ModelID != "" && c.model == "" {
		c.model, c.provider = m.info.Model.ModelID, m.info.Model.ProviderID
	}
	switch role {
	case "user":
		for _, p := range m.parts {
			if p.Type == "compaction" {
				// The request to compact: its answer is the summary.
				c.compacting, c.tail, c.ask = true, p.TailStartID, compactionAsk(m.parts)
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

func (c *conv) emit(n transcript.Node, msg string) error {
	n.Predecessor = c.prev
	n.ID = input.ID(n.ID, fmt.Sprintf("oc-%d", c.k))
	if err := c.sink.Node(n); err != nil {
		return err
	}
	if c.first == nil {
		c.first = map[string]int{}
	}
	if _, ok := c.first[msg]; !ok {
		c.first[msg] = len(c.real)
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
	return c.emit(n, m.id)
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
	if failed(m) {
		// OpenCode never sends a failed message again (MessageV2.
		// toModelMessages), but one the user aborted with output.
		c.sink.Count("message/assistant", transcript.OutcomeSkipped, "a failed request: OpenCode does not send it again")
		for _, p := range m.parts {
			c.sink.Count("part/"+p.Type, transcript.OutcomeSkipped, "part of a failed request")
		}
		c.sink.Warn(m.file, m.line, fmt.Sprintf("message %q: the request failed (%s); not imported, as OpenCode does not send it again", m.id, input.Text(m.info.Error)))
		return nil
	}
	steps := c.steps(m)
	if len(steps) == 0 {
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

// failed: the message has an error, and is not an aborted one with
// output (text or a call) that OpenCode still sends.
func failed(m *message) bool {
	if len(m.info.Error) == 0 || string(m.info.Error) == "null" {
		return false
	}
	var e struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(m.info.Error, &e) != nil || e.Name != "MessageAbortedError" {
		return true
	}
	for _, p := range m.parts {
		if p.Type != "step-start" && p.Type != "reasoning" {
			return false
		}
	}
	return true
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
			if st.pruned() {
				// What the model reads now; the output is kept.
				res.Content = transcript.TextContent(prunedOutput)
				res.SetMeta("opencode_pruned_output", input.Text(st.Output))
			}
			if e := st.exitCode(); e != 0 {
				// The command failed: what it printed is the error
				// (docs/COMPACT.md §6 takes error facts from failures).
				res.SetMeta("is_error", true)
				res.SetMeta("exit_code", e)
			}
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
		if err := c.emit(n, m.id); err != nil {
			return err
		}
		for j, r := range s.results {
			r.ToolCallID = n.ToolCalls[j].ID
			if err := c.emit(r, m.id); err != nil {
				return err
			}
		}
	}
	return nil
}

// summary is the answer to a compaction: a summary node covering every
// turn so far but the tail the compaction keeps (OpenCode sends none of
// them again), sent as the compaction's question and this answer.
func (c *conv) summary(m *message) error {
	c.compacting = false
	var texts []string
	for _, p := range m.parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
			c.sink.Count("part/text", transcript.OutcomeMerged, "text of the compaction summary")
		} else if p.Type == "step-start" || p.Type == "step-finish" {
			c.sink.Count("part/"+p.Type, transcript.OutcomeMerged, "the step of the compaction summary (its usage is kept on the summary node)")
		} else {
			c.sink.Count("part/"+p.Type, transcript.OutcomeSkipped, "part of the compaction summary message")
		}
	}
	sent := strings.Join(texts, "")
	text := strings.TrimSpace(strings.Join(texts, "\n"))
	covers := c.real
	if i, ok := c.first[c.tail]; ok && c.tail != "" {
		covers = c.real[:i]
	}
	if text == "" || len(covers) == 0 {
		c.sink.Count("message/assistant", transcript.OutcomeSkipped, "a compaction summary with no text, or nothing before it")
		return nil
	}
	n := transcript.Node{ID: transcript.SummaryIDPrefix + m.id, Role: transcript.SummaryRole, Name: transcript.SummaryName,
		CreatedAt: ms(m.info.Time.Created), Content: transcript.TextContent(transcript.SummaryPrefix + text)}
	n.SetMeta("compaction", true)
	n.SetMeta("covers_ids", append([]string(nil), covers...))
	n.SetMeta("source", "opencode compaction")
	if c.tail != "" {
		n.SetMeta("opencode_tail_start_id", c.tail)
	}
	// One user message: its text, or its parts when it has several (as
	// the AI SDK sends a user message of several parts).
	var ask any = c.ask
	if len(c.ask) == 1 {
		ask = c.ask[0]
	} else {
		var parts []map[string]string
		for _, q := range c.ask {
			parts = append(parts, map[string]string{"type": "text", "text": q})
		}
		ask = parts
	}
	n.SetMeta(transcript.MetaOpenAIMessages, []map[string]any{{"role": "user", "content": ask}, {"role": "assistant", "content": sent}})
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

// compactionAsk is what OpenCode sends for the message that asks for a
// compaction: its text parts, and its compaction part as the question
// OpenCode puts in its place (MessageV2.toModelMessages).
func compactionAsk(parts []part) []string {
	var out []string
	for _, p := range parts {
		switch {
		case p.Type == "compaction":
			out = append(out, "What did we do so far?")
		case p.Type == "text" && !p.Ignored:
			out = append(out, p.Text)
		}
	}
	return out
}

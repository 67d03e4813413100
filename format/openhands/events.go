package openhands

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// event is one serialized OpenHands event: an action (with args) or an
// observation (with content and extras).
type event struct {
	ID          *int64                     `json:"id"`
	Timestamp   string                     `json:"timestamp"`
	Source      string                     `json:"source"`
	Message     string                     `json:"message"`
	Cause       *int64                     `json:"cause"`
	Action      string                     `json:"action"`
	Observation string                     `json:"observation"`
	Args        map[string]json.RawMessage `json:"args"`
	Content     json.RawMessage            `json:"content"`
	Extras      map[string]json.RawMessage `json:"extras"`
	ToolCall    *struct {
		FunctionName  string          `json:"function_name"`
		ToolCallID    string          `json:"tool_call_id"`
		ModelResponse json.RawMessage `json:"model_response"`
	} `json:"tool_call_metadata"`
	LLMMetrics *metrics `json:"llm_metrics"`
}

type metrics struct {
	TokenUsages []tokenUsage `json:"token_usages"`
}

type tokenUsage struct {
	Model            string `json:"model"`
	PromptTokens     int64  `json:"prompt_tokens"`
	CompletionTokens int64  `json:"completion_tokens"`
	CacheReadTokens  int64  `json:"cache_read_tokens"`
	CacheWriteTokens int64  `json:"cache_write_tokens"`
	ResponseID       string `json:"response_id"`
}

// response is the part of model_response (a litellm ModelResponse) read
// here: its id groups the actions of one LLM call, and its usage and tool
// calls are what the provider returned.
type response struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct {
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int64 `json:"prompt_tokens"`
		CompletionTokens    int64 `json:"completion_tokens"`
		PromptTokensDetails *struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
		CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
		CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	} `json:"usage"`
}

// conv turns one event stream into nodes.
type conv struct {
	sink  transcript.ImportSink
	prev  string
	model string
	// real lists the non-summary nodes in chain order, with the event each
	// came from; covered is what the last summary covered.
	real    []string
	eventOf map[string][]int64
	covered []string
	// group is the assistant turn being gathered: the actions of one LLM
	// response and the observations answering them.
	group *group
	// usages are the recorded token usages by response id; used marks
	// those already given to a node.
	usages  map[string]*transcript.Usage
	used    map[string]bool
	k       int
	summary int
	tools   map[string]bool
}

type group struct {
	response string
	node     transcript.Node
	events   []int64
	// resultEvents are the events of results, in order.
	resultEvents []int64
	// calls maps an open call id to its index in node.ToolCalls.
	calls   map[string]bool
	kinds   map[string]string
	byEvent map[int64]string
	results []transcript.Node
	usage   *transcript.Usage
}

func newConv(sink transcript.ImportSink) *conv {
	return &conv{sink: sink, eventOf: map[string][]int64{}, tools: map[string]bool{}, usages: map[string]*transcript.Usage{}, used: map[string]bool{}}
}

func (c *conv) addUsages(us []tokenUsage) {
	for _, u := range us {
		if u.ResponseID != "" {
			if _, ok := c.usages[u.ResponseID]; !ok {
				c.usages[u.ResponseID] = usageOf(u)
			}
		}
		if u.Model != "" && c.model == "" {
			c.model = u.Model
		}
	}
}

// usageOf maps OpenHands' TokenUsage: prompt_tokens is the provider's
// whole prompt (litellm's count, cached reads included).
func usageOf(u tokenUsage) *transcript.Usage {
	out := &transcript.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, CachedInputTokens: u.CacheReadTokens}
	if u.CacheWriteTokens != 0 {
		out.Extra = map[string]json.RawMessage{"cache_write_tokens": input.Raw(u.CacheWriteTokens)}
	}
	return out
}

// actions that are the agent's tool use (openhands/core/schema/action.py).
var toolActions = map[string]bool{
	"run": true, "run_ipython": true, "read": true, "write": true, "edit": true, "browse": true,
	"browse_interactive": true, "think": true, "delegate": true, "mcp": true, "finish": true,
	"reject": true, "task_tracking": true, "call_tool_mcp": true,
}

func (c *conv) id(ev *event, prefix string) string {
	c.k++
	if ev.ID != nil {
		return fmt.Sprintf("%s%d", prefix, *ev.ID)
	}
	return fmt.Sprintf("%sx%d", prefix, c.k)
}

func evID(ev *event) int64 {
	if ev.ID == nil {
		return -1
	}
	return *ev.ID
}

func text(raw json.RawMessage) string { return input.Text(raw) }

func (c *conv) event(ev *event, file string, line int) error {
	switch {
	case ev.Action != "":
		return c.action(ev, file, line)
	case ev.Observation != "":
		return c.observation(ev, file, line)
	}
	c.sink.Count("event/other", transcript.OutcomeSkipped, "neither an action nor an observation")
	return nil
}

func (c *conv) action(ev *event, file string, line int) error {
	kind := "action/" + ev.Action
	switch {
	case ev.Action == "message":
		if err := c.flush(); err != nil {
			return err
		}
		n := transcript.Node{ID: c.id(ev, "e"), CreatedAt: stamp(ev.Timestamp), Content: transcript.TextContent(text(ev.Args["content"]))}
		if ev.Source == "user" {
			n.Role = transcript.RoleUser
			var urls []string
			_ = json.Unmarshal(ev.Args["image_urls"], &urls)
			if len(urls) > 0 {
				blocks := []transcript.Block{{Type: transcript.BlockText, Text: text(ev.Args["content"])}}
				for _, u := range urls {
					blocks = append(blocks, input.Image(u, "", ""))
				}
				n.Content = transcript.Content{IsBlocks: true, Blocks: blocks}
			}
		} else {
			n.Role = transcript.RoleAssistant
			n.Usage = c.usageFor(ev)
		}
		c.sink.Count(kind+"/"+ev.Source, transcript.OutcomeImported, "")
		return c.emit(n, evID(ev))
	case ev.Action == "system":
		if err := c.flush(); err != nil {
			return err
		}
		n := transcript.Node{ID: c.id(ev, "e"), Role: transcript.RoleSystem, CreatedAt: stamp(ev.Timestamp), Content: transcript.TextContent(text(ev.Args["content"]))}
		if v := text(ev.Args["openhands_version"]); v != "" {
			n.SetMeta("openhands_version", v)
		}
		c.sink.Count(kind, transcript.OutcomeImported, "")
		return c.emit(n, evID(ev))
	case ev.Action == "condensation":
		if err := c.flush(); err != nil {
			return err
		}
		return c.condensation(ev, file, line)
	case ev.Source == "agent" && (toolActions[ev.Action] || ev.ToolCall != nil):
		return c.toolAction(ev)
	case ev.Action == "recall":
		c.sink.Count(kind, transcript.OutcomeSkipped, "OpenHands' own memory lookup; its observation is imported")
	case ev.Action == "change_agent_state", ev.Action == "null", ev.Action == "condensation_request", ev.Action == "pause", ev.Action == "resume":
		c.sink.Count(kind, transcript.OutcomeSkipped, "agent control, not sent to the model")
	default:
		c.sink.Count(kind+"/"+ev.Source, transcript.OutcomeSkipped, "not the agent's tool use (the model never read it as such)")
	}
	return nil
}

// toolAction adds the action to the assistant turn of its LLM response.
func (c *conv) toolAction(ev *event) error {
	var resp response
	callID, name := "", ev.Action
	if tc := ev.ToolCall; tc != nil {
		callID, name = tc.ToolCallID, tc.FunctionName
		_ = json.Unmarshal(tc.ModelResponse, &resp)
	}
	if callID == "" {
		// Agents without function calling: the observation names the
		// action by cause.
		callID = fmt.Sprintf("oh-call-%d", evID(ev))
		if ev.ID == nil {
			callID = fmt.Sprintf("oh-call-x%d", c.k+1)
		}
	}
	if name == "" {
		name = ev.Action
	}
	if g := c.group; g == nil || resp.ID == "" || g.response != resp.ID {
		if err := c.flush(); err != nil {
			return err
		}
		c.group = &group{response: resp.ID, calls: map[string]bool{}, kinds: map[string]string{}, byEvent: map[int64]string{},
			node: transcript.Node{ID: c.id(ev, "e"), Role: transcript.RoleAssistant, CreatedAt: stamp(ev.Timestamp)}}
		c.group.usage = c.usageFor(ev)
	}
	g := c.group
	args := argumentsOf(ev, &resp, callID)
	if g.calls[callID] {
		callID = fmt.Sprintf("%s-%d", callID, evID(ev))
	}
	g.node.ToolCalls = append(g.node.ToolCalls, transcript.ToolCall{ID: callID, Name: name, Arguments: args})
	g.calls[callID] = true
	g.kinds[callID] = "action/" + ev.Action
	g.events = append(g.events, evID(ev))
	g.byEvent[evID(ev)] = callID
	if th := strings.TrimSpace(text(ev.Args["thought"])); th != "" {
		prior := g.node.Content.PlainText()
		if prior != "" {
			prior += "\n"
		}
		g.node.Content = transcript.TextContent(prior + th)
	}
	return nil
}

// argumentsOf is the call's arguments as the model sent them (from the
// response) or, failing that, the action's args without its thought.
func argumentsOf(ev *event, resp *response, callID string) json.RawMessage {
	for _, ch := range resp.Choices {
		for _, tc := range ch.Message.ToolCalls {
			if tc.ID == callID && len(tc.Function.Arguments) > 0 {
				return tc.Function.Arguments
			}
		}
	}
	args := map[string]json.RawMessage{}
	for k, v := range ev.Args {
		if k != "thought" {
			args[k] = v
		}
	}
	return input.Raw(args)
}

// usageFor is the usage of the LLM response that produced ev, given once.
func (c *conv) usageFor(ev *event) *transcript.Usage {
	var resp response
	if ev.ToolCall != nil {
		_ = json.Unmarshal(ev.ToolCall.ModelResponse, &resp)
	}
	if ev.LLMMetrics != nil {
		c.addUsages(ev.LLMMetrics.TokenUsages)
	}
	if c.model == "" && resp.Model != "" {
		// The model the provider says answered, when the run's config is
		// not at hand (a trajectory or a file store).
		c.model = resp.Model
	}
	if resp.ID != "" && c.used[resp.ID] {
		return nil
	}
	if u := resp.Usage; u != nil && (u.PromptTokens > 0 || u.CompletionTokens > 0) {
		out := &transcript.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, CachedInputTokens: u.CacheReadInputTokens}
		if d := u.PromptTokensDetails; d != nil && d.CachedTokens > 0 {
			out.CachedInputTokens = d.CachedTokens
		}
		if u.CacheCreationInputTokens > 0 {
			out.Extra = map[string]json.RawMessage{"cache_write_tokens": input.Raw(u.CacheCreationInputTokens)}
		}
		c.used[resp.ID] = true
		return out
	}
	if resp.ID != "" {
		if u, ok := c.usages[resp.ID]; ok {
			c.used[resp.ID] = true
			return u
		}
	}
	// Without a response id, the latest usage recorded with the event is
	// that of the call that produced it.
	if ev.LLMMetrics != nil && len(ev.LLMMetrics.TokenUsages) > 0 {
		last := ev.LLMMetrics.TokenUsages[len(ev.LLMMetrics.TokenUsages)-1]
		if last.ResponseID == "" || !c.used[last.ResponseID] {
			if last.ResponseID != "" {
				c.used[last.ResponseID] = true
			}
			return usageOf(last)
		}
	}
	return nil
}

func (c *conv) observation(ev *event, file string, line int) error {
	kind := "observation/" + ev.Observation
	content := text(ev.Content)
	if g := c.group; g != nil {
		call := ""
		if ev.ToolCall != nil && g.calls[ev.ToolCall.ToolCallID] {
			call = ev.ToolCall.ToolCallID
		} else if ev.Cause != nil {
			call = g.byEvent[*ev.Cause]
		}
		if call != "" && g.calls[call] {
			delete(g.calls, call)
			n := transcript.Node{ID: c.id(ev, "e"), Role: transcript.RoleTool, ToolCallID: call, CreatedAt: stamp(ev.Timestamp), Content: transcript.TextContent(content)}
			if ev.Observation == "error" || ev.Observation == "user_rejected" {
				n.SetMeta("is_error", true)
			}
			if ec := exitCode(ev.Extras); ec != nil && *ec != 0 {
				n.SetMeta("exit_code", *ec)
			}
			g.results = append(g.results, n)
			g.resultEvents = append(g.resultEvents, evID(ev))
			c.sink.Count(kind, transcript.OutcomeImported, "")
			return nil
		}
	}
	switch ev.Observation {
	case "agent_state_changed", "null", "agent_condensation":
		c.sink.Count(kind, transcript.OutcomeSkipped, "agent state, not sent to the model")
		return nil
	}
	if err := c.flush(); err != nil {
		return err
	}
	// An observation answering no call reaches the model as a user turn
	// (OpenHands' ConversationMemory): a recall's workspace context, an
	// error, the output of an agent without function calling.
	if content == "" && len(ev.Extras) > 0 {
		content = input.Text(input.Raw(ev.Extras))
	}
	n := transcript.Node{ID: c.id(ev, "e"), Role: transcript.RoleUser, CreatedAt: stamp(ev.Timestamp), Content: transcript.TextContent(content)}
	n.SetMeta("openhands_observation", ev.Observation)
	c.sink.Count(kind, transcript.OutcomeImported, "")
	return c.emit(n, evID(ev))
}

func exitCode(extras map[string]json.RawMessage) *int64 {
	var md struct {
		ExitCode *int64 `json:"exit_code"`
	}
	if json.Unmarshal(extras["metadata"], &md) == nil && md.ExitCode != nil {
		return md.ExitCode
	}
	var ec int64
	if json.Unmarshal(extras["exit_code"], &ec) == nil {
		return &ec
	}
	return nil
}

// flush hands over the assistant turn in hand and its results. A call no
// observation answered was never shown to the model with a result
// (OpenHands drops such calls from the messages it sends), so it is kept
// as text of the turn, not as an open call.
func (c *conv) flush() error {
	g := c.group
	if g == nil {
		return nil
	}
	c.group = nil
	n := g.node
	n.Usage = g.usage
	var kept []transcript.ToolCall
	var dropped []string
	for _, tc := range n.ToolCalls {
		if g.calls[tc.ID] {
			dropped = append(dropped, fmt.Sprintf("[%s] %s", tc.Name, transcript.ArgumentsText(tc.Arguments)))
			c.sink.Count(g.kinds[tc.ID], transcript.OutcomeMerged, "a call no observation answered: kept as text of its turn")
			continue
		}
		c.sink.Count(g.kinds[tc.ID], transcript.OutcomeImported, "")
		kept = append(kept, tc)
	}
	n.ToolCalls = kept
	if len(dropped) > 0 {
		t := n.Content.PlainText()
		if t != "" {
			t += "\n"
		}
		n.Content = transcript.TextContent(t + strings.Join(dropped, "\n"))
	}
	if err := c.emit(n, g.events...); err != nil {
		return err
	}
	for i, r := range g.results {
		if err := c.emit(r, g.resultEvents[i]); err != nil {
			return err
		}
	}
	return nil
}

func (c *conv) emit(n transcript.Node, events ...int64) error {
	n.Predecessor = c.prev
	if err := c.sink.Node(n); err != nil {
		return err
	}
	c.prev = n.ID
	if n.Role == transcript.RoleTool {
		c.tools[n.ID] = true
	}
	c.real = append(c.real, n.ID)
	c.eventOf[n.ID] = events
	return nil
}

// condensationArgs are the CondensationAction arguments the import reads.
type condensationArgs struct {
	Forgotten []int64 `json:"forgotten_event_ids"`
	Start     *int64  `json:"forgotten_events_start_id"`
	End       *int64  `json:"forgotten_events_end_id"`
	Summary   *string `json:"summary"`
	Offset    *int    `json:"summary_offset"`
}

// condensation becomes a summary node covering the turns of the events
// the condenser forgot, together with what earlier condensations covered.
func (c *conv) condensation(ev *event, file string, line int) error {
	var a condensationArgs
	raw, _ := json.Marshal(ev.Args)
	if err := json.Unmarshal(raw, &a); err != nil {
		c.sink.Count("action/condensation", transcript.OutcomeSkipped, "args not readable")
		c.sink.Warn(file, line, "condensation: "+input.JSONErrorText(err))
		return nil
	}
	idx := c.forgottenTurns(&a)
	if len(idx) == 0 {
		c.sink.Count("action/condensation", transcript.OutcomeSkipped, "forgets no imported turn")
		return nil
	}
	sort.Ints(idx)
	lo, hi := idx[0], idx[len(idx)-1]
	if hi-lo+1 != len(idx) {
		c.sink.Count("action/condensation", transcript.OutcomeSkipped, "the forgotten events are not one run of turns")
		c.sink.Warn(file, line, fmt.Sprintf("condensation %s: the forgotten events are not one contiguous run of turns; no summary node", c.id(ev, "e")))
		return nil
	}
	// A summary must not split a call from its result: the results right
	// after the run go with it.
	for hi+1 < len(c.real) && c.isTool(c.real[hi+1]) {
		hi++
	}
	if c.isTool(c.real[lo]) {
		c.sink.Count("action/condensation", transcript.OutcomeSkipped, "the forgotten run starts inside a tool call")
		c.sink.Warn(file, line, "condensation: the forgotten events start with a tool result whose call is kept; no summary node")
		return nil
	}
	covers := append([]string(nil), c.real[lo:hi+1]...)
	body := ""
	if a.Summary != nil {
		body = *a.Summary
	} else {
		body = fmt.Sprintf("(%d earlier turns were forgotten by the OpenHands condenser without a summary)", len(covers))
	}
	c.summary++
	n := transcript.Node{ID: fmt.Sprintf("%s%s-%d", transcript.SummaryIDPrefix, c.id(ev, "e"), c.summary), Role: transcript.SummaryRole,
		Name: transcript.SummaryName, CreatedAt: stamp(ev.Timestamp), Content: transcript.TextContent(transcript.SummaryPrefix + body)}
	if lo > 0 {
		n.Predecessor = c.real[lo-1]
	}
	n.SetMeta("compaction", true)
	n.SetMeta("covers_ids", covers)
	n.SetMeta("source", "openhands CondensationAction")
	if a.Offset != nil {
		n.SetMeta("openhands_summary_offset", *a.Offset)
	}
	if err := c.sink.Node(n); err != nil {
		return err
	}
	c.covered = covers
	c.sink.Count("action/condensation", transcript.OutcomeImported, "")
	return nil
}

// forgottenTurns is the indexes, into c.real, of the imported turns the
// condensation forgets: those already covered and those holding a
// forgotten event.
func (c *conv) forgottenTurns(a *condensationArgs) []int {
	forgot := map[int64]bool{}
	for _, id := range a.Forgotten {
		forgot[id] = true
	}
	inRange := func(id int64) bool {
		return a.Start != nil && a.End != nil && id >= *a.Start && id <= *a.End
	}
	was := map[string]bool{}
	for _, id := range c.covered {
		was[id] = true
	}
	idx := []int{}
	for i, id := range c.real {
		hit := was[id]
		for _, e := range c.eventOf[id] {
			hit = hit || (e >= 0 && (forgot[e] || inRange(e)))
		}
		if hit {
			idx = append(idx, i)
		}
	}
	return idx
}

func (c *conv) isTool(id string) bool { return c.tools[id] }

func (c *conv) end(file string) error {
	if err := c.flush(); err != nil {
		return err
	}
	if len(c.real) == 0 {
		return input.Errorf(file, 1, "the OpenHands event stream holds no message, action or observation to import")
	}
	if c.model != "" {
		c.sink.SetModel(c.model)
	}
	return nil
}

// stamp keeps a timestamp that names its zone; OpenHands mostly writes
// datetime.isoformat() of a local time without one, which would claim a
// moment it does not know, so that one is left out.
func stamp(ts string) string {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(ts))
	if err != nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

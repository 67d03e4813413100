package openai

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// DroidCompactionCue is what Factory Droid's compaction request asks
// (docs/INTEROP-droid.md): it keeps the summary only when the reply wraps
// it in <summary> tags, and retries otherwise.
const DroidCompactionCue = "Remember to wrap your final summary in <summary> tags."

// droidSummary answers Droid's compaction request, or "" for any other.
func droidSummary(lastUser string) string {
	if !strings.Contains(lastUser, DroidCompactionCue) {
		return ""
	}
	return "<summary>\n" + SummaryText + "\n</summary>"
}

// isHookContext is ctxfold's injected context sent as a user message of
// its own (Droid 0.215 sends a hook's additionalContext so): context, not
// a prompt — the requests it quotes are not asked again.
func isHookContext(text string) bool {
	return strings.HasPrefix(strings.TrimSpace(text), "ctxfold: ")
}

// MarkerPad makes the text reply [[pad: N]] about N bytes of plain filler
// (no fact of any kind): Droid 0.215 keeps the last ~12,000 tokens of the
// conversation verbatim through its compaction (40,000 after it, less
// 16,000 for the summary and its own system prompt and tools), so a
// scripted session pushes what it planted out of that tail this way.
const MarkerPad = "[[pad:"

// padReply is the reply MarkerPad asks for ("" none), at most 1 MB.
func padReply(lastUser string) string {
	i := strings.Index(lastUser, MarkerPad)
	if i < 0 {
		return ""
	}
	rest := lastUser[i+len(MarkerPad):]
	if end := strings.Index(rest, "]]"); end >= 0 {
		rest = rest[:end]
	}
	n, err := strconv.Atoi(strings.TrimSpace(rest))
	if err != nil || n <= 0 {
		return ""
	}
	return filler(min(n, 1<<20))
}

// fillerWords make the filler: words without digits, in an order a
// fixed linear congruential sequence picks, so no line repeats (Droid
// 0.215 rejects a reply that repeats itself as "output degeneration").
var fillerWords = strings.Fields(`amber basin cedar delta ember fjord glade harbor inlet juniper kestrel
	lagoon meadow nectar orchard prairie quarry ridge summit thicket upland valley willow yarrow zephyr
	anchor beacon canyon dune estuary falcon granite heron island jetty knoll lantern marsh northern
	outpost pebble quiet river spruce tundra umber vista wharf yonder zenith`)

func filler(n int) string {
	var b strings.Builder
	x := uint32(1)
	for b.Len() < n {
		for w := 0; w < 12; w++ {
			x = x*1664525 + 1013904223
			if w > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(fillerWords[(x>>16)%uint32(len(fillerWords))])
		}
		b.WriteString(".\n")
	}
	return b.String()
}

// droidRecall scripts MarkerRecall on Chat Completions as Factory Droid
// 0.215 offers MCP tools: named SERVER___TOOL (ctxfold___search_history)
// and deferred — listed under "Deferred tools:" in a system reminder, their
// schemas loaded by its ToolSearch tool ("select:NAME,…") — so the model
// calls ToolSearch first, then search_history, then read_turns on the
// first hit its result marks covered, then replies in text. ok is false
// when the request is no step of a recall.
func (s *Server) droidRecall(body []byte) (Reply, bool) {
	var req struct {
		Messages []struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tool_calls"`
			ToolCallID string `json:"tool_call_id"`
		} `json:"messages"`
		Tools []tool `json:"tools"`
	}
	if json.Unmarshal(body, &req) != nil {
		return Reply{}, false
	}
	query, at := "", -1
	for i, m := range req.Messages {
		text := contentText(m.Content)
		switch {
		case m.Role != "user":
		case strings.Contains(text, MarkerRecall):
			query, _ = recallQuery(text)
			at = i
		case !strings.HasPrefix(strings.TrimSpace(text), "<system-reminder>"):
			at = -1 // a later prompt: the recall is over
		}
	}
	if at < 0 {
		return Reply{}, false
	}
	var calls []turnCall
	outputs := map[string]json.RawMessage{}
	for _, m := range req.Messages[at+1:] {
		for _, c := range m.ToolCalls {
			calls = append(calls, turnCall{ID: c.ID, Name: c.Function.Name})
		}
		if m.Role == "tool" {
			outputs[m.ToolCallID] = m.Content
		}
	}
	tool := func(name string) string { return RecallServer + "___" + name }
	call := func(name string, args any) (Reply, bool) {
		b, _ := json.Marshal(args)
		return Reply{Calls: []Call{{ID: s.nextCallID(), Name: name, Arguments: string(b)}}}, true
	}
	last := turnCall{}
	if len(calls) > 0 {
		last = calls[len(calls)-1]
	}
	switch {
	case last.Name == tool(toolSearchHistory):
		id := firstCoveredHit(outputs[last.ID])
		if id == "" {
			return Reply{Text: "Recall found no covered turn."}, true
		}
		return call(tool(toolReadTurns), map[string]any{"ids": []string{id}})
	case last.Name == tool(toolReadTurns):
		return Reply{Text: "Recalled the covered turn."}, true
	case last.Name == "ToolSearch" || hasTool(toolNames(req.Tools), tool(toolSearchHistory)):
		return call(tool(toolSearchHistory), map[string]any{"query": query})
	case hasTool(toolNames(req.Tools), "ToolSearch") && bytes.Contains(body, []byte(tool(toolSearchHistory))):
		return call("ToolSearch", map[string]any{"query": "select:" + tool(toolSearchHistory) + "," + tool(toolReadTurns)})
	}
	return Reply{Text: "Recall is not offered: no " + tool(toolSearchHistory) + " tool."}, true
}

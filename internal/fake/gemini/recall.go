package gemini

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// RecallMarker in a user's text asks for ctxfold's MCP recall
// (docs/HOOKS.md): "RECALL: <query>" on one line makes the model call
// ctxfold's search_history for the query, then read_turns on the first hit
// its result says is covered by a summary, then reply in text. Gemini CLI
// 0.61 declares an MCP server's tools as mcp_<server>_<tool>.
const RecallMarker = "RECALL: "

// InflateMarker in the user's latest text makes the main model's answers
// report InflatedTokens prompt tokens until the history holds a
// <state_snapshot>: the CLI then compresses before its next request, once.
const InflateMarker = "[[inflate]]"

// InflatedTokens is the promptTokenCount reported under InflateMarker.
const InflatedTokens = 1_000_000

// Recall tool names as Gemini CLI declares the server setup registers.
const (
	recallSearch = "mcp_ctxfold_search_history"
	recallRead   = "mcp_ctxfold_read_turns"
)

// latestUserText is the prompt text of the last user content that has
// one (function responses are user contents without it).
func latestUserText(b body) string {
	for i := len(b.Contents) - 1; i >= 0; i-- {
		if c := b.Contents[i]; c.Role == "user" {
			if t := promptText(c); strings.TrimSpace(t) != "" {
				return t
			}
		}
	}
	return ""
}

// promptText is a content's text without the parts a hook appended
// (Gemini CLI adds a BeforeAgent hook's context as a part
// "<hook_context>…</hook_context>"): markers quoted there are not the
// user's.
func promptText(c content) string {
	var out []string
	for _, p := range c.Parts {
		if p.Text != nil && !strings.HasPrefix(*p.Text, "<hook_context>") {
			out = append(out, *p.Text)
		}
	}
	return strings.Join(out, "\n")
}

// inflated reports whether InflateMarker asks for an inflated count.
func inflated(b body) bool {
	if !strings.Contains(latestUserText(b), InflateMarker) {
		return false
	}
	for _, c := range b.Contents {
		if strings.Contains(texts(c), "<state_snapshot>") {
			return false
		}
	}
	return true
}

// recallStep scripts RecallMarker: ok is false when the request is no
// step of a recall.
func (s *Server) recallStep(b body) (string, map[string]any, bool) {
	t := latestUserText(b)
	i := strings.LastIndex(t, RecallMarker)
	if i < 0 || len(b.Contents) == 0 {
		return "", nil, false
	}
	query, _, _ := strings.Cut(t[i+len(RecallMarker):], "\n")
	last := b.Contents[len(b.Contents)-1]
	call := func(name string, args map[string]any) map[string]any {
		return s.reply(b, []map[string]any{{"functionCall": map[string]any{"name": name, "args": args}}}, true)
	}
	text := func(t string) map[string]any { return s.reply(b, []map[string]any{{"text": t}}, true) }
	for _, p := range last.Parts {
		fr := p.FunctionResponse
		if fr == nil {
			continue
		}
		switch fr.Name {
		case recallSearch:
			if id := coveredHit(fr.Response); id != "" {
				return "recall-read", call(recallRead, map[string]any{"ids": []string{id}}), true
			}
			return "recall-done", text("Recall found no covered turn."), true
		case recallRead:
			return "recall-done", text("Recalled the covered turn."), true
		}
		return "", nil, false
	}
	if last.Role != "user" || hasResponse(last) {
		return "", nil, false
	}
	if _, ok := b.tool(recallSearch); !ok {
		return "recall-done", text("Recall is not offered: no " + recallSearch + " tool."), true
	}
	return "recall-search", call(recallSearch, map[string]any{"query": strings.TrimSpace(query)}), true
}

// coveredHit finds search_history's first hit covered by a summary in a
// function response, whatever wraps it: the structured result as an
// object, or as JSON text inside a string, or the text rendering's lines
// "- ID · role · covered by summary S …".
func coveredHit(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	var walk func(v any) string
	walk = func(v any) string {
		switch x := v.(type) {
		case map[string]any:
			if hits, ok := x["hits"].([]any); ok {
				for _, h := range hits {
					if m, ok := h.(map[string]any); ok && m["status"] == "covered" {
						id, _ := m["id"].(string)
						return id
					}
				}
			}
			for _, k := range slices.Sorted(maps.Keys(x)) {
				if id := walk(x[k]); id != "" {
					return id
				}
			}
		case []any:
			for _, e := range x {
				if id := walk(e); id != "" {
					return id
				}
			}
		case string:
			if j := strings.Index(x, "{"); j >= 0 {
				var inner any
				if json.NewDecoder(strings.NewReader(x[j:])).Decode(&inner) == nil {
					if id := walk(inner); id != "" {
						return id
					}
				}
			}
			for _, line := range strings.Split(x, "\n") {
				if strings.HasPrefix(line, "- ") && strings.Contains(line, "covered by summary") {
					return strings.TrimSpace(strings.SplitN(strings.TrimPrefix(line, "- "), " · ", 2)[0])
				}
			}
		}
		return ""
	}
	return walk(v)
}

package openai

import (
	"encoding/json"
	"strings"
)

// MarkerRecall asks for ctxfold's MCP recall (docs/HOOKS.md):
// [[recall: QUERY]] makes the model call search_history for QUERY, then
// read_turns on the first hit its result says is covered by a summary,
// then reply in text. When the client offers the MCP tools only behind its
// tool search (Codex 0.169 with a catalogued model: a "tool_search" tool,
// the MCP servers listed as deferred namespaces), the model first calls
// tool_search and then the tool the client's tool_search_output returns.
const MarkerRecall = "[[recall:"

// RecallServer and the tool names are ctxfold's MCP server as setup
// registers it.
const (
	RecallServer      = "ctxfold"
	toolSearchHistory = "search_history"
	toolReadTurns     = "read_turns"
)

// turnItems is what followed the last user message: the calls in order
// (a function call's name with its namespace, or "tool_search"), the
// output of each by call id, and the tools every tool_search_output
// returned.
type turnItems struct {
	calls   []turnCall
	outputs map[string]json.RawMessage
	found   []json.RawMessage
}

type turnCall struct {
	ID, Name, Namespace string
}

func afterLastUser(items []json.RawMessage) turnItems {
	var t turnItems
	for _, raw := range items {
		var it struct {
			Type      string            `json:"type"`
			Role      string            `json:"role"`
			CallID    string            `json:"call_id"`
			Name      string            `json:"name"`
			Namespace string            `json:"namespace"`
			Output    json.RawMessage   `json:"output"`
			Tools     []json.RawMessage `json:"tools"`
		}
		if json.Unmarshal(raw, &it) != nil {
			continue
		}
		switch it.Type {
		case "message", "":
			if it.Role == "user" {
				t = turnItems{}
			}
		case "function_call":
			t.calls = append(t.calls, turnCall{it.CallID, it.Name, it.Namespace})
		case "tool_search_call":
			t.calls = append(t.calls, turnCall{ID: it.CallID, Name: "tool_search"})
		case "function_call_output":
			if t.outputs == nil {
				t.outputs = map[string]json.RawMessage{}
			}
			t.outputs[it.CallID] = it.Output
		case "tool_search_output":
			t.found = append(t.found, it.Tools...)
		}
	}
	return t
}

// recallQuery is the text after MarkerRecall up to "]]".
func recallQuery(lastUser string) (string, bool) {
	i := strings.Index(lastUser, MarkerRecall)
	if i < 0 {
		return "", false
	}
	q := lastUser[i+len(MarkerRecall):]
	if end := strings.Index(q, "]]"); end >= 0 {
		q = q[:end]
	}
	return strings.TrimSpace(q), true
}

// recallStep scripts MarkerRecall on the Responses API; ok is false when
// the request is no step of a recall (the ordinary script answers).
func (s *Server) recallStep(req responsesRequest, body []byte, lastUser string) (Reply, bool) {
	query, ok := recallQuery(lastUser)
	if !ok {
		return Reply{}, false
	}
	var raw struct {
		Tools []json.RawMessage `json:"tools"`
	}
	_ = json.Unmarshal(body, &raw)
	req.rawTools = raw.Tools
	t := afterLastUser(req.Input)
	if len(t.calls) == 0 {
		return s.recallFirstCall(req, t, query)
	}
	last := t.calls[len(t.calls)-1]
	switch {
	case last.Name == "tool_search":
		return s.recallFirstCall(req, t, query)
	case isTool(last, toolSearchHistory):
		id := firstCoveredHit(t.outputs[last.ID])
		if id == "" {
			return Reply{Text: "Recall found no covered turn."}, true
		}
		args, _ := json.Marshal(map[string]any{"ids": []string{id}})
		return s.callLike(last, toolReadTurns, string(args)), true
	case isTool(last, toolReadTurns):
		return Reply{Text: "Recalled the covered turn."}, true
	}
	return Reply{}, false
}

// recallFirstCall calls search_history the way the client offers it:
// directly (a function tool mcp__ctxfold__search_history, or a namespace
// mcp__ctxfold holding search_history), else through the tool search (once).
func (s *Server) recallFirstCall(req responsesRequest, t turnItems, query string) (Reply, bool) {
	args, _ := json.Marshal(map[string]any{"query": query})
	if name, ns, ok := offered(append(append([]json.RawMessage(nil), req.rawTools...), t.found...)); ok {
		return Reply{Calls: []Call{{ID: s.nextCallID(), Name: name, Namespace: ns, Arguments: string(args)}}}, true
	}
	if hasToolType(req.Tools, "tool_search") && len(t.found) == 0 {
		return Reply{Calls: []Call{{ID: s.nextCallID(), Name: "tool_search", ToolSearch: true,
			Arguments: `{"query":"ctxfold search_history read_turns","limit":8}`}}}, true
	}
	return Reply{Text: "Recall is not offered: no " + RecallServer + " search_history tool."}, true
}

// callLike calls another tool of the same server, named as last was.
func (s *Server) callLike(last turnCall, tool, args string) Reply {
	name := tool
	if last.Namespace == "" {
		name = strings.TrimSuffix(last.Name, toolSearchHistory) + tool
	}
	return Reply{Calls: []Call{{ID: s.nextCallID(), Name: name, Namespace: last.Namespace, Arguments: args}}}
}

func isTool(c turnCall, tool string) bool {
	if c.Namespace != "" {
		return c.Name == tool && strings.Contains(c.Namespace, RecallServer)
	}
	return c.Name == "mcp__"+RecallServer+"__"+tool
}

// offered finds search_history among the request's tools and those a tool
// search returned: a function "mcp__ctxfold__search_history", or a
// namespace tool whose name names ctxfold holding a function
// "search_history".
func offered(tools []json.RawMessage) (name, namespace string, ok bool) {
	for _, raw := range tools {
		var t struct {
			Type  string `json:"type"`
			Name  string `json:"name"`
			Tools []struct {
				Type string `json:"type"`
				Name string `json:"name"`
			} `json:"tools"`
		}
		if json.Unmarshal(raw, &t) != nil {
			continue
		}
		switch {
		case t.Type == "function" && t.Name == "mcp__"+RecallServer+"__"+toolSearchHistory:
			return t.Name, "", true
		case t.Type == "namespace" && strings.Contains(t.Name, RecallServer):
			for _, f := range t.Tools {
				if f.Name == toolSearchHistory {
					return f.Name, t.Name, true
				}
			}
		}
	}
	return "", "", false
}

func hasToolType(tools []tool, typ string) bool {
	for _, t := range tools {
		if t.Type == typ {
			return true
		}
	}
	return false
}

// firstCoveredHit reads search_history's result as the client sends it
// back (the structured result as JSON text — Codex 0.169 prefixes it with
// "Wall time: …\nOutput:\n" — or the text rendering with lines
// "- ID · role · covered by summary S …") and returns the first hit
// covered by a summary.
func firstCoveredHit(output json.RawMessage) string {
	text := contentText(output)
	var structured struct {
		Hits []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"hits"`
	}
	if i := strings.Index(text, "{"); i >= 0 && json.NewDecoder(strings.NewReader(text[i:])).Decode(&structured) == nil {
		for _, h := range structured.Hits {
			if h.Status == "covered" {
				return h.ID
			}
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "- ") && strings.Contains(line, "covered by summary") {
			return strings.TrimSpace(strings.SplitN(strings.TrimPrefix(line, "- "), " · ", 2)[0])
		}
	}
	return ""
}

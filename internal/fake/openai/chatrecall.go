package openai

import (
	"encoding/json"
	"strings"
)

// chatRecall scripts MarkerRecall on Chat Completions (OpenCode's and
// Kilo's requests, whose MCP tools are functions named
// "<server>_<tool>"): search_history for the query, then read_turns on
// the first hit search_history's result marks covered, then a text reply.
// ok is false when the last user message asks for no recall.
func (s *Server) chatRecall(req chatRequest, lastUser string) (Reply, bool) {
	query, ok := recallQuery(lastUser)
	if !ok {
		return Reply{}, false
	}
	names := toolNames(req.Tools)
	search, read := chatTool(names, toolSearchHistory), chatTool(names, toolReadTurns)
	if search == "" || read == "" {
		return Reply{Text: "Recall is not offered: no " + RecallServer + " search_history tool."}, true
	}
	// The calls after the last user message, each with its output.
	var called []string
	outputs := map[string]string{}
	for _, m := range req.Messages {
		switch m.Role {
		case "user":
			called, outputs = nil, map[string]string{}
		case "assistant":
			var calls []struct {
				ID       string `json:"id"`
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			}
			_ = json.Unmarshal(m.ToolCalls, &calls)
			for _, c := range calls {
				called = append(called, c.Function.Name+"\x00"+c.ID)
			}
		case "tool":
			outputs[m.ToolCallID] = contentText(m.Content)
		}
	}
	if len(called) == 0 {
		args, _ := json.Marshal(map[string]any{"query": query})
		return Reply{Calls: []Call{{ID: s.nextCallID(), Name: search, Arguments: string(args)}}}, true
	}
	last := strings.SplitN(called[len(called)-1], "\x00", 2)
	if last[0] == search {
		id := firstCoveredHit(json.RawMessage(jsonString(outputs[last[1]])))
		if id == "" {
			return Reply{Text: "No covered turn holds it."}, true
		}
		args, _ := json.Marshal(map[string]any{"ids": []string{id}})
		return Reply{Calls: []Call{{ID: s.nextCallID(), Name: read, Arguments: string(args)}}}, true
	}
	return Reply{Text: "Recalled."}, true
}

// chatTool is the offered function named for ctxfold's tool ("ctxfold_"
// prefix: OpenCode's naming of an MCP server's tools; "" none).
func chatTool(names []string, tool string) string {
	for _, n := range names {
		if strings.Contains(n, RecallServer) && strings.HasSuffix(n, tool) {
			return n
		}
	}
	return ""
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

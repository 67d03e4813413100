package openai

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// doneItems posts a Responses request and returns its output items.
func doneItems(t *testing.T, url, tools, input string) []map[string]any {
	t.Helper()
	stream := post(t, url+"/responses", `{"model":"m","stream":true,"tools":[`+tools+`],"input":[`+input+`]}`)
	var out []map[string]any
	for _, d := range events(stream, "response.output_item.done") {
		out = append(out, d["item"].(map[string]any))
	}
	return out
}

// The shapes below are what Codex 0.169 sent (docs/HOOKS.md, "Codex CLI"):
// with a catalogued model the MCP server is a deferred namespace behind
// tool_search; with another model it is offered as a namespace tool.
const (
	recallUser      = `{"type":"message","role":"user","content":[{"type":"input_text","text":"Find it. [[recall: checkpoint-42]]"}]}`
	toolSearchDef   = `{"type":"tool_search","execution":"client","parameters":{}}`
	ctxfoldNS       = `{"type":"namespace","name":"mcp__ctxfold","tools":[{"type":"function","name":"search_history"},{"type":"function","name":"read_turns"}]}`
	searchCallItem  = `{"type":"tool_search_call","call_id":"s1","execution":"client","arguments":{"query":"ctxfold"}}`
	searchOutItem   = `{"type":"tool_search_output","call_id":"s1","execution":"client","tools":[` + ctxfoldNS + `]}`
	historyCallItem = `{"type":"function_call","call_id":"c1","name":"search_history","namespace":"mcp__ctxfold","arguments":"{}"}`
)

func TestRecallThroughToolSearch(t *testing.T) {
	_, url := start(t)
	items := doneItems(t, url, toolSearchDef, recallUser)
	if len(items) != 1 || items[0]["type"] != "tool_search_call" || items[0]["execution"] != "client" {
		t.Fatalf("first step: %v, want one client tool_search_call", items)
	}
	items = doneItems(t, url, toolSearchDef, recallUser+","+searchCallItem+","+searchOutItem)
	if len(items) != 1 || items[0]["name"] != "search_history" || items[0]["namespace"] != "mcp__ctxfold" ||
		!strings.Contains(items[0]["arguments"].(string), `"query":"checkpoint-42"`) {
		t.Fatalf("after the tool search: %v, want search_history in namespace mcp__ctxfold", items)
	}
	// Codex prefixes the structured result with its wall time.
	result := "Wall time: 0.07 seconds\nOutput:\n" + `{"hits":[{"id":"n9","status":"visible"},{"id":"n4","status":"covered","covered_by":"s"}]}`
	out, _ := json.Marshal(result)
	hist := recallUser + "," + searchCallItem + "," + searchOutItem + "," + historyCallItem +
		`,{"type":"function_call_output","call_id":"c1","output":` + string(out) + `}`
	items = doneItems(t, url, toolSearchDef, hist)
	if len(items) != 1 || items[0]["name"] != "read_turns" || items[0]["namespace"] != "mcp__ctxfold" || items[0]["arguments"] != `{"ids":["n4"]}` {
		t.Fatalf("after search_history: %v, want read_turns on the covered hit n4", items)
	}
	hist += `,{"type":"function_call","call_id":"c2","name":"read_turns","namespace":"mcp__ctxfold","arguments":"{}"},{"type":"function_call_output","call_id":"c2","output":"x"}`
	items = doneItems(t, url, toolSearchDef, hist)
	if len(items) != 1 || items[0]["type"] != "message" {
		t.Fatalf("after read_turns: %v, want a closing reply", items)
	}
}

func TestRecallOfferedDirectly(t *testing.T) {
	_, url := start(t)
	items := doneItems(t, url, ctxfoldNS, recallUser)
	if len(items) != 1 || items[0]["name"] != "search_history" || items[0]["namespace"] != "mcp__ctxfold" {
		t.Fatalf("namespace tool: %v", items)
	}
	items = doneItems(t, url, `{"type":"function","name":"mcp__ctxfold__search_history"}`, recallUser)
	if len(items) != 1 || items[0]["name"] != "mcp__ctxfold__search_history" || items[0]["namespace"] != nil {
		t.Fatalf("flat function tool: %v", items)
	}
	text := "- n7 · user · covered by summary s (the model no longer reads it; read_turns quotes it) · content: x\n"
	out, _ := json.Marshal(text)
	items = doneItems(t, url, `{"type":"function","name":"mcp__ctxfold__search_history"}`, recallUser+
		`,{"type":"function_call","call_id":"c1","name":"mcp__ctxfold__search_history","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":`+string(out)+`}`)
	if len(items) != 1 || items[0]["name"] != "mcp__ctxfold__read_turns" || items[0]["arguments"] != `{"ids":["n7"]}` {
		t.Fatalf("text result: %v, want mcp__ctxfold__read_turns on n7", items)
	}
	items = doneItems(t, url, `{"type":"function","name":"exec_command"}`, recallUser)
	if len(items) != 1 || items[0]["type"] != "message" {
		t.Fatalf("no recall tool offered: %v, want a text reply", items)
	}
}

// TestRecallOnRecordedItems feeds the script what Codex 0.169 and 0.171
// really sent during the recall of interop/codex's TestLiveHooks
// (testdata/hook/codex/<version>/recall-items.json, rewritten by
// interop/codex/hooks.sh): after its tool_search_output the script calls
// search_history in the namespace found there, after search_history's
// output read_turns on the covered hit.
func TestRecallOnRecordedItems(t *testing.T) {
	for _, v := range []string{"0.169.0", "0.171.0"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "hook", "codex", v, "recall-items.json"))
		if err != nil {
			t.Fatal(err)
		}
		var items []json.RawMessage
		if err := json.Unmarshal(b, &items); err != nil {
			t.Fatal(err)
		}
		_, url := start(t)
		var upTo []string
		steps := map[string]string{}
		for _, it := range items {
			var x struct{ Type, Name string }
			_ = json.Unmarshal(it, &x)
			if x.Type == "function_call" {
				got := doneItems(t, url, toolSearchDef, recallUser+","+strings.Join(upTo, ","))
				if len(got) != 1 || got[0]["name"] != x.Name || got[0]["namespace"] != "mcp__ctxfold" {
					t.Fatalf("%s: before the recorded %s call the script answered %v", v, x.Name, got)
				}
				steps[x.Name] = got[0]["arguments"].(string)
			}
			upTo = append(upTo, string(it))
		}
		var read struct{ IDs []string }
		_ = json.Unmarshal([]byte(steps["read_turns"]), &read)
		if !strings.Contains(steps["search_history"], "checkpoint-42") || len(read.IDs) != 1 || read.IDs[0] != "cx<session>-48" {
			t.Fatalf("%s: calls %v", v, steps)
		}
	}
}

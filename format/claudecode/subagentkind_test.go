package claudecode

import (
	"os"
	"path/filepath"
	"testing"
)

// writeFile writes content to path, making its folders.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A sub-agent's kind comes from the .meta.json Claude Code 2.1.2xx writes
// beside it, else from the parent session's call whose prompt is its first
// message; a fork, a compaction summariser, a file outside a subagents/
// folder and a call that cannot be found have none.
func TestSubagentKind(t *testing.T) {
	project := t.TempDir()
	prompt := `{"type":"user","message":{"role":"user","content":"Find the hooks docs."}}` + "\n"
	blocksPrompt := `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"Review task 2"}]}}` + "\n"
	writeFile(t, filepath.Join(project, "s1.jsonl"),
		`{"type":"user","message":{"role":"user","content":"go"}}`+"\n"+
			`{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Task","input":{"description":"d","prompt":"Find the hooks docs.","subagent_type":"Explore"}},`+
			`{"type":"tool_use","id":"t2","name":"Agent","input":{"prompt":" Review task 2\n","subagent_type":"general-purpose","model":"haiku"}}]}}`+"\n")
	cases := []struct {
		name, file, content, meta, want string
		ok                              bool
	}{
		{"meta with a model", "subagents/agent-a1.jsonl", prompt, `{"agentType":"general-purpose","model":"sonnet","spawnDepth":1}`, "general-purpose/sonnet", true},
		{"meta without one", "subagents/agent-a2.jsonl", prompt, `{"agentType":"general-purpose"}`, "general-purpose/", true},
		{"workflow agent", "subagents/workflows/wf_1/agent-a3.jsonl", prompt, `{"agentType":"workflow-subagent"}`, "workflow-subagent/", true},
		{"fork", "subagents/agent-a4.jsonl", prompt, `{"agentType":"fork","isFork":true}`, "", false},
		{"the parent's call", "subagents/agent-a5.jsonl", prompt, "", "Explore/", true},
		{"the parent's call, a text block", "subagents/agent-a6.jsonl", blocksPrompt, "", "general-purpose/haiku", true},
		{"no call with its prompt", "subagents/agent-a7.jsonl", `{"type":"user","message":{"content":"something else"}}` + "\n", "", "", false},
		{"compaction summariser", "subagents/agent-acompact-1.jsonl", prompt, "", "", false},
	}
	var kinds SubagentKinds
	for _, c := range cases {
		file := filepath.Join(project, "s1", c.file)
		writeFile(t, file, c.content)
		if c.meta != "" {
			writeFile(t, file[:len(file)-len(".jsonl")]+".meta.json", c.meta)
		}
		if got, ok := kinds.Of(file); got != c.want || ok != c.ok {
			t.Errorf("%s: kind %q, %v; want %q, %v", c.name, got, ok, c.want, c.ok)
		}
	}
	outside := filepath.Join(project, "agent-a8.jsonl")
	writeFile(t, outside, prompt)
	if got, ok := kinds.Of(outside); ok {
		t.Errorf("a file under no subagents/ folder: kind %q", got)
	}
	orphan := filepath.Join(project, "s2", "subagents", "agent-a9.jsonl")
	writeFile(t, orphan, prompt)
	if got, ok := kinds.Of(orphan); ok {
		t.Errorf("a sub-agent whose parent session is missing: kind %q", got)
	}
}

// The shared spotter session's sub-agent (Claude Code 2.1.39, no
// .meta.json) takes its kind from the parent's Task call.
func TestSubagentKindOfARealSession(t *testing.T) {
	file := filepath.Join(externalDir(t), "marot-spotter", "258c7280-ae70-4798-800f-63464d01a85d", "subagents", "agent-a881341.jsonl")
	var kinds SubagentKinds
	got, ok := kinds.Of(file)
	if !ok || got != "claude-code-guide/sonnet" {
		t.Fatalf("kind %q, %v; want the parent's call's claude-code-guide on sonnet", got, ok)
	}
}

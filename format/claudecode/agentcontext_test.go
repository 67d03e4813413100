package claudecode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/transcript"
)

func TestVersionBefore(t *testing.T) {
	for _, c := range []struct {
		v, than string
		want    bool
	}{
		{"2.1.222", "2.1.259", true}, {"2.1.258", "2.1.259", true}, {"2.1.259", "2.1.259", false},
		{"2.1.328", "2.1.259", false}, {"2.0.77", "2.1.259", true}, {"2.1.3", "2.1.259", true},
		{"2.1.222-beta", "2.1.259", true}, {"3", "2.1.259", false},
	} {
		if got := versionBefore(c.v, c.than); got != c.want {
			t.Errorf("versionBefore(%q, %q) = %v", c.v, c.than, got)
		}
	}
}

// A sub-agent gets the agent types when its type has the Agent tool, as
// its line in the listing says (2.1.222's general-purpose agent does, its
// Explore agent does not: both recorded).
func TestHasAgentTool(t *testing.T) {
	lines := map[string]string{
		"general-purpose":  "- general-purpose: General-purpose agent. (Tools: *)",
		"Explore":          "- Explore: Read-only search agent. (Tools: All tools except Agent, Artifact, ExitPlanMode, Edit, Write, NotebookEdit)",
		"Plan":             "- Plan: Software architect agent. (Tools: All tools except Artifact, Edit)",
		"statusline-setup": "- statusline-setup: Use this agent to configure the status line. (Tools: Read, Edit)",
		"delegator":        "- delegator: Hands work on. (Tools: Agent, Bash)",
	}
	for agentType, want := range map[string]bool{
		"general-purpose": true, "Explore": false, "Plan": true, "statusline-setup": false, "delegator": true,
		"workflow-subagent": true, "": true,
	} {
		if got := hasAgentTool(agentType, lines); got != want {
			t.Errorf("hasAgentTool(%q) = %v, want %v", agentType, got, want)
		}
	}
}

// subagentStep copies the 2.1.222 recording of a sub-agent that ran one
// command (testdata/interop) into a project folder: the parent session and
// the sub-agent file, cut to its first n lines (0: whole), with the
// version rewritten and a .meta.json written when given.
func subagentStep(t *testing.T, n int, version, meta string) string {
	t.Helper()
	src := filepath.Join("..", "..", "testdata", "interop", "claude-code", "2.1.222", "subagent-step", "transcript")
	const id = "00000000-0000-4000-8000-000000000001"
	dir := t.TempDir()
	parent, err := os.ReadFile(filepath.Join(src, id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, id+".jsonl"), string(parent))
	b, err := os.ReadFile(filepath.Join(src, id, "subagents", "agent-a0000000000000001.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	if n > 0 {
		lines = lines[:n]
	}
	sub := strings.Join(lines, "")
	if version != "" {
		sub = strings.ReplaceAll(sub, `"version":"2.1.222"`, `"version":"`+version+`"`)
	}
	file := filepath.Join(dir, id, "subagents", "agent-a0000000000000001.jsonl")
	writeFile(t, file, sub)
	if meta != "" {
		writeFile(t, strings.TrimSuffix(file, ".jsonl")+".meta.json", meta)
	}
	return file
}

// contextNodes are the rebuilt parent-context nodes of a conversation.
func contextNodes(s *memSink) []transcript.Node {
	var out []transcript.Node
	for _, n := range s.nodes {
		if strings.Contains(string(n.Metadata["claude_code"]), "second request carries") {
			out = append(out, n)
		}
	}
	return out
}

// Claude Code before 2.1.259 sends a sub-agent's second request with the
// agent types and MCP instructions its parent announced, after the first
// results, and does not write them in the sub-agent's file: the import
// rebuilds them there, before the second request — and at the file's end
// when the file ends with its first results (the request about to be
// sent carries them) — only for such a client, and without the agent
// types for a sub-agent that has no Agent tool.
func TestSubagentSecondRequestCarriesTheParentsContext(t *testing.T) {
	listing := "Available agent types for the Agent tool:\n- claude: "
	mcpText := "# MCP Server Instructions\n\nThe following MCP servers have provided instructions for how to use their tools and resources:\n\n## recorder\n"
	for _, c := range []struct {
		name          string
		lines         int
		version, meta string
		want          []string // what the one rebuilt node holds; nil: no node
		atHead        bool
	}{
		{name: "whole file", want: []string{listing, mcpText}},
		{name: "cut after its first results", lines: 4, want: []string{listing, mcpText}, atHead: true},
		{name: "cut before its first results", lines: 3},
		{name: "an Explore agent", meta: `{"agentType":"Explore"}`, want: []string{mcpText}},
		{name: "a client that writes it", version: "2.1.259"},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := subagentStep(t, c.lines, c.version, c.meta)
			tgt := importMem(t, file)
			s := tgt.convs[0]
			got := contextNodes(s)
			if c.want == nil {
				if len(got) != 0 {
					t.Fatalf("rebuilt %d nodes: %q", len(got), got[0].Content.PlainText())
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("rebuilt %d nodes, want 1", len(got))
			}
			n, text := got[0], got[0].Content.PlainText()
			if n.Role != transcript.RoleSystem {
				t.Errorf("role %s, want system", n.Role)
			}
			at := 0
			for _, w := range c.want {
				k := strings.Index(text[at:], w)
				if k < 0 {
					t.Fatalf("text %q lacks %q after offset %d", text, w, at)
				}
				at += k + len(w)
			}
			if c.meta != "" && strings.Contains(text, listing) {
				t.Errorf("an agent without the Agent tool got the agent types: %q", text)
			}
			pred := map[string]string{}
			for _, m := range s.nodes {
				pred[m.ID] = m.Predecessor
			}
			if c.atHead && s.head != n.ID {
				t.Errorf("HEAD %s, want the rebuilt node %s", s.head, n.ID)
			}
			if !c.atHead {
				// Between the first results and the second request.
				var before, after transcript.Node
				for _, m := range s.nodes {
					if m.ID == n.Predecessor {
						before = m
					}
					if m.Predecessor == n.ID {
						after = m
					}
				}
				if len(before.ToolResults()) == 0 || after.Role != transcript.RoleAssistant {
					t.Errorf("placed after %s (%d results), before %s %s", before.ID, len(before.ToolResults()), after.Role, after.ID)
				}
			}
		})
	}
}

// A background task's notification gets what its client sent beside the
// recorded text: nothing before 2.1.205, the preamble until 2.1.234, the
// preamble in a system reminder from then on (the oracle recordings of
// 2.1.222 and 2.1.258 check the texts); any other user line is left as it
// is.
func TestNotificationSent(t *testing.T) {
	const note = "<task-notification>\n<task-id>a1</task-id>\n</task-notification>"
	origin := json.RawMessage(`{"kind":"task-notification"}`)
	for _, c := range []struct {
		version string
		origin  json.RawMessage
		want    string
	}{
		{"2.1.204", origin, ""},
		{"2.1.205", origin, notificationPreamble + note},
		{"2.1.233", origin, notificationPreamble + note},
		{"2.1.234", origin, "<system-reminder>\n" + notificationPreamble + note + "\n</system-reminder>"},
		{"2.1.332", origin, "<system-reminder>\n" + notificationPreamble + note + "\n</system-reminder>"},
		{"2.1.222", json.RawMessage(`{"kind":"user"}`), ""},
		{"2.1.222", nil, ""},
	} {
		r := fullRecord{Origin: c.origin, Version: json.RawMessage(`"` + c.version + `"`)}
		got, ok := notificationSent(note, &r)
		if ok != (c.want != "") || got != c.want {
			t.Errorf("%s %s: %q, %v; want %q", c.version, c.origin, got, ok, c.want)
		}
	}
}

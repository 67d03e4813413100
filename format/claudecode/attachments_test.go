package claudecode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/transcript"
)

// Claude Code 2.1.2xx's attachment lines, as hannibal8856/claude_backup's
// sessions hold them (2.1.222; contents shortened): no rendered content,
// the attachment's fields alone. The first line of each pair is the
// attachment, the second what Claude Code 2.1.222 sends for it (its
// package's wording), "" for one it sends nothing for.
var unrenderedAttachments = [][2]string{
	{`{"type":"hook_additional_context","content":["You have superpowers."],"hookName":"SessionStart:startup","toolUseID":"t","hookEvent":"SessionStart"}`,
		"<system-reminder>\nSessionStart:startup hook additional context: You have superpowers.\n</system-reminder>"},
	{`{"type":"skill_listing","content":"- pdf: Read PDFs","skillCount":1,"isInitial":true,"names":["pdf"]}`,
		"<system-reminder>\nThe following skills are available for use with the Skill tool:\n\n- pdf: Read PDFs\n</system-reminder>"},
	{`{"type":"deferred_tools_delta","addedNames":["WebFetch"],"addedLines":["WebFetch"],"removedNames":[],"readdedNames":[],"pendingMcpServers":[]}`,
		"<system-reminder>\nThe following deferred tools are now available via ToolSearch. Their schemas are NOT loaded \u2014 calling them directly will fail with InputValidationError. Use ToolSearch with query \"select:<name>[,<name>...]\" to load tool schemas before calling them:\nWebFetch\n</system-reminder>"},
	{`{"type":"agent_listing_delta","addedTypes":["Explore"],"addedLines":["- Explore: Fast agent for exploring codebases"],"removedTypes":[],"isInitial":true,"showConcurrencyNote":true}`,
		"<system-reminder>\nAvailable agent types for the Agent tool:\n- Explore: Fast agent for exploring codebases\nWhen you launch multiple agents for independent work, send them in a single message with multiple tool uses so they run concurrently.\n</system-reminder>"},
	{`{"type":"queued_command","prompt":"also check the tests","commandMode":"prompt"}`,
		"<system-reminder>\nThe user sent a new message while you were working:\nalso check the tests\nThis is how Claude Code surfaces messages the user sends mid-turn \u2014 within the running turn, often alongside the next tool result, rather than as a separate conversation turn. Address the message above as you continue this turn.\n</system-reminder>"},
	{`{"type":"date_change","newDate":"2026-08-21"}`,
		"<system-reminder>\nThe date has changed. Today's date is now 2026-08-21. DO NOT mention this to the user explicitly because they are already aware.\n</system-reminder>"},
	{`{"type":"deferred_tools_delta","addedNames":[],"addedLines":[],"removedNames":["mcp__db__query","mcp__db__list"],"readdedNames":[]}`,
		"<system-reminder>\nThe following deferred tools are no longer available (their MCP server disconnected). Do not search for them \u2014 ToolSearch will return no match:\nmcp__db__query\nmcp__db__list\nThis is ambient context \u2014 do not narrate it to the user unless they ask or it is directly relevant to their request.\n</system-reminder>"},
	{`{"type":"hook_success","content":"Prompt context: ticket ABC-1","hookName":"UserPromptSubmit","hookEvent":"UserPromptSubmit"}`,
		"<system-reminder>\nUserPromptSubmit hook success: Prompt context: ticket ABC-1\n</system-reminder>"},
	{`{"type":"mcp_instructions_delta","addedNames":["db"],"addedBlocks":["## db\nQuery read-only."],"removedNames":[]}`,
		"<system-reminder>\n# MCP Server Instructions\n\nThe following MCP servers have provided instructions for how to use their tools and resources:\n\n## db\nQuery read-only.\n</system-reminder>"},
	{`{"type":"file","filename":"/w/a<b>.md","content":{"type":"text","file":{"filePath":"/w/a<b>.md","content":"x\ny\n","numLines":3,"startLine":10,"totalLines":12}},"displayPath":"a<b>.md"}`,
		"<system-reminder>\nCalled the Read tool with the following input: {\"file_path\":\"/w/a<b>.md\"}\nResult of calling the Read tool:\n10\tx\n11\ty\n12\t\n</system-reminder>"},
	{`{"type":"edited_text_file","filename":"/w/README.md","snippet":"1\t# w"}`,
		"<system-reminder>\nNote: /w/README.md was modified, either by the user or by a linter. This change was intentional, so make sure to take it into account as you proceed (ie. don't revert it unless the user asks you to). Don't tell the user this, since they are already aware. Here are the relevant changes (shown with line numbers):\n1\t# w\n</system-reminder>"},
	{`{"type":"task_reminder","content":[{"id":"1","status":"pending","subject":"Fix the lock"}],"itemCount":1}`,
		"<system-reminder>\nThe task tools haven't been used recently. If you're working on tasks that would benefit from tracking progress, consider using TaskCreate to add new tasks and TaskUpdate to update task status (set to in_progress when starting, completed when done). Also consider cleaning up the task list if it has become stale. Only use these if relevant to the current work. This is just a gentle reminder - ignore if not applicable.\n\nHere are the existing tasks:\n#1. [pending] Fix the lock\n</system-reminder>"},
	{`{"type":"todo_reminder","content":[{"content":"Fix the lock","status":"in_progress"}]}`,
		"<system-reminder>\nThe TodoWrite tool hasn't been used recently. If you're working on tasks that would benefit from tracking progress, consider using the TodoWrite tool to track progress. Also consider cleaning up the todo list if has become stale and no longer matches what you are working on. Only use it if it's relevant to the current work. This is just a gentle reminder - ignore if not applicable.\n\nHere are the existing contents of your todo list:\n[1. [in_progress] Fix the lock]\n</system-reminder>"},
	{`{"type":"total_tokens_reminder","text":"<total_tokens>Infinite tokens left</total_tokens>"}`,
		"<system-reminder>\n<total_tokens>Infinite tokens left</total_tokens>\n</system-reminder>"},
	{`{"type":"nested_memory","content":{"path":"/w/sub/CLAUDE.md","content":"Use tabs."}}`,
		"<system-reminder>\nContents of /w/sub/CLAUDE.md:\nUse tabs.\n</system-reminder>"},
	{`{"type":"deferred_tools_delta","addedNames":[],"addedLines":[],"removedNames":[],"readdedNames":["mcp__db__query","mcp__db__list"]}`,
		"<system-reminder>\n2 deferred tools are available again (MCP server reconnected \u2014 names announced earlier in this conversation): mcp__db__* (2). Load via ToolSearch as before.\n</system-reminder>"},
	// A PreToolUse hook's output does not reach the model; permissions
	// are not sent; an empty listing sends nothing.
	{`{"type":"hook_success","content":"ok","hookName":"PreToolUse:Bash","toolUseID":"t","hookEvent":"PreToolUse","stdout":"ok"}`, ""},
	{`{"type":"command_permissions","allowedTools":[]}`, ""},
	{`{"type":"skill_listing","content":"","skillCount":0,"isInitial":false}`, ""},
}

func TestAttachmentWithoutRenderedContent(t *testing.T) {
	for _, c := range unrenderedAttachments {
		var a attachment
		var h attachmentHint
		if err := h.UnmarshalJSON([]byte(c[0])); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(c[0]), &a); err != nil {
			t.Fatal(err)
		}
		got, ok := a.message()
		if got != c[1] || ok != (c[1] != "") || h.renders != ok {
			t.Errorf("%s:\n got %q (%v, hint %v)\nwant %q", c[0], got, ok, h.renders, c[1])
		}
	}
}

// An attachment line of 2.1.2xx imports as what Claude Code sent for it,
// in the order it sends a turn (closeGroup): a prompt typed mid-turn as a
// user message moved up before the prompt it came with, the others as
// the system-role message after it, unwrapped. A sub-agent file cut just
// after its prompt's attachments (what the status line reads before the
// sub-agent's first reply) ends at the turn's last node.
func TestUnrenderedAttachmentsImport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s1", "subagents")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	line := func(uuid, parent, typ, body string) string {
		return `{"parentUuid":"` + parent + `","isSidechain":true,"type":"` + typ + `","uuid":"` + uuid + `","sessionId":"s1","agentId":"a1","version":"2.1.222","timestamp":"2026-08-20T10:00:00Z",` + body + `}`
	}
	deferred, preToolUse, queued := attachmentCase(t, `"deferred_tools_delta","addedNames":["WebFetch"]`),
		attachmentCase(t, `"hookEvent":"PreToolUse"`), attachmentCase(t, `"queued_command"`)
	lines := []string{
		strings.Replace(line("u1", "", "user", `"message":{"role":"user","content":"Find the flaky test."}`), `"parentUuid":""`, `"parentUuid":null`, 1),
		line("x1", "u1", "attachment", `"attachment":`+deferred[0]),
		line("x2", "x1", "attachment", `"attachment":`+preToolUse[0]),
		line("x3", "x2", "attachment", `"attachment":`+queued[0]),
	}
	path := filepath.Join(dir, "agent-a1.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := importMem(t, path).convs[0]
	byID := map[string]transcript.Node{}
	for _, n := range s.nodes {
		byID[n.ID] = n
	}
	if got := s.countOf("attachment", transcript.OutcomeImported); got != 2 {
		t.Errorf("%d attachments imported, want 2 (the PreToolUse hook's is not sent)", got)
	}
	if s.head != "x1" {
		t.Fatalf("head %q, want x1, the end of the chain", s.head)
	}
	var chain []string
	for id := s.head; id != ""; id = byID[id].Predecessor {
		chain = append([]string{id}, chain...)
	}
	if strings.Join(chain, " ") != "x3 u1 x1" {
		t.Fatalf("chain %v, want x3 u1 x1", chain)
	}
	if got, want := byID["x1"].Content.PlainText(), unwrapReminder(deferred[1]); got != want || byID["x1"].Role != transcript.RoleSystem {
		t.Errorf("deferred tools: %s %q, want a system message %q", byID["x1"].Role, got, want)
	}
	if got := byID["x3"].Content.PlainText(); got != queued[1] || byID["x3"].Role != transcript.RoleUser {
		t.Errorf("queued prompt: %s %q", byID["x3"].Role, got)
	}
	// The chain's first node names the client, as a first message does
	// (the prior of estimate follows it).
	if got := string(byID["x3"].Metadata["claude_code"]); !strings.Contains(got, `"client_version":"2.1.222"`) {
		t.Errorf("the root attachment's metadata %s names no client version", got)
	}
}

// attachmentCase is the unrenderedAttachments row whose attachment holds s.
func attachmentCase(t *testing.T, s string) [2]string {
	t.Helper()
	for _, c := range unrenderedAttachments {
		if strings.Contains(c[0], s) {
			return c
		}
	}
	t.Fatalf("no attachment case holds %s", s)
	return [2]string{}
}

package claudecode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Claude Code 2.1.3xx writes what an attachment record sent to the model
// beside it (rendered); the versions before it, 2.1.1xx and 2.1.2xx among
// them, write the attachment's fields alone and build the message when
// they send the request. For those, the message is rebuilt here from the
// fields with Claude Code 2.1.222's own wording, read from its package and
// checked against what it sent (docs/INTEROP-claude-code.md, "Attachments
// without rendered content"; TestOracleUnrenderedAttachments):
// a skill listing, the deferred tools and agent types and MCP servers'
// instructions as they change, what a SessionStart or UserPromptSubmit
// hook added, a file the user edited, a file re-attached after a
// compaction, a prompt typed while the model worked. A type not listed here sends nothing the import knows of and
// stays skipped, as before.

// attachment is the part of an attachment record's attachment object the
// rebuilt message reads.
type attachment struct {
	Type      string          `json:"type"`
	Content   json.RawMessage `json:"content"`
	HookName  string          `json:"hookName"`
	HookEvent string          `json:"hookEvent"`
	Text      string          `json:"text"`
	// deferred_tools_delta, agent_listing_delta, mcp_instructions_delta.
	AddedLines          []string `json:"addedLines"`
	AddedNames          []string `json:"addedNames"`
	RemovedNames        []string `json:"removedNames"`
	ReaddedNames        []string `json:"readdedNames"`
	PendingMcpServers   []string `json:"pendingMcpServers"`
	AddedTypes          []string `json:"addedTypes"`
	RemovedTypes        []string `json:"removedTypes"`
	AddedBlocks         []string `json:"addedBlocks"`
	IsInitial           bool     `json:"isInitial"`
	ShowConcurrencyNote bool     `json:"showConcurrencyNote"`
	// edited_text_file, date_change, queued_command.
	Filename    string          `json:"filename"`
	Snippet     *string         `json:"snippet"`
	NewDate     string          `json:"newDate"`
	Prompt      json.RawMessage `json:"prompt"`
	CommandMode string          `json:"commandMode"`
	Origin      *struct {
		Kind string `json:"kind"`
	} `json:"origin"`
}

// attachmentHint is what the planner keeps of an attachment object:
// whether a message is rebuilt from it, and whether a system-role one.
type attachmentHint struct{ renders, system bool }

func (h *attachmentHint) UnmarshalJSON(b []byte) error {
	var a attachment
	if json.Unmarshal(b, &a) == nil {
		_, h.renders = a.message()
		h.system = a.systemRole()
	}
	return nil // a hint: an attachment that cannot be read renders nothing
}

// systemRole says the message goes into the system-role message Claude
// Code sends after the turn's user message, its wrapper removed, as
// 2.1.222 sends a hook's context, the agent types and the skill listing
// (recorded: testdata/interop/claude-code/2.1.222/attachments); a prompt
// typed mid-turn is the user's, sent in the user message.
func (a *attachment) systemRole() bool { return a.Type != "queued_command" }

// Wording shared by several of Claude Code 2.1.222's messages.
const (
	// ambientNote follows a list of things no longer available.
	ambientNote = "This is ambient context \u2014 do not narrate it to the user unless they ask or it is directly relevant to their request."
	// toolSearch is the tool that loads a deferred tool's schema.
	toolSearch = "ToolSearch"
	// listCap is how many names a list shows before it counts the rest.
	listCap = 30
)

// message is the text Claude Code 2.1.222 sends for a, wrapped in
// <system-reminder> as its user-role form is (a system-role one is sent
// unwrapped: buildAttachment), and whether it sends any.
func (a *attachment) message() (string, bool) {
	var text string
	switch a.Type {
	case "skill_listing":
		if s := rawString(a.Content); s != "" {
			// The blank line is the client's (recorded), not the bundle's
			// template alone.
			text = "The following skills are available for use with the Skill tool:\n\n" + s
		}
	case "hook_success":
		// Only these events' output reaches the model.
		if a.HookEvent == "SessionStart" || a.HookEvent == "UserPromptSubmit" || a.HookEvent == "UserPromptExpansion" {
			if s := rawString(a.Content); s != "" {
				text = a.HookName + " hook success: " + s
			}
		}
	case "hook_additional_context":
		if lines := rawStrings(a.Content); len(lines) > 0 {
			text = a.HookName + " hook additional context: " + strings.Join(lines, "\n")
		}
	case "deferred_tools_delta":
		text = a.deferredTools()
	case "agent_listing_delta":
		text = a.agentTypes()
	case "mcp_instructions_delta":
		text = a.mcpInstructions()
	case "edited_text_file":
		text = a.editedFile()
	case "date_change":
		if a.NewDate != "" {
			text = "The date has changed. Today's date is now " + a.NewDate + ". DO NOT mention this to the user explicitly because they are already aware."
		}
	case "total_tokens_reminder":
		text = a.Text
	case "critical_system_reminder":
		text = rawString(a.Content)
	case "nested_memory":
		var m struct{ Path, Content string }
		if json.Unmarshal(a.Content, &m) == nil && m.Path != "" {
			text = "Contents of " + m.Path + ":\n" + m.Content
		}
	case "file":
		text = a.readFile()
	case "todo_reminder":
		text = a.todoReminder()
	case "task_reminder":
		text = a.taskReminder()
	case "queued_command":
		text = a.queuedCommand()
	}
	if text == "" {
		return "", false
	}
	return "<system-reminder>\n" + text + "\n</system-reminder>", true
}

func (a *attachment) deferredTools() string {
	var parts []string
	if len(a.AddedLines) > 0 && len(a.AddedNames) > 0 {
		parts = append(parts, "The following deferred tools are now available via "+toolSearch+". Their schemas are NOT loaded \u2014 calling them directly will fail with InputValidationError. Use "+toolSearch+` with query "select:<name>[,<name>...]" to load tool schemas before calling them:`+"\n"+strings.Join(a.AddedLines, "\n"))
	}
	if n := len(a.ReaddedNames); n > 0 {
		verb := "s are"
		if n == 1 {
			verb = " is"
		}
		parts = append(parts, fmt.Sprintf("%d deferred tool%s available again (MCP server reconnected \u2014 names announced earlier in this conversation): %s. Load via %s as before.", n, verb, groupedNames(a.ReaddedNames), toolSearch))
	}
	if n := len(a.RemovedNames); n > 0 {
		if n > listCap {
			parts = append(parts, fmt.Sprintf("%d deferred tools are no longer available (MCP server disconnected): %s. Do not search for them \u2014 %s will return no match.", n, groupedNames(a.RemovedNames), toolSearch))
		} else {
			parts = append(parts, "The following deferred tools are no longer available (their MCP server disconnected). Do not search for them \u2014 "+toolSearch+" will return no match:\n"+strings.Join(a.RemovedNames, "\n"))
		}
		parts = append(parts, ambientNote)
	}
	if n := len(a.PendingMcpServers); n > 0 {
		parts = append(parts, "The following MCP servers are still connecting \u2014 their tools (typically named mcp__<server>__*) are not yet available but will appear shortly:\n"+
			"If the user's request might be served by one of these servers (even if they didn't name it explicitly), call "+toolSearch+" with a relevant keyword \u2014 "+toolSearch+" will wait for connecting servers and search their tools once available. Do not report a capability as unavailable without first searching.")
	}
	return strings.Join(parts, "\n")
}

// groupedNames lists names as Claude Code does: an MCP server's tools as
// one mcp__server__* entry with their count, sorted.
func groupedNames(names []string) string {
	counts := map[string]int{}
	for _, n := range names {
		if strings.HasPrefix(n, "mcp__") {
			if p := strings.SplitN(n, "__", 3); len(p) == 3 {
				n = p[0] + "__" + p[1] + "__*"
			}
		}
		counts[n]++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		if counts[k] > 1 {
			keys[i] = fmt.Sprintf("%s (%d)", k, counts[k])
		}
	}
	return strings.Join(keys, ", ")
}

func (a *attachment) agentTypes() string {
	var parts []string
	added := len(a.AddedLines) > 0 && len(a.AddedTypes) > 0
	if added {
		head := "New agent types are now available for the Agent tool:"
		if a.IsInitial {
			head = "Available agent types for the Agent tool:"
		}
		parts = append(parts, head+"\n"+strings.Join(a.AddedLines, "\n"))
	}
	if len(a.RemovedTypes) > 0 {
		gone := make([]string, len(a.RemovedTypes))
		for i, t := range a.RemovedTypes {
			gone[i] = "- " + t
		}
		parts = append(parts, "The following agent types are no longer available:\n"+strings.Join(gone, "\n"), ambientNote)
	}
	if added && a.IsInitial && a.ShowConcurrencyNote {
		parts = append(parts, "When you launch multiple agents for independent work, send them in a single message with multiple tool uses so they run concurrently.")
	}
	return strings.Join(parts, "\n")
}

func (a *attachment) mcpInstructions() string {
	var parts []string
	if len(a.AddedBlocks) > 0 && len(a.AddedNames) > 0 {
		// The blank lines are the client's (recorded: 2.1.222's request,
		// 2.1.328's rendered content); blocks are joined as sections.
		parts = append(parts, "# MCP Server Instructions\n\nThe following MCP servers have provided instructions for how to use their tools and resources:\n\n"+strings.Join(a.AddedBlocks, "\n\n"))
	}
	if len(a.RemovedNames) > 0 {
		parts = append(parts, "The following MCP servers have disconnected. Their instructions above no longer apply:\n"+strings.Join(a.RemovedNames, "\n"), ambientNote)
	}
	return strings.Join(parts, "\n")
}

// readFile is a file Claude Code re-attaches after a compaction (one the
// conversation had read), sent as the Read call and its result it stands
// for, the lines numbered as the Read tool numbers them (recorded:
// testdata/interop/claude-code/2.1.222/compact-file). Only a text file's
// is rebuilt.
func (a *attachment) readFile() string {
	var c struct {
		Type string `json:"type"`
		File struct {
			FilePath  string `json:"filePath"`
			Content   string `json:"content"`
			StartLine int    `json:"startLine"`
		} `json:"file"`
	}
	if json.Unmarshal(a.Content, &c) != nil || c.Type != "text" {
		return ""
	}
	path := a.Filename
	if path == "" {
		path = c.File.FilePath
	}
	var args bytes.Buffer
	enc := json.NewEncoder(&args)
	enc.SetEscapeHTML(false) // as JSON.stringify writes it
	if path == "" || enc.Encode(map[string]string{"file_path": path}) != nil {
		return ""
	}
	first := max(c.File.StartLine, 1)
	lines := strings.Split(c.File.Content, "\n")
	for i, l := range lines {
		lines[i] = strconv.Itoa(first+i) + "\t" + l
	}
	return "Called the Read tool with the following input: " + strings.TrimSuffix(args.String(), "\n") +
		"\nResult of calling the Read tool:\n" + strings.Join(lines, "\n")
}

func (a *attachment) editedFile() string {
	if a.Filename == "" || a.Snippet == nil {
		return ""
	}
	note := "Note: " + a.Filename + " was modified, either by the user or by a linter. This change was intentional, so make sure to take it into account as you proceed (ie. don't revert it unless the user asks you to). Don't tell the user this, since they are already aware. "
	if *a.Snippet == "" {
		return note + "The diff was omitted because other modified files in this turn already exceeded the snippet budget; use the Read tool if you need the current content."
	}
	return note + "Here are the relevant changes (shown with line numbers):\n" + *a.Snippet
}

func (a *attachment) todoReminder() string {
	var items []struct{ Content, Status string }
	if json.Unmarshal(a.Content, &items) != nil {
		return ""
	}
	lines := make([]string, len(items))
	for i, it := range items {
		lines[i] = fmt.Sprintf("%d. [%s] %s", i+1, it.Status, it.Content)
	}
	return withList("The TodoWrite tool hasn't been used recently. If you're working on tasks that would benefit from tracking progress, consider using the TodoWrite tool to track progress. Also consider cleaning up the todo list if has become stale and no longer matches what you are working on. Only use it if it's relevant to the current work. This is just a gentle reminder - ignore if not applicable.\n",
		"\nHere are the existing contents of your todo list:\n[", lines, "]")
}

// withList is a reminder's text with its items' lines after heading and
// before end, when there are any.
func withList(text, heading string, lines []string, end string) string {
	if len(lines) == 0 {
		return text
	}
	return text + heading + strings.Join(lines, "\n") + end
}

func (a *attachment) taskReminder() string {
	var items []struct {
		ID      json.RawMessage `json:"id"`
		Status  string          `json:"status"`
		Subject string          `json:"subject"`
	}
	if json.Unmarshal(a.Content, &items) != nil {
		return ""
	}
	lines := make([]string, len(items))
	for i, it := range items {
		id := rawString(it.ID)
		if id == "" {
			id = string(it.ID)
		}
		lines[i] = fmt.Sprintf("#%s. [%s] %s", id, it.Status, it.Subject)
	}
	return withList("The task tools haven't been used recently. If you're working on tasks that would benefit from tracking progress, consider using TaskCreate to add new tasks and TaskUpdate to update task status (set to in_progress when starting, completed when done). Also consider cleaning up the task list if it has become stale. Only use these if relevant to the current work. This is just a gentle reminder - ignore if not applicable.\n",
		"\nHere are the existing tasks:\n", lines, "")
}

// queuedCommand is a prompt the user typed while the model worked, sent
// within the running turn: a person's (no origin, or human) with Claude
// Code's note around it; another origin's (a task notification) as its
// text, whose own framing is not rebuilt.
func (a *attachment) queuedCommand() string {
	prompt := rawString(a.Prompt)
	if prompt == "" {
		var blocks []struct{ Type, Text string }
		if json.Unmarshal(a.Prompt, &blocks) == nil {
			var texts []string
			for _, b := range blocks {
				if b.Type == "text" {
					texts = append(texts, b.Text)
				}
			}
			prompt = strings.Join(texts, "\n")
		}
	}
	if prompt == "" {
		return ""
	}
	if a.CommandMode == "task-notification" || a.Origin != nil && a.Origin.Kind != "" && a.Origin.Kind != "human" && a.Origin.Kind != "auto-continuation" {
		return prompt
	}
	return "The user sent a new message while you were working:\n" + prompt + "\nThis is how Claude Code surfaces messages the user sends mid-turn \u2014 within the running turn, often alongside the next tool result, rather than as a separate conversation turn. Address the message above as you continue this turn."
}

// rawString is raw as a JSON string, "" when it is not one.
func rawString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// rawStrings is raw as a JSON array of strings (the strings of it).
func rawStrings(raw json.RawMessage) []string {
	var vs []any
	if json.Unmarshal(raw, &vs) != nil {
		return nil
	}
	var out []string
	for _, v := range vs {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

package claudecode

import (
	"strconv"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// A sub-agent's second request, before Claude Code 2.1.259: after the
// results of its first tool calls the client sends one system message with
// what the parent session has announced — the agent types (to a sub-agent
// that has the Agent tool) and the MCP servers' instructions — and writes
// neither in the sub-agent's file; from 2.1.259 on it writes them there as
// agent_listing_delta and mcp_instructions_delta attachments (recorded:
// testdata/interop/claude-code/2.1.222/subagent-step against 2.1.328's;
// docs/INTEROP-claude-code.md, "A sub-agent's second request"). The import
// rebuilds that message from the parent's own attachment records written
// before the sub-agent started, as one system node before the sub-agent's
// second request (or at the file's end, when the file ends with its first
// results: the request about to be sent carries it).

// writesSubagentContext is the first client version that writes the
// message in the sub-agent's file (2.1.258 does not: bisected by recording).
const writesSubagentContext = "2.1.259"

// maxHeadPeek bounds the read of a sub-agent file's head for its version
// and start time.
const maxHeadPeek = 64 << 10

// agentContext is the per-file state of a sub-agent file being planned.
type agentContext struct {
	// path is the file's name as given; start its first recorded time;
	// old that its client version does not write the message itself.
	path, start string
	old         bool
	// requests counts the file's assistant requests planned; results says
	// a tool result followed the first; done that the message was placed
	// (or found empty).
	requests int
	results  bool
	done     bool
}

// newAgentContext reads the head of a sub-agent file for its version and
// start time.
func newAgentContext(path string) agentContext {
	c := agentContext{path: path}
	head, err := input.ReadHead(path, maxHeadPeek)
	if err != nil {
		return c
	}
	version := input.FirstString(head, "version", nil)
	c.start = input.FirstString(head, "timestamp", nil)
	c.old = version != "" && versionBefore(version, writesSubagentContext)
	return c
}

// due says the message belongs before the request about to be planned (or
// at the file's end): the file's first request had tool results and
// nothing was placed yet.
func (c *agentContext) due() bool {
	return c.old && !c.done && c.requests == 1 && c.results
}

// versionBefore reports whether dotted version v is older than than; a
// part that is no number ends the comparison there ("2.1.222-beta" is
// 2.1.222).
func versionBefore(v, than string) bool {
	a, b := strings.Split(v, "."), strings.Split(than, ".")
	for i := range max(len(a), len(b)) {
		x, y := versionPart(a, i), versionPart(b, i)
		if x != y {
			return x < y
		}
	}
	return false
}

func versionPart(parts []string, i int) int {
	if i >= len(parts) {
		return 0
	}
	s := parts[i]
	if end := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }); end >= 0 {
		s = s[:end]
	}
	n, _ := strconv.Atoi(s)
	return n
}

// parentAnnouncements are a parent session's agent_listing_delta and
// mcp_instructions_delta records, in file order, each with its time.
type parentAnnouncements struct {
	at     []string
	deltas []attachment
}

// readAnnouncements reads them from parent, decoding only the lines that
// name one; an unreadable parent has none.
func readAnnouncements(parent string) *parentAnnouncements {
	out := &parentAnnouncements{}
	input.EachLineWith(parent, []string{`"agent_listing_delta"`, `"mcp_instructions_delta"`}, func(line []byte) {
		var r struct {
			Type        string     `json:"type"`
			Timestamp   string     `json:"timestamp"`
			IsSidechain bool       `json:"isSidechain"`
			Attachment  attachment `json:"attachment"`
		}
		if input.Unmarshal(line, &r) != nil || r.Type != "attachment" || r.IsSidechain {
			return
		}
		if t := r.Attachment.Type; t == "agent_listing_delta" || t == "mcp_instructions_delta" {
			out.at = append(out.at, r.Timestamp)
			out.deltas = append(out.deltas, r.Attachment)
		}
	})
	return out
}

// contextAt is the message a sub-agent started at start (an RFC 3339 time;
// "" for any) gets: the agent types the parent had announced by then, when
// withAgents, and the MCP servers' instructions, each in the form of a
// first announcement, joined as Claude Code joins one system message's
// parts.
func (a *parentAnnouncements) contextAt(start string, withAgents func(lines map[string]string) bool) string {
	var types, servers []string
	lines, blocks := map[string]string{}, map[string]string{}
	for k, d := range a.deltas {
		if start != "" && a.at[k] > start {
			continue // RFC 3339 times of one writer compare as strings
		}
		switch d.Type {
		case "agent_listing_delta":
			if d.IsInitial {
				types, lines = nil, map[string]string{}
			}
			types, lines = announce(types, lines, d.AddedTypes, d.AddedLines, d.RemovedTypes)
		case "mcp_instructions_delta":
			servers, blocks = announce(servers, blocks, d.AddedNames, d.AddedBlocks, d.RemovedNames)
		}
	}
	var parts []string
	if len(types) > 0 && withAgents(lines) {
		listing := attachment{Type: "agent_listing_delta", IsInitial: true, AddedTypes: types}
		for _, t := range types {
			listing.AddedLines = append(listing.AddedLines, lines[t])
		}
		parts = append(parts, listing.agentTypes())
	}
	if len(servers) > 0 {
		mcp := attachment{Type: "mcp_instructions_delta", AddedNames: servers}
		for _, s := range servers {
			mcp.AddedBlocks = append(mcp.AddedBlocks, blocks[s])
		}
		parts = append(parts, mcp.mcpInstructions())
	}
	return strings.Join(parts, "\n\n")
}

// announce applies one delta to an ordered set of names and their texts:
// added names (with their texts, paired by position) join or replace,
// removed ones leave.
func announce(names []string, texts map[string]string, added, addedTexts, removed []string) ([]string, map[string]string) {
	for i, n := range added {
		if i >= len(addedTexts) {
			break
		}
		if _, ok := texts[n]; !ok {
			names = append(names, n)
		}
		texts[n] = addedTexts[i]
	}
	for _, n := range removed {
		if _, ok := texts[n]; ok {
			delete(texts, n)
			names = deleteName(names, n)
		}
	}
	return names, texts
}

func deleteName(names []string, n string) []string {
	out := names[:0]
	for _, x := range names {
		if x != n {
			out = append(out, x)
		}
	}
	return out
}

// hasAgentTool says whether a sub-agent of agentType can call the Agent
// tool, from its line in the agent types' listing ("- Explore: … (Tools:
// All tools except Agent, …)"; "(Tools: *)"); a type the listing does not
// describe (a workflow's agent, an unknown kind) is taken to have it, as
// the general-purpose agent does.
func hasAgentTool(agentType string, lines map[string]string) bool {
	line, ok := lines[agentType]
	if !ok {
		return true
	}
	at := strings.LastIndex(line, "(Tools: ")
	if at < 0 {
		return true
	}
	tools := strings.TrimSuffix(line[at+len("(Tools: "):], ")")
	if tools == "*" {
		return true
	}
	except, negated := strings.CutPrefix(tools, "All tools except ")
	listed := false
	for _, t := range strings.Split(except, ",") {
		listed = listed || strings.TrimSpace(t) == "Agent"
	}
	return listed != negated
}

// placeAgentContext places the parent's message after pred, a node of the
// sub-agent file being planned, and returns the node the file's chain
// continues from: the new node, or pred when the parent announced nothing
// this sub-agent is sent. The node takes pred's line for its time, so it
// is the same node whether the file ended before the second request or
// went on to it (a cache session of a growing file appends after it).
func (p *planner) placeAgentContext(pred int32) int32 {
	p.actx.done = true
	text := p.agentContextText()
	if text == "" || pred < 0 {
		return pred
	}
	n := &pnode{id: p.freshID(p.idOf(pred) + "/parent-context"), kind: kindAgentContext, sidechain: true,
		pred: pred, caller: p.node(pred).caller, first: p.node(pred).first, group: none, tail: none}
	i := p.add(n)
	if p.contextText == nil {
		p.contextText = map[int32]string{}
	}
	p.contextText[i] = text
	p.sink.Count("parent context", transcript.OutcomeImported, "rebuilt: sent in a sub-agent's second request, not written before 2.1.259")
	return i
}

// agentContextText is the message the sub-agent file being planned gets
// from its parent session (contextAt), "" when it has none to read.
func (p *planner) agentContextText() string {
	parent, ok := SubagentParent(p.actx.path)
	if !ok {
		return ""
	}
	a, ok := p.announced[parent]
	if !ok {
		a = readAnnouncements(parent)
		if p.announced == nil {
			p.announced = map[string]*parentAnnouncements{}
		}
		p.announced[parent] = a
	}
	if len(a.deltas) == 0 {
		return ""
	}
	agentType := ""
	if kind, ok := p.kinds.Of(p.actx.path); ok {
		agentType, _, _ = strings.Cut(kind, "/")
	}
	return a.contextAt(p.actx.start, func(lines map[string]string) bool { return hasAgentTool(agentType, lines) })
}

// chainEnd is the last node of the file being planned, after its group
// moved (none when it planned none).
func (p *planner) chainEnd() int32 {
	last := int32(len(p.nodes) - 1)
	if last < 0 || !p.node(last).sidechain {
		return none
	}
	if moved, ok := p.moved[last]; ok {
		return moved
	}
	return last
}

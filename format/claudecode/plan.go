package claudecode

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/ctxfold/ctxfold/transcript"
)

// The first pass reads every line once, keeps its structure only and
// decides the nodes: which lines make each node, its predecessor and
// caller. The second pass (emit.go) reads each node's lines again by
// offset and builds it.

const none = int32(-1)

// planner builds one conversation.
type planner struct {
	ctx   context.Context
	sink  transcript.ImportSink
	opts  Options
	files []string
	open  []*os.File
	names map[string]string // spooled copy → the name passed
	nodes []*pnode
	// uuidNode maps a line's uuid to the node it became or was merged
	// into; skipParent maps a skipped line's uuid to its parentUuid, so
	// its children hang from the nearest imported ancestor.
	// Both are keyed by a keyed hash of the uuid (SipHash, siphash.go: a
	// crafted input cannot aim for collisions), so a long session's index
	// stays small. A skipParent value of 0 is a root.
	hkey       hashKey
	uuidNode   *keyTable[int32]
	skipParent *keyTable[key]
	ids        *keyTable[struct{}]
	msgs       *keyTable[int32] // message.id+requestId → assistant node
	toolNode   map[string]int32 // Task/Agent tool_use id → assistant node
	prompts    map[string]string
	promptUsed map[string]bool
	agentTool  map[string]string // agentId → Task/Agent tool_use id
	agentSeen  map[string]bool   // agentIds whose sidechain lines were read (report.go)
	boundaries map[string]int32  // compact_boundary uuid → summary node
	lastBound  int32
	// covered is the chain the last boundary covers (planBoundary): the
	// next one's chain usually extends it, and its walk stops there.
	covered  chainRun
	lastTask string
	head     int32
	model    string
	// sys is the system node made from the first api-request-shape, or
	// none; grp the main-chain nodes planned since the last assistant
	// node, reordered into the order Claude Code sends them when the next
	// assistant node closes the group (see closeGroup).
	sys int32
	// fileSys is a sub-agent file's own system node (its first shape).
	fileSys   int32
	grp       []int32
	grpBase   int32
	grpBroken bool
	moved     map[int32]int32 // a closed group's old last node → its new one
	// blobs are the api-request-blob lines by hash, with their role;
	// sent the groups whose user message a request's tail records, so
	// emit can use the text the client really sent (sentText).
	blobs    map[string]blobRef
	sent     []sentGroup
	sentText map[int32]string
	// sideModel is the model of the sidechain assistant lines: the
	// session's model when the conversation has no session file.
	sideModel string
	// per file
	fileIdx    int32
	fileCaller int32
	agentFile  bool
	warnedLink bool
	lines      int // non-blank lines read from the current file
	// res, in a resumable import, tracks the resume points (resume.go);
	// emitFrom is how many nodes (the first in emit order) the sink
	// already holds.
	res *resumer
	// held are the lines waiting for a parent written after them
	// (planfile.go).
	held     []heldLine
	emitFrom int
	// base is the saved state the planner was restored from (nil: none);
	// its columns are read only, and shared with other planners.
	base *snap
	// lastAsst is the last assistant node planned (none before one).
	lastAsst int32
	// actx is the sub-agent file being planned's state for the message
	// its second request carries from the parent (agentcontext.go);
	// announced the parents' announcements read so far, kinds their
	// sub-agents' kinds; contextText the rebuilt message of each node
	// placed for it. A sub-agent file is never a resume point, so none of
	// this is saved.
	actx        agentContext
	announced   map[string]*parentAnnouncements
	kinds       SubagentKinds
	contextText map[int32]string
}

type blobRef struct {
	ref  lineRef
	role string
}

// sentGroup pairs a group's nodes, in sending order, with the blob of the
// user message the request built from them.
type sentGroup struct {
	nodes []int32
	blob  lineRef
}

func newPlanner(ctx context.Context, sink transcript.ImportSink, opts Options, names map[string]string) *planner {
	return &planner{ctx: ctx, sink: sink, opts: opts, names: names,
		hkey: newHashKey(), uuidNode: newKeyTable[int32](), skipParent: newKeyTable[key](), ids: newKeyTable[struct{}](),
		msgs: newKeyTable[int32](), toolNode: map[string]int32{}, prompts: map[string]string{},
		promptUsed: map[string]bool{}, agentTool: map[string]string{}, boundaries: map[string]int32{},
		lastBound: none, head: none, sys: none, lastAsst: none}
}

func (p *planner) close() {
	for _, f := range p.open {
		f.Close()
	}
}

// run plans the session file, then its sub-agent files (their callers are
// in the session), then emits every node.
func (p *planner) run(c *conversation) error {
	if err := p.planAll(c); err != nil {
		return err
	}
	return p.finish(c)
}

// planAll plans the session file and its sub-agent files.
func (p *planner) planAll(c *conversation) error {
	if c.main != "" {
		if err := p.planFile(c.main, false); err != nil {
			return err
		}
		if p.lines == 0 {
			return p.emptyFile(c.main)
		}
	}
	for _, a := range c.agents {
		if err := p.planFile(a, true); err != nil {
			return err
		}
		// A sub-agent file given alone is the conversation: empty, it
		// imports nothing (an empty one found beside a session is harmless).
		if c.main == "" && p.lines == 0 && len(c.agents) == 1 {
			return p.emptyFile(a)
		}
	}
	return nil
}

// finish completes the plan once every file is read and emits the nodes.
func (p *planner) finish(c *conversation) error {
	p.closeGroup()
	p.reportAgentFiles(c)
	if c.main == "" && p.model == "" {
		// Claude Code 2.1 keeps each sub-agent in a file of its own; read
		// alone, its assistant lines are the only record of the model.
		p.model = p.sideModel
	}
	if p.head == none && len(p.nodes) > 0 {
		for i := len(p.nodes) - 1; i >= 0; i-- {
			if k := p.node(int32(i)).kind; k != kindSummary && k != kindSystem {
				p.head = int32(i)
				break
			}
		}
		// The last node planned may have moved up its group (a sub-agent
		// file cut after its prompt's attachments: closeGroup); the
		// chain now ends at the group's new last node.
		if last, ok := p.moved[p.head]; ok {
			p.head = last
		}
	}
	return p.emit()
}

func (p *planner) errorf(ref lineRef, format string, args ...any) error {
	return &transcript.ParseError{File: p.files[ref.file], Line: int(ref.line), Msg: fmt.Sprintf(format, args...)}
}

func (p *planner) warnf(ref lineRef, format string, args ...any) {
	p.sink.Warn(p.files[ref.file], int(ref.line), fmt.Sprintf(format, args...))
}

// planLine classifies one line (decoded by lineItem.decode), counts it,
// and plans its node.
func (p *planner) planLine(it *lineItem, ref lineRef) error {
	if it.blank {
		p.sink.Count("blank line", transcript.OutcomeSkipped, "empty line")
		return nil
	}
	p.lines++
	r, body := &it.rec, it.body
	if err := it.decErr; err != nil {
		if !it.complete {
			// A session still being written ends in a cut line.
			p.warnf(ref, "cut last line ignored (the session was still being written)")
			p.sink.Count("cut line", transcript.OutcomeSkipped, "incomplete last line")
			return nil
		}
		return p.errorf(ref, "expected a Claude Code record (a JSON object): %s", jsonErrorText(err))
	}
	if pos := it.badUTF8; pos > 0 {
		// Raw JSON values (tool arguments) are kept as they are, and the
		// store holds only UTF-8 (docs/FORMAT.md §7).
		return p.errorf(ref, "%s", transcript.InvalidUTF8Msg(pos))
	}
	typ := r.Type
	if typ == "" {
		typ = "(no type)"
	}
	if r.UUID != "" && p.seen(r.UUID) {
		p.sink.Count(recordName(r), transcript.OutcomeSkipped, "repeated uuid (resumed session)")
		return nil
	}
	switch {
	case r.Type == "system" && r.Subtype == "compact_boundary":
		return p.planBoundary(r, ref)
	case r.Type == "user" && r.IsCompactSummary:
		return p.planCompactSummary(r, body, ref)
	case r.Type == "user" || r.Type == "assistant":
		return p.planMessage(r, ref)
	case r.Type == "attachment" && (hasRendered(r.Rendered) || r.Attachment.renders):
		return p.planAttachment(r, ref)
	case r.Type == "api-request-shape" && (!p.agentFile && p.sys == none || p.agentFile && p.fileSys == none):
		return p.planShape(r, ref)
	case r.Type == "api-request-blob" && r.Hash != "" && r.Message != nil:
		if p.blobs == nil {
			p.blobs = map[string]blobRef{}
		}
		if _, ok := p.blobs[r.Hash]; !ok {
			p.blobs[r.Hash] = blobRef{ref, r.Message.Role}
		}
	case r.Type == "api-request":
		p.noteRequest(r)
	case r.Type == "system" && r.Subtype == "local_command" && !r.IsSidechain:
		// Not sent to the model, but "/model"'s output names the model
		// of the requests after it (2.1.3xx: a system record).
		p.noteSwitch(rawString(r.Content))
	}
	p.skip(r)
	return nil
}

func recordName(r *record) string {
	switch {
	case r.Type == "system" && r.Subtype != "":
		return "system/" + r.Subtype
	case r.Type == "":
		return "(no type)"
	}
	return r.Type
}

// key is a keyed 64-bit hash of an id; 0 stands for no id.
type key uint64

func (p *planner) key(s string) key {
	if s == "" {
		return 0
	}
	h := p.hkey.sum64(s)
	if h == 0 {
		h = 1
	}
	return key(h)
}

func (p *planner) seen(uuid string) bool {
	k := p.key(uuid)
	return p.uuidNode.has(k) || p.skipParent.has(k)
}

// skip counts a line that is not conversation, keeping its uuid
// resolvable, and learns sub-agent links from progress lines.
func (p *planner) skip(r *record) {
	if r.UUID != "" {
		p.skipParent.put(p.key(r.UUID), p.key(r.ParentUUID))
	}
	reason := "not part of the conversation"
	switch r.Type {
	case "progress":
		var d progressData
		if r.Data != nil {
			d = *r.Data
		}
		reason = "progress event (" + orUnknown(d.Type) + ")"
		if d.Type == "agent_progress" {
			reason = "copy of a sub-agent message (imported from its agent file)"
			if d.AgentID != "" && r.ParentToolUseID != "" {
				if _, ok := p.agentTool[d.AgentID]; !ok {
					p.agentTool[d.AgentID] = r.ParentToolUseID
				}
			}
		}
	case "system":
		reason = "system event (not sent to the model)"
	case "file-history-snapshot":
		reason = "file backup bookkeeping"
	case "queue-operation":
		reason = "input queue bookkeeping"
	case "summary":
		reason = "session title"
	case "attachment":
		reason = "attachment with no rendered content (not sent to the model)"
	case "api-request-shape":
		reason = "later request shape (the first is the system node)"
	case "api-request-blob":
		reason = "copy of a request message (imported from the conversation records)"
	case "api-request":
		reason = "request reconstruction (its messages are the conversation records)"
	}
	p.sink.Count(recordName(r), transcript.OutcomeSkipped, reason)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// resolve returns the node a uuid stands for: itself, the message it was
// merged into, or the nearest imported ancestor of a skipped line. ok is
// false when the chain ends at a uuid never seen.
func (p *planner) resolve(uuid string) (int32, bool) {
	var path []key
	cur := p.key(uuid)
	result, ok := none, true
	for steps := 0; cur != 0; steps++ {
		if n, found := p.uuidNode.get(cur); found {
			result = n
			break
		}
		par, found := p.skipParent.get(cur)
		if !found || steps > 1<<20 {
			result, ok = none, false
			break
		}
		path = append(path, cur)
		cur = par
	}
	if ok {
		// Path compression: long progress chains resolve once.
		for _, u := range path {
			if result >= 0 {
				p.uuidNode.put(u, result)
				p.skipParent.remove(u)
			} else {
				p.skipParent.put(u, 0)
			}
		}
	}
	return result, ok
}

// nodeID makes a uuid a node id the store accepts: never empty, never in
// the summary id space (docs/FORMAT.md §4), never used twice.
func (p *planner) nodeID(uuid string) string {
	// A uuid is unique once repeated uuids are skipped; only ids this
	// importer makes up (renamed ones, summaries) are remembered in ids.
	if !strings.HasPrefix(uuid, transcript.SummaryIDPrefix) && !p.ids.has(p.key(uuid)) {
		return uuid
	}
	return p.freshID("x" + uuid)
}

// freshID returns id, or id with '_' appended until it names no line and
// no made-up id.
func (p *planner) freshID(id string) string {
	for p.ids.has(p.key(id)) || p.seen(id) {
		id += "_"
	}
	p.ids.put(p.key(id), struct{}{})
	return id
}

func (p *planner) add(n *pnode) int32 {
	p.nodes = append(p.nodes, n)
	return int32(len(p.nodes) - 1)
}

// planMessage plans a user or assistant line.
func (p *planner) planMessage(r *record, ref lineRef) error {
	name := r.Type
	if r.UUID == "" {
		return p.errorf(ref, "%s line has no uuid", name)
	}
	if r.badMessage != "" {
		return p.errorf(ref, "%s line %q: expected a message object: %s", name, r.UUID, r.badMessage)
	}
	if r.Message == nil {
		return p.errorf(ref, "%s line %q: expected a message object", name, r.UUID)
	}
	m := *r.Message
	if !r.scanned {
		r.scanContent()
	}
	text, blocks, err := r.scan.text, r.scan.blocks, r.scan.err
	if err != nil {
		return p.errorf(ref, "%s line %q: %s", name, r.UUID, jsonErrorText(err))
	}
	sidechain := r.IsSidechain || p.agentFile
	p.sawAgent(r.AgentID, sidechain)

	if r.Type == "assistant" {
		return p.planAssistant(r, ref, m, text, blocks, sidechain)
	}
	return p.planUser(r, ref, text, blocks, sidechain)
}

// planAssistant plans an assistant line: a new node, or one more line of
// an API message streamed as several lines.
func (p *planner) planAssistant(r *record, ref lineRef, m message, text string, blocks []scanBlock, sidechain bool) error {
	name := r.Type
	if m.Model != "" && m.Model != "<synthetic>" {
		if sidechain {
			p.sideModel = m.Model
		} else {
			p.model = m.Model
		}
	}
	var mk key
	if m.ID != "" {
		mk = p.key(fmt.Sprintf("%d\x00%s\x00%s", p.fileIdx, m.ID, r.RequestID))
	}
	if i, ok := p.msgs.get(mk); ok && mk != 0 {
		// One API message streamed as several lines: merge.
		n := p.node(i)
		p.touch(i)
		if n.more == nil {
			n.more = new([]lineRef)
		}
		*n.more = append(*n.more, ref)
		p.uuidNode.put(p.key(r.UUID), i)
		p.addCalls(n, i, blocks)
		p.sink.Count(name, transcript.OutcomeMerged, "streamed part of one API message")
		return nil
	}
	pred, caller, err := p.placement(r, ref, text, blocks, sidechain, false)
	if err != nil {
		return err
	}
	if p.grouped(sidechain) {
		pred = p.closeGroupAt(pred)
	}
	if p.agentFile {
		if p.actx.due() {
			pred = p.placeAgentContext(pred)
		}
		p.actx.requests++
	}
	n := &pnode{id: p.nodeID(r.UUID), kind: kindAssistant, sidechain: sidechain,
		pred: pred, caller: caller, first: ref, tail: none}
	i := p.add(n)
	n.group, n.tail = i, i
	p.uuidNode.put(p.key(r.UUID), i)
	if mk != 0 {
		p.msgs.put(mk, i)
	}
	p.addCalls(n, i, blocks)
	if !sidechain {
		p.head = i
	}
	p.lastAsst = i
	p.sink.Count(name, transcript.OutcomeImported, "")
	return nil
}

// planUser plans a user line; its tool_result blocks answer the open
// calls on its chain.
func (p *planner) planUser(r *record, ref lineRef, text string, blocks []scanBlock, sidechain bool) error {
	name := r.Type
	var resultIDs []string
	for _, b := range blocks {
		if b.Type == "tool_result" {
			resultIDs = append(resultIDs, b.ToolUseID)
		}
		if b.Type == "text" && text == "" {
			text = b.Text
		}
	}
	pred, caller, err := p.placement(r, ref, text, blocks, sidechain, len(resultIDs) > 0)
	if err != nil {
		return err
	}
	n := &pnode{id: p.nodeID(r.UUID), kind: kindUser, sidechain: sidechain,
		pred: pred, caller: caller, first: ref, group: none, tail: none}
	if len(resultIDs) > 0 {
		group, open := p.openCalls(pred)
		var rejected []string
		for _, id := range resultIDs {
			if open[id] {
				n.results = append(n.results, id)
				delete(open, id)
			} else {
				rejected = append(rejected, id)
			}
		}
		if len(rejected) > 0 {
			p.warnf(ref, "tool result for %s has no open tool call on its chain; kept as text", quoteList(rejected))
		}
		if len(n.results) > 0 {
			n.group = group
			if g := p.node(group); g.tail == pred {
				p.touch(group)
				g.tail = int32(len(p.nodes))
			}
		}
	} else if r.SourceToolUseID != "" {
		p.joinResults(n, r.SourceToolUseID)
	}
	i := p.add(n)
	p.uuidNode.put(p.key(r.UUID), i)
	if p.agentFile && len(n.results) > 0 && p.actx.requests == 1 {
		p.actx.results = true
	}
	if !sidechain {
		p.head = i
		p.noteSwitch(text) // 2.1.1xx–2.1.2xx: a user line
	}
	if p.grouped(sidechain) {
		p.addToGroup(i)
	}
	p.sink.Count(name, transcript.OutcomeImported, "")
	p.learnAgentLink(r, blocks)
	return nil
}

// joinResults makes n, a message that came with call (a skill's text after
// its Skill result), a member of that call's results chain when it
// continues it: the results of the message's other calls, written after
// it, then follow it rather than branch off, and the turn's order sends
// it after them (closeGroup), as Claude Code does (recorded:
// testdata/interop/claude-code/*/skill-parallel).
func (p *planner) joinResults(n *pnode, call string) {
	if n.pred < 0 {
		return
	}
	group := p.node(n.pred).group
	if group < 0 {
		return
	}
	if g := p.node(group); g.tail == n.pred && contains(g.calls, call) {
		p.touch(group)
		n.group = group
		g.tail = int32(len(p.nodes))
	}
}

func hasRendered(rs []rendered) bool {
	for _, r := range rs {
		if r.Content != "" {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func quoteList(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = fmt.Sprintf("%q", id)
	}
	return strings.Join(q, ", ")
}

// jsonErrorText is a one-line description of a decoding error.
func jsonErrorText(err error) string {
	switch e := err.(type) {
	case *json.SyntaxError:
		return fmt.Sprintf("invalid JSON: %s (byte %d)", e.Error(), e.Offset)
	case *json.UnmarshalTypeError:
		if e.Field != "" {
			return fmt.Sprintf("field %q: got a JSON %s, expected %s", e.Field, e.Value, e.Type)
		}
		return fmt.Sprintf("got a JSON %s, expected %s", e.Value, e.Type)
	}
	return strings.ReplaceAll(err.Error(), "\n", " ")
}

package claudecode

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ctxfold/ctxfold/transcript"
)

// The first pass reads every line once, keeps its structure only and
// decides the nodes: which lines make each node, its predecessor and
// caller. The second pass (emit.go) reads each node's lines again by
// offset and builds it.

const none = int32(-1)

// lineRef locates one input line.
type lineRef struct {
	file int32
	line int32
	off  int64
	n    int32
}

const (
	kindUser = iota
	kindAssistant
	kindSummary
	// kindSystem is the system prompt and tool definitions of the
	// session's first api-request-shape record.
	kindSystem
	// kindAttachUser and kindAttachSystem are attachment records whose
	// rendered content reached the model, as part of a user message or as
	// a system-role message.
	kindAttachUser
	kindAttachSystem
)

// pnode is a planned node.
type pnode struct {
	id        string
	kind      uint8
	sidechain bool
	pred      int32
	caller    int32
	// first is the node's first line; more the lines merged into it (nil
	// for the usual one-line node, so it costs one pointer).
	first lineRef
	more  *[]lineRef
	// calls are the tool_use ids of an assistant node; results the call
	// ids of the tool_result blocks the store will accept (any other
	// result block is emitted as text).
	calls   []string
	results []string
	// group is the assistant node whose calls this node answers (itself
	// for an assistant node); tail, on an assistant node, the last node
	// of its results chain.
	group int32
	tail  int32
	sum   *summaryInfo
}

// role is the node's role.
func (n *pnode) role() transcript.Role {
	switch n.kind {
	case kindAssistant:
		return transcript.RoleAssistant
	case kindSummary:
		return transcript.SummaryRole
	case kindSystem, kindAttachSystem:
		return transcript.RoleSystem
	}
	return transcript.RoleUser
}

// lines returns every line of the node, first first.
func (n *pnode) lines() []lineRef {
	if n.more == nil {
		return []lineRef{n.first}
	}
	return append([]lineRef{n.first}, *n.more...)
}

// summaryInfo is what a summary node adds: the last node it covers (it
// covers that node's whole spine, computed again when emitted, so many
// compactions of a long session cost no memory), and the line of its
// isCompactSummary text (line 0 when none came).
type summaryInfo struct {
	last int32
	cont int32 // the node later turns continue from (last, or a kept message after it)
	text lineRef
}

// onSpine reports whether node n is on the chain ending at last.
func (p *planner) onSpine(n, last int32) bool {
	for cur := last; cur >= 0; cur = p.nodes[cur].pred {
		if cur == n {
			return true
		}
	}
	return false
}

// spine returns the chain from a root to last, root first.
func (p *planner) spine(last int32) []int32 {
	var out []int32
	for cur := last; cur >= 0; cur = p.nodes[cur].pred {
		out = append(out, cur)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// record is the part of a Claude Code line the first pass reads.
type record struct {
	Type              string `json:"type"`
	Subtype           string `json:"subtype"`
	UUID              string `json:"uuid"`
	ParentUUID        string `json:"parentUuid"`
	LogicalParentUUID string `json:"logicalParentUuid"`
	IsSidechain       bool   `json:"isSidechain"`
	IsCompactSummary  bool   `json:"isCompactSummary"`
	AgentID           string `json:"agentId"`
	RequestID         string `json:"requestId"`
	ParentToolUseID   string `json:"parentToolUseID"`
	// Typed rather than raw, so a large message or progress payload is
	// decoded in the same pass that validates the line, never copied.
	Message *message `json:"message"`
	// Rendered is what an attachment record sent to the model;
	// RenderedRole says how (Claude Code 2.1.3xx).
	Rendered        []rendered       `json:"rendered"`
	RenderedRole    string           `json:"renderedRole"`
	CompactMetadata *compactMetadata `json:"compactMetadata"`
	// Hash and Tail link api-request-blob and api-request records: a
	// request's messages end with the blobs its tail names.
	Hash          string        `json:"hash"`
	Tail          []string      `json:"tail"`
	ToolUseResult *agentRef     `json:"toolUseResult"`
	Data          *progressData `json:"data"`
	// badMessage says why message could not be read (an error only for a
	// user or assistant line).
	badMessage string
}

// rendered is one piece of an attachment's rendered content: a string,
// or text blocks (their texts joined by a newline).
type rendered struct {
	Content string
}

func (r *rendered) UnmarshalJSON(b []byte) error {
	var v struct {
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	text, blocks, _, err := decodeContent[scanBlock](v.Content)
	if err != nil {
		return err
	}
	parts := []string{}
	if text != "" {
		parts = append(parts, text)
	}
	for _, b := range blocks {
		if b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	r.Content = strings.Join(parts, "\n")
	return nil
}

// compactMetadata is the part of a compact_boundary's metadata the plan
// reads: the messages Claude Code kept verbatim after the summary.
type compactMetadata struct {
	PreservedMessages *struct {
		UUIDs []string `json:"uuids"`
	} `json:"preservedMessages"`
}

// agentRef is the part of a Task result's toolUseResult naming its agent.
type agentRef struct {
	AgentID string `json:"agentId"`
}

// progressData is the part of a progress line's data the import reads.
type progressData struct {
	Type    string `json:"type"`
	AgentID string `json:"agentId"`
}

// decodeRecord decodes a line into v (a *record or *fullRecord). A data or
// toolUseResult of an unexpected shape is ignored (only a few of their
// fields are read, as hints); a message of the wrong shape is an error
// only where a message is needed, so it is noted in bad.
func decodeRecord(body []byte, v any, bad *string) error {
	err := json.Unmarshal(body, v)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		// Through fullRecord the path starts with the embedded "record.".
		top, _, _ := strings.Cut(strings.TrimPrefix(te.Field, "record."), ".")
		switch top {
		case "data", "toolUseResult", "rendered", "renderedRole", "compactMetadata", "hash", "tail":
			// Read only as hints of other record types; an attachment
			// whose rendered content cannot be read renders nothing and is
			// counted as skipped.
			return nil
		case "message":
			*bad = jsonErrorText(err)
			return nil
		}
	}
	return err
}

// message is the API message a user or assistant line carries.
type message struct {
	ID         string          `json:"id"`
	Role       string          `json:"role"`
	Model      string          `json:"model"`
	Content    json.RawMessage `json:"content"`
	Usage      json.RawMessage `json:"usage"`
	StopReason string          `json:"stop_reason"`
}

// block is one content block of a message.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      json.RawMessage `json:"data"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	// Content of a tool_result: decoded as any, so a large string is read
	// in the block's own pass instead of being validated again.
	Content any     `json:"content"`
	IsError bool    `json:"is_error"`
	Source  *source `json:"source"`
}

type source struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
	URL       string `json:"url"`
	FileID    string `json:"file_id"`
}

// scanBlock is what the first pass reads of a content block: a tool
// result's content, thinking and image data are skipped, not copied.
type scanBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
}

// decodeContent decodes a message's content: a string, or an array of
// blocks of type B.
func decodeContent[B any](raw json.RawMessage) (text string, blocks []B, isBlocks bool, err error) {
	raw = trimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return "", nil, false, nil
	case raw[0] == '"':
		err = json.Unmarshal(raw, &text)
		return text, nil, false, err
	case raw[0] == '[':
		err = json.Unmarshal(raw, &blocks)
		return "", blocks, true, err
	}
	return "", nil, false, fmt.Errorf("message.content: expected a string or an array of blocks")
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// promptKey is a short key for matching a sidechain's first prompt with
// the Task call that sent it.
func promptKey(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(s))
	return string(sum[:16])
}

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
	// Both are keyed by a seeded hash of the uuid (maphash: a crafted
	// input cannot aim for collisions), so a long session's index stays
	// small. A skipParent value of 0 is a root.
	seed       maphash.Seed
	uuidNode   map[key]int32
	skipParent map[key]key
	ids        map[key]bool
	msgs       map[key]int32    // message.id+requestId → assistant node
	toolNode   map[string]int32 // Task/Agent tool_use id → assistant node
	prompts    map[string]string
	promptUsed map[string]bool
	agentTool  map[string]string // agentId → Task/Agent tool_use id
	agentSeen  map[string]bool   // agentIds whose sidechain lines were read (report.go)
	boundaries map[string]int32  // compact_boundary uuid → summary node
	lastBound  int32
	lastTask   string
	head       int32
	model      string
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
		seed: maphash.MakeSeed(), uuidNode: map[key]int32{}, skipParent: map[key]key{}, ids: map[key]bool{},
		msgs: map[key]int32{}, toolNode: map[string]int32{}, prompts: map[string]string{},
		promptUsed: map[string]bool{}, agentTool: map[string]string{}, boundaries: map[string]int32{},
		lastBound: none, head: none, sys: none}
}

func (p *planner) close() {
	for _, f := range p.open {
		f.Close()
	}
}

// run plans the session file, then its sub-agent files (their callers are
// in the session), then emits every node.
func (p *planner) run(c *conversation) error {
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
	p.closeGroup()
	p.reportAgentFiles(c)
	if c.main == "" && p.model == "" {
		// Claude Code 2.1 keeps each sub-agent in a file of its own; read
		// alone, its assistant lines are the only record of the model.
		p.model = p.sideModel
	}
	if p.head == none && len(p.nodes) > 0 {
		for i := len(p.nodes) - 1; i >= 0; i-- {
			if k := p.nodes[i].kind; k != kindSummary && k != kindSystem {
				p.head = int32(i)
				break
			}
		}
	}
	return p.emit()
}

// openFile opens path (a regular file: Import spools anything else) for
// reading by offset.
func (p *planner) openFile(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &transcript.ParseError{File: p.display(path), Msg: err.Error()}
	}
	return f, nil
}

// display is the name errors and warnings give a file: the name the
// caller passed, not the temporary copy of a pipe.
func (p *planner) display(path string) string {
	if name, ok := p.names[path]; ok {
		return name
	}
	return path
}

func (p *planner) planFile(path string, agent bool) error {
	f, err := p.openFile(path)
	if err != nil {
		return err
	}
	p.files = append(p.files, p.display(path))
	p.open = append(p.open, f)
	p.fileIdx = int32(len(p.files) - 1)
	p.agentFile = agent
	p.fileCaller = none
	p.fileSys = none
	p.warnedLink = false
	p.lines = 0
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return &transcript.ParseError{File: path, Msg: err.Error()}
	}
	if agent {
		id := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "agent-"), ".jsonl")
		if tool, ok := p.agentTool[id]; ok {
			if n, ok := p.toolNode[tool]; ok {
				p.fileCaller = n
			}
		}
	}
	lr := newLineReader(f, p.display(path), p.opts.max())
	for {
		body, off, complete, err := lr.next()
		if err == io.EOF {
			// A group never spans files: a sub-agent file is a chain of
			// its own.
			p.closeGroup()
			return nil
		}
		if err != nil {
			return err
		}
		if lr.line%1024 == 0 {
			if err := p.ctx.Err(); err != nil {
				return err
			}
		}
		ref := lineRef{file: p.fileIdx, line: int32(lr.line), off: off, n: int32(len(body))}
		if err := p.planLine(body, ref, complete); err != nil {
			return err
		}
	}
}

// emptyFile is the error for a file with no line: like every other
// importer, an empty file is refused rather than imported as an empty
// session.
func (p *planner) emptyFile(path string) error {
	return &transcript.ParseError{File: p.display(path), Line: 1, Msg: "empty file; expected a Claude Code session"}
}

func (p *planner) errorf(ref lineRef, format string, args ...any) error {
	return &transcript.ParseError{File: p.files[ref.file], Line: int(ref.line), Msg: fmt.Sprintf(format, args...)}
}

func (p *planner) warnf(ref lineRef, format string, args ...any) {
	p.sink.Warn(p.files[ref.file], int(ref.line), fmt.Sprintf(format, args...))
}

// planLine classifies one line, counts it, and plans its node.
func (p *planner) planLine(body []byte, ref lineRef, complete bool) error {
	if len(trimSpace(body)) == 0 {
		p.sink.Count("blank line", transcript.OutcomeSkipped, "empty line")
		return nil
	}
	p.lines++
	var r record
	if err := decodeRecord(body, &r, &r.badMessage); err != nil {
		if !complete {
			// A session still being written ends in a cut line.
			p.warnf(ref, "cut last line ignored (the session was still being written)")
			p.sink.Count("cut line", transcript.OutcomeSkipped, "incomplete last line")
			return nil
		}
		return p.errorf(ref, "expected a Claude Code record (a JSON object): %s", jsonErrorText(err))
	}
	if pos := transcript.FirstInvalidUTF8(body); pos > 0 {
		// Raw JSON values (tool arguments) are kept as they are, and the
		// store holds only UTF-8 (docs/FORMAT.md §7).
		return p.errorf(ref, "%s", transcript.InvalidUTF8Msg(pos))
	}
	typ := r.Type
	if typ == "" {
		typ = "(no type)"
	}
	if r.UUID != "" && p.seen(r.UUID) {
		p.sink.Count(recordName(&r), transcript.OutcomeSkipped, "repeated uuid (resumed session)")
		return nil
	}
	switch {
	case r.Type == "system" && r.Subtype == "compact_boundary":
		return p.planBoundary(&r, ref)
	case r.Type == "user" && r.IsCompactSummary:
		return p.planCompactSummary(&r, body, ref)
	case r.Type == "user" || r.Type == "assistant":
		return p.planMessage(&r, ref)
	case r.Type == "attachment" && hasRendered(r.Rendered):
		return p.planAttachment(&r, ref)
	case r.Type == "api-request-shape" && (!p.agentFile && p.sys == none || p.agentFile && p.fileSys == none):
		return p.planShape(&r, ref)
	case r.Type == "api-request-blob" && r.Hash != "" && r.Message != nil:
		if p.blobs == nil {
			p.blobs = map[string]blobRef{}
		}
		if _, ok := p.blobs[r.Hash]; !ok {
			p.blobs[r.Hash] = blobRef{ref, r.Message.Role}
		}
	case r.Type == "api-request":
		p.noteRequest(&r)
	}
	p.skip(&r)
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

// key is a seeded 64-bit hash of an id; 0 stands for no id.
type key uint64

func (p *planner) key(s string) key {
	if s == "" {
		return 0
	}
	h := maphash.String(p.seed, s)
	if h == 0 {
		h = 1
	}
	return key(h)
}

func (p *planner) seen(uuid string) bool {
	k := p.key(uuid)
	if _, ok := p.uuidNode[k]; ok {
		return true
	}
	_, ok := p.skipParent[k]
	return ok
}

// skip counts a line that is not conversation, keeping its uuid
// resolvable, and learns sub-agent links from progress lines.
func (p *planner) skip(r *record) {
	if r.UUID != "" {
		p.skipParent[p.key(r.UUID)] = p.key(r.ParentUUID)
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
		if n, found := p.uuidNode[cur]; found {
			result = n
			break
		}
		par, found := p.skipParent[cur]
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
				p.uuidNode[u] = result
				delete(p.skipParent, u)
			} else {
				p.skipParent[u] = 0
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
	if !strings.HasPrefix(uuid, transcript.SummaryIDPrefix) && !p.ids[p.key(uuid)] {
		return uuid
	}
	return p.freshID("x" + uuid)
}

// freshID returns id, or id with '_' appended until it names no line and
// no made-up id.
func (p *planner) freshID(id string) string {
	for p.ids[p.key(id)] || p.seen(id) {
		id += "_"
	}
	p.ids[p.key(id)] = true
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
	text, blocks, _, err := decodeContent[scanBlock](m.Content)
	if err != nil {
		return p.errorf(ref, "%s line %q: %s", name, r.UUID, jsonErrorText(err))
	}
	sidechain := r.IsSidechain || p.agentFile
	p.sawAgent(r.AgentID, sidechain)

	if r.Type == "assistant" {
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
		if i, ok := p.msgs[mk]; ok && mk != 0 {
			// One API message streamed as several lines: merge.
			n := p.nodes[i]
			if n.more == nil {
				n.more = new([]lineRef)
			}
			*n.more = append(*n.more, ref)
			p.uuidNode[p.key(r.UUID)] = i
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
		n := &pnode{id: p.nodeID(r.UUID), kind: kindAssistant, sidechain: sidechain,
			pred: pred, caller: caller, first: ref, tail: none}
		i := p.add(n)
		n.group, n.tail = i, i
		p.uuidNode[p.key(r.UUID)] = i
		if mk != 0 {
			p.msgs[mk] = i
		}
		p.addCalls(n, i, blocks)
		if !sidechain {
			p.head = i
		}
		p.sink.Count(name, transcript.OutcomeImported, "")
		return nil
	}

	// A user line.
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
			if g := p.nodes[group]; g.tail == pred {
				g.tail = int32(len(p.nodes))
			}
		}
	}
	i := p.add(n)
	p.uuidNode[p.key(r.UUID)] = i
	if !sidechain {
		p.head = i
	}
	if p.grouped(sidechain) {
		p.addToGroup(i)
	}
	p.sink.Count(name, transcript.OutcomeImported, "")
	p.learnAgentLink(r, blocks)
	return nil
}

func hasRendered(rs []rendered) bool {
	for _, r := range rs {
		if r.Content != "" {
			return true
		}
	}
	return false
}

// planAttachment plans an attachment whose rendered content reached the
// model: renderedRole "system" is a system-role message of its own, any
// other is text of the user message it joins.
func (p *planner) planAttachment(r *record, ref lineRef) error {
	if r.UUID == "" {
		p.skip(r)
		return nil
	}
	sidechain := r.IsSidechain || p.agentFile
	pred, caller, err := p.placement(r, ref, "", nil, sidechain, false)
	if err != nil {
		return err
	}
	kind := uint8(kindAttachUser)
	if r.RenderedRole == "system" {
		kind = kindAttachSystem
	}
	n := &pnode{id: p.nodeID(r.UUID), kind: kind, sidechain: sidechain,
		pred: pred, caller: caller, first: ref, group: none, tail: none}
	i := p.add(n)
	p.uuidNode[p.key(r.UUID)] = i
	if !sidechain {
		p.head = i
	}
	if p.grouped(sidechain) {
		p.addToGroup(i)
	}
	p.sink.Count("attachment", transcript.OutcomeImported, "")
	return nil
}

// planShape makes the session's first api-request-shape (the system
// prompt and tool definitions Claude Code sent) the system node every main
// chain starts from.
func (p *planner) planShape(r *record, ref lineRef) error {
	if p.agentFile {
		return p.planAgentShape(r, ref)
	}
	id := p.freshID("claude-code-system")
	n := &pnode{id: id, kind: kindSystem, pred: none, caller: none, first: ref, group: none, tail: none}
	p.sys = p.add(n)
	// Every main root now starts from the system node, and so does a
	// summary covering a chain from such a root (its predecessor is its
	// first covered node's): a shape recorded after a compaction, as in a
	// session resumed from 'ctxfold export', must not split the two.
	for i, m := range p.nodes[:p.sys] {
		if m.pred == none && !m.sidechain {
			p.nodes[i].pred = p.sys
		}
	}
	if len(p.grp) > 0 && p.nodes[p.grp[0]].pred == p.sys {
		p.grpBase = p.sys
	}
	p.sink.Count(recordName(r), transcript.OutcomeImported, "system prompt and tool definitions (the system node)")
	return nil
}

// planAgentShape makes a sub-agent file's first shape the system node its
// chain starts from, in the sub-agent's caller subtree: a sub-agent's
// request carries its own system prompt and tools.
func (p *planner) planAgentShape(r *record, ref lineRef) error {
	var roots []int32
	for i, m := range p.nodes {
		if m.first.file == p.fileIdx && m.pred == none && m.sidechain && m.kind != kindSummary {
			roots = append(roots, int32(i))
		}
	}
	if len(roots) != 1 || p.nodes[roots[0]].caller == none {
		p.sink.Count(recordName(r), transcript.OutcomeSkipped, "sub-agent request shape without one spawned root")
		return nil
	}
	root := roots[0]
	id := p.freshID("claude-code-system-" + Sanitize(p.nodes[root].id))
	n := &pnode{id: id, kind: kindSystem, sidechain: true, pred: none, caller: p.nodes[root].caller,
		first: ref, group: none, tail: none}
	p.fileSys = p.add(n)
	p.nodes[root].pred = p.fileSys
	if len(p.grp) > 0 && p.grp[0] == root {
		p.grpBase = p.fileSys
	}
	p.sink.Count(recordName(r), transcript.OutcomeImported, "sub-agent system prompt and tool definitions")
	return nil
}

// grouped reports whether a node takes part in turn grouping: the main
// chain, and a sub-agent file's own chain (inline sidechains interleave
// with the main chain and keep file order).
func (p *planner) grouped(sidechain bool) bool { return !sidechain || p.agentFile }

// noteRequest pairs the open group with the user message the request's
// tail ends with (before a trailing system message).
func (p *planner) noteRequest(r *record) {
	if len(p.grp) == 0 || len(p.blobs) == 0 {
		return
	}
	for k := len(r.Tail) - 1; k >= 0; k-- {
		b, ok := p.blobs[r.Tail[k]]
		if !ok || b.role == "assistant" {
			return
		}
		if b.role == "user" {
			p.sent = append(p.sent, sentGroup{nodes: p.groupOrder(p.grp), blob: b.ref})
			return
		}
	}
}

// addToGroup adds a main-chain node planned after the last assistant
// node. A group that is not one linear chain is left as it is.
func (p *planner) addToGroup(i int32) {
	n := p.nodes[i]
	if len(p.grp) == 0 {
		p.grpBase, p.grpBroken = n.pred, false
	} else if n.pred != p.grp[len(p.grp)-1] {
		p.grpBroken = true
	}
	p.grp = append(p.grp, i)
}

// closeGroup puts the group's nodes in the order Claude Code 2.1.3xx sends
// them: tool results first, then attachments rendered into the user
// message (they move up to just after the last assistant message or tool
// result), then the user's own lines, then the system-role attachments
// (one system message after the user message). It returns the group's new
// last node, or none for an empty group.
func (p *planner) closeGroup() int32 {
	g := p.grp
	p.grp = nil
	if len(g) == 0 {
		return none
	}
	if p.grpBroken || len(g) == 1 {
		return g[len(g)-1]
	}
	order := p.groupOrder(g)
	prev := p.grpBase
	for _, i := range order {
		p.nodes[i].pred = prev
		prev = i
	}
	if p.head == g[len(g)-1] {
		p.head = prev
	}
	// A later line whose parent is the group's old last line continues
	// from its new last node.
	if p.moved == nil {
		p.moved = map[int32]int32{}
	}
	p.moved[g[len(g)-1]] = prev
	return prev
}

// groupOrder is the sending order of a group (see closeGroup); a broken
// group keeps its order.
func (p *planner) groupOrder(g []int32) []int32 {
	if p.grpBroken {
		return append([]int32(nil), g...)
	}
	rank := func(i int32) int {
		n := p.nodes[i]
		switch {
		case len(n.results) > 0:
			return 0
		case n.kind == kindAttachUser:
			return 1
		case n.kind == kindAttachSystem:
			return 3
		}
		return 2
	}
	order := make([]int32, 0, len(g))
	for r := 0; r <= 3; r++ {
		for _, i := range g {
			if rank(i) == r {
				order = append(order, i)
			}
		}
	}
	return order
}

// closeGroupAt closes the group for an assistant node whose parent
// resolved to pred, returning its predecessor after the reordering.
func (p *planner) closeGroupAt(pred int32) int32 {
	member := false
	for _, i := range p.grp {
		member = member || i == pred
	}
	last := p.closeGroup()
	if member && last != none {
		return last
	}
	return pred
}

// addCalls records the tool calls of an assistant line on its node.
func (p *planner) addCalls(n *pnode, i int32, blocks []scanBlock) {
	for _, b := range blocks {
		if b.Type != "tool_use" || b.ID == "" || contains(n.calls, b.ID) {
			continue
		}
		n.calls = append(n.calls, b.ID)
		if b.Name == "Task" || b.Name == "Agent" {
			p.toolNode[b.ID] = i
			p.lastTask = b.ID
			var in struct {
				Prompt string `json:"prompt"`
			}
			if json.Unmarshal(b.Input, &in) == nil {
				if k := promptKey(in.Prompt); k != "" {
					p.prompts[k] = b.ID
				}
			}
		}
	}
}

// learnAgentLink reads the agentId a Task result names (2.x), linking the
// sub-agent file to the call that spawned it.
func (p *planner) learnAgentLink(r *record, blocks []scanBlock) {
	if r.ToolUseResult == nil || r.ToolUseResult.AgentID == "" {
		return
	}
	tur := r.ToolUseResult
	for _, b := range blocks {
		if b.Type == "tool_result" && b.ToolUseID != "" {
			p.agentTool[tur.AgentID] = b.ToolUseID
			return
		}
	}
}

// placement decides a new node's predecessor and caller.
func (p *planner) placement(r *record, ref lineRef, text string, blocks []scanBlock, sidechain, isResult bool) (pred, caller int32, err error) {
	pred, caller = none, none
	if r.ParentUUID != "" {
		n, ok := p.resolve(r.ParentUUID)
		if !ok {
			p.warnf(ref, "parent %q not found; imported as a root", r.ParentUUID)
		}
		pred = n
	}
	if to, ok := p.moved[pred]; ok && p.grouped(sidechain) {
		pred = to
	}
	if pred >= 0 {
		// Results of one message form one chain: a result, or a turn after
		// a result, continues from the last result of its message.
		pn := p.nodes[pred]
		if pn.group >= 0 {
			g := p.nodes[pn.group]
			if isResult || (pn.group != pred && g.tail != pred) {
				pred = g.tail
			}
		}
	}
	if !sidechain {
		return pred, none, nil
	}
	switch {
	case pred >= 0 && p.nodes[pred].sidechain && p.nodes[pred].caller >= 0:
		return pred, p.nodes[pred].caller, nil
	case pred >= 0 && !p.nodes[pred].sidechain:
		// A sidechain continuing the main chain (the compaction summariser
		// reads the conversation so far): spawned by that turn.
		if p.fileCaller >= 0 {
			return pred, p.fileCaller, nil
		}
		return pred, pred, nil
	case pred >= 0:
		return pred, none, nil
	}
	// A sidechain root: find the Task/Agent call that sent its prompt.
	caller = p.fileCaller
	if caller < 0 && r.AgentID != "" {
		if tool, ok := p.agentTool[r.AgentID]; ok {
			if n, ok := p.toolNode[tool]; ok {
				caller = n
			}
		}
	}
	if caller < 0 {
		if tool, ok := p.prompts[promptKey(text)]; ok && !p.promptUsed[tool] {
			caller = p.toolNode[tool]
			p.promptUsed[tool] = true
		}
	}
	if caller < 0 && p.lastTask != "" && !p.promptUsed[p.lastTask] {
		caller = p.toolNode[p.lastTask]
		p.promptUsed[p.lastTask] = true
		p.warnf(ref, "sidechain start matched to the latest Task call by position (its prompt matches none)")
	}
	if caller < 0 && !p.warnedLink {
		p.warnedLink = true
		p.warnf(ref, "sidechain start: no Task or Agent call spawned it; imported as a separate root")
	}
	if p.agentFile && p.fileCaller < 0 && caller >= 0 {
		p.fileCaller = caller
	}
	return pred, caller, nil
}

// openCalls applies the store's tool-call model (transcript.CallsBefore):
// walking up from pred past the nodes that continue a tool group, the
// first node with calls is the one answered and its unanswered calls are
// open.
func (p *planner) openCalls(pred int32) (int32, map[string]bool) {
	owner, calls, answered, err := transcript.CallsBefore(pred, func(i int32) (transcript.ToolFacts, int32, bool) {
		if i < 0 {
			return transcript.ToolFacts{}, none, false
		}
		n := p.nodes[i]
		return transcript.ToolFacts{Role: n.role(), Calls: n.calls, Results: n.results}, n.pred, true
	}, len(p.nodes))
	open := map[string]bool{}
	if err != nil || calls == nil {
		return none, open
	}
	for _, c := range transcript.OpenCalls(calls, answered) {
		open[c] = true
	}
	return owner, open
}

// planBoundary turns a compact_boundary into a summary node covering the
// chain that ends at its logical parent (docs/FORMAT.md §4: predecessor = the
// predecessor of the first covered node). Later turns continue from that
// last covered node, so the covered run stays on their spine.
func (p *planner) planBoundary(r *record, ref lineRef) error {
	p.closeGroup()
	last := none
	if r.LogicalParentUUID != "" {
		if n, ok := p.resolve(r.LogicalParentUUID); ok {
			last = n
		}
	}
	if last < 0 && r.LogicalParentUUID != "" {
		p.warnf(ref, "compaction boundary: logicalParentUuid %q not found; covering the chain before it", r.LogicalParentUUID)
	}
	if last >= 0 && p.nodes[last].sidechain {
		last = none
	}
	if last < 0 {
		last = p.head
	}
	if r.UUID != "" {
		if last >= 0 {
			p.uuidNode[p.key(r.UUID)] = last // the continuation; see cont below
		} else {
			p.skipParent[p.key(r.UUID)] = 0
		}
	}
	if last < 0 {
		p.sink.Count(recordName(r), transcript.OutcomeSkipped, "compaction boundary with nothing before it")
		return nil
	}
	// The turns after the boundary continue from its logical parent; the
	// summary covers the chain up to the first message Claude Code kept
	// verbatim (compactMetadata.preservedMessages), so a render shows those
	// after the summary, as the client's next request does.
	cont := last
	if cm := r.CompactMetadata; cm != nil && cm.PreservedMessages != nil && len(cm.PreservedMessages.UUIDs) > 0 {
		if f, ok := p.resolve(cm.PreservedMessages.UUIDs[0]); ok && f >= 0 && p.onSpine(f, last) {
			if pr := p.nodes[f].pred; pr >= 0 && p.nodes[pr].kind != kindSystem {
				last = pr
			} else {
				p.warnf(ref, "compaction boundary keeps every message; imported as covering the chain before it")
			}
		}
	}
	first := last
	for p.nodes[first].pred >= 0 && p.nodes[p.nodes[first].pred].kind != kindSystem {
		first = p.nodes[first].pred
	}
	id := transcript.SummaryIDPrefix + Sanitize(r.UUID)
	if r.UUID == "" {
		id = transcript.SummaryIDPrefix + fmt.Sprintf("line%d", ref.line)
	}
	id = p.freshID(id)
	s := &pnode{id: id, kind: kindSummary, pred: p.nodes[first].pred,
		caller: none, first: ref, sum: &summaryInfo{last: last, cont: cont}, group: none, tail: none}
	i := p.add(s)
	p.lastBound = i
	if r.UUID != "" {
		p.boundaries[r.UUID] = i
	}
	p.sink.Count(recordName(r), transcript.OutcomeImported, "")
	return nil
}

// planCompactSummary gives the summary node its text; the line itself
// stands for the last covered node, so the turns after it continue there.
func (p *planner) planCompactSummary(r *record, body []byte, ref lineRef) error {
	s, ok := p.boundaries[r.ParentUUID]
	if !ok && p.lastBound >= 0 && p.nodes[p.lastBound].sum.text.line == 0 {
		s, ok = p.lastBound, true
	}
	if !ok {
		p.warnf(ref, "compaction summary without a compact_boundary; imported as a user turn")
		return p.planMessage(&record{Type: r.Type, UUID: r.UUID, ParentUUID: r.ParentUUID, IsSidechain: r.IsSidechain,
			Message: r.Message, ToolUseResult: r.ToolUseResult}, ref)
	}
	n := p.nodes[s]
	n.sum.text = ref
	last := n.sum.cont
	p.uuidNode[p.key(r.UUID)] = last
	p.head = last
	p.sink.Count("user", transcript.OutcomeMerged, "compaction summary text (into the summary node)")
	return nil
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

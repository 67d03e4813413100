// Package gemini imports Gemini CLI chat recordings: the JSONL form (a
// metadata line, then message records where a repeated id replaces the
// earlier record, {"$set": …} patches and {"$rewindTo": id} truncations),
// with the sub-agent files under chats/<session id>/, the legacy
// single-JSON ConversationRecord ({…, "messages": […]}) and /chat save
// checkpoints (checkpoint-<tag>.json: {history: Content[]} or the array). The
// records are folded the way Gemini CLI replays them; what a rewind removed
// is kept as a branch (off HEAD's spine, so render shows what the model
// saw). It only reads the files and hands nodes to a transcript.ImportSink.
package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ctxfold/ctxfold/transcript"
	"github.com/ctxfold/ctxfold/transcript/importer/input"
)

// Options tune the import.
type Options = input.Options

// Detect reports whether head is a Gemini CLI recording (its metadata
// names a sessionId with a projectHash or startTime) or a /chat save
// checkpoint: {"history": [{"role", "parts"}…]} or the bare array of
// contents (a ChatGPT export also has "parts", under "mapping").
func Detect(head []byte) bool {
	h := bytes.TrimSpace(head)
	if len(h) == 0 {
		return false
	}
	has := func(s string) bool { return bytes.Contains(h, []byte(s)) }
	contents := has(`"role"`) && has(`"parts"`) && !has(`"mapping"`)
	switch h[0] {
	case '[':
		return contents
	case '{':
		return has(`"sessionId"`) && (has(`"projectHash"`) || has(`"startTime"`)) ||
			has(`"history"`) && contents
	}
	return false
}

// Import reads each file as one conversation, with its sub-agents' files
// (chats/<session id>/*.jsonl beside it) as caller subtrees. A sub-agent
// file given on its own, whose session is not among files, is a
// conversation of its own.
func Import(ctx context.Context, files []string, opts Options, target transcript.ImportTarget) error {
	attached := map[string]bool{}
	var later []string
	for _, file := range files {
		if peekKind(file, opts) == "subagent" {
			later = append(later, file)
			continue
		}
		if err := importFile(ctx, file, opts, target, attached); err != nil {
			return err
		}
	}
	for _, file := range later {
		if attached[cleanPath(file)] {
			continue
		}
		if err := importFile(ctx, file, opts, target, attached); err != nil {
			return err
		}
	}
	return nil
}

// peekKind is the "kind" of a file's first record ("main", "subagent", or
// "" when there is none or it cannot be read: the import says why).
func peekKind(file string, opts Options) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	first, err := input.NewLines(f, file, opts).Next()
	if err != nil {
		return ""
	}
	var h struct{ Kind string }
	json.Unmarshal(first, &h)
	return h.Kind
}

func cleanPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return filepath.Clean(p)
}

// subagentFiles are the sub-agent transcripts Gemini CLI writes for a
// session: chats/<session id>/*.jsonl next to the session file. Only
// regular files count (a symlink could point anywhere), and only an id
// that is a plain file name.
func subagentFiles(file, session string) []string {
	if session == "" || session == "." || session == ".." || strings.ContainsAny(session, `/\`) {
		return nil
	}
	dir := filepath.Join(filepath.Dir(file), session)
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
		return nil
	}
	found, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	sort.Strings(found)
	var out []string
	for _, p := range found {
		if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() {
			out = append(out, p)
		}
	}
	return out
}

// message is one folded message record.
type message struct {
	key  string // node id of the message's first node
	id   string // the client's message id
	raw  json.RawMessage
	line int
	// pred is the index of the message before it (-1 for the first).
	pred    int
	rewound bool
}

type fold struct {
	file string
	sink transcript.ImportSink
	// sub marks a sub-agent's file: its nodes carry caller and never set
	// HEAD or the model.
	sub    bool
	caller string
	// agents maps a sub-agent's session id (toolCalls[].agentId) to the
	// node whose call started it.
	agents  map[string]string
	msgs    []*message
	path    []int
	byID    map[string]int
	used    map[string]int
	session string
	// cut holds the messages the last message list left out, until the
	// next message record: on a resume Gemini CLI writes the list without
	// them, then again with them (what it sends), and only a cut that
	// stays is a branch.
	cut []int
}

// settle makes the last list's cut final: those messages stay as a branch.
func (fo *fold) settle(count func(string, string, string)) {
	if len(fo.cut) == 0 {
		return
	}
	for _, j := range fo.cut {
		fo.msgs[j].rewound = true
	}
	fo.cut = nil
	count("$set", transcript.OutcomeMerged, "the client rewrote its message list: the messages it replaced stay as a branch, its new list continues from the last common one")
}

func importFile(ctx context.Context, file string, opts Options, target transcript.ImportTarget, attached map[string]bool) error {
	fo, counts, err := read(ctx, file, opts, map[string]int{})
	if err != nil {
		return err
	}
	name := fo.session
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	sink, err := target.Conversation(name)
	if err != nil {
		return err
	}
	fo.sink = sink
	flush(sink, counts)
	if err := fo.emit(); err != nil {
		return err
	}
	for _, sub := range subagentFiles(file, fo.session) {
		sf, counts, err := read(ctx, sub, opts, fo.used)
		if err != nil {
			return err
		}
		attached[cleanPath(sub)] = true
		sf.sink, sf.sub, sf.caller = sink, true, fo.agents[sf.session]
		flush(sink, counts)
		if sf.caller == "" {
			sink.Warn(sub, 1, fmt.Sprintf("sub-agent %q: no call in the session names it (toolCalls[].agentId); imported as a root of its own", sf.session))
		}
		sink.Count("subagent file", transcript.OutcomeImported, "")
		if err := sf.emit(); err != nil {
			return err
		}
	}
	return nil
}

func flush(sink transcript.ImportSink, counts map[[3]string]int) {
	keys := make([][3]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		return a[0]+"\x00"+a[1]+"\x00"+a[2] < b[0]+"\x00"+b[1]+"\x00"+b[2]
	})
	for _, k := range keys {
		for i := 0; i < counts[k]; i++ {
			sink.Count(k[0], k[1], k[2])
		}
	}
}

// read folds one file; used holds the node ids taken so far (shared by a
// session and its sub-agents, which land in one session).
func read(ctx context.Context, file string, opts Options, used map[string]int) (*fold, map[[3]string]int, error) {
	fo := &fold{file: file, byID: map[string]int{}, used: used, agents: map[string]string{}}
	// Gemini CLI replays the whole file before the conversation exists, and
	// so does this importer: the records are folded first, then emitted.
	f, err := os.Open(file)
	if err != nil {
		return nil, nil, &transcript.ParseError{File: file, Msg: err.Error()}
	}
	lines := input.NewLines(f, file, opts)
	first, err := lines.Next()
	f.Close()
	if err == io.EOF {
		return nil, nil, input.Errorf(file, 1, "empty file; expected a Gemini CLI recording")
	}
	if err != nil {
		return nil, nil, err
	}
	counts := map[[3]string]int{}
	count := func(rec, outcome, reason string) { counts[[3]string{rec, outcome, reason}]++ }
	if json.Valid(first) && !isCheckpoint(first) {
		err = fo.readJSONL(ctx, file, opts, count)
	} else {
		err = fo.readLegacy(file, opts, count)
	}
	if err != nil {
		return nil, nil, err
	}
	return fo, counts, nil
}

func (fo *fold) readJSONL(ctx context.Context, file string, opts Options, count func(string, string, string)) error {
	f, err := os.Open(file)
	if err != nil {
		return &transcript.ParseError{File: file, Msg: err.Error()}
	}
	defer f.Close()
	lines := input.NewLines(f, file, opts)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, err := lines.Next()
		if err == io.EOF {
			fo.settle(count)
			return nil
		}
		if err != nil {
			return err
		}
		var rec map[string]json.RawMessage
		if jerr := json.Unmarshal(line, &rec); jerr != nil {
			if lines.Unterminated {
				count("torn line", transcript.OutcomeSkipped, "incomplete last line (the file ends without a newline)")
				fo.settle(count)
				return nil
			}
			return lines.Unmarshal(line, &rec, "a Gemini CLI record (a JSON object)")
		}
		if err := fo.record(rec, lines.Line, count, lines.Errorf); err != nil {
			return err
		}
	}
}

func (fo *fold) readLegacy(file string, opts Options, count func(string, string, string)) error {
	d, err := input.OpenDoc(file, opts)
	if err != nil {
		return err
	}
	defer d.Close()
	if d.First == '[' {
		// A /chat save checkpoint of older versions: the history alone.
		if err := fo.checkpoint(d, count); err != nil {
			return err
		}
		return d.End()
	}
	if d.First != '{' {
		return input.Errorf(file, 1, "expected a Gemini CLI recording (a JSON object)")
	}
	meta := map[string]json.RawMessage{}
	checkpoint := false
	err = d.Fields("a Gemini CLI ConversationRecord", func(key string) error {
		if key == "history" && len(fo.msgs) == 0 {
			checkpoint = true
			return fo.checkpoint(d, count)
		}
		if key != "messages" {
			var raw json.RawMessage
			if err := d.Value(&raw, key); err != nil {
				return err
			}
			meta[key] = raw
			return nil
		}
		fo.replace(count)
		return d.Each("messages", func(i int) error {
			var m map[string]json.RawMessage
			if err := d.Value(&m, "a message object"); err != nil {
				return err
			}
			return fo.upsert(m, d.Line(), count, d.Errorf)
		})
	})
	if err != nil {
		return err
	}
	if checkpoint {
		count("checkpoint", transcript.OutcomeMerged, "a /chat save checkpoint {history, …}: its history is the conversation")
		return d.End()
	}
	if _, ok := meta["sessionId"]; !ok && len(fo.msgs) == 0 {
		return input.Errorf(file, 1, `expected a Gemini CLI ConversationRecord {"sessionId", "messages", …}`)
	}
	fo.setMeta(meta)
	count("metadata", transcript.OutcomeMerged, "session header (id, project, times): names the session")
	return d.End()
}

func (fo *fold) setMeta(m map[string]json.RawMessage) {
	var id string
	if json.Unmarshal(m["sessionId"], &id) == nil && id != "" {
		fo.session = id
	}
}

func (fo *fold) record(rec map[string]json.RawMessage, line int, count func(string, string, string), errorf func(string, ...any) error) error {
	if raw, ok := rec["$rewindTo"]; ok {
		var id string
		if json.Unmarshal(raw, &id) != nil {
			return errorf(`"$rewindTo" must be a message id string`)
		}
		fo.settle(count)
		fo.rewind(id)
		count("$rewindTo", transcript.OutcomeMerged, "applied: later messages continue from the rewind point; the rewound ones stay as a branch")
		return nil
	}
	if raw, ok := rec["$set"]; ok {
		var patch map[string]json.RawMessage
		if json.Unmarshal(raw, &patch) != nil {
			return errorf(`"$set" must be an object`)
		}
		fo.setMeta(patch)
		if msgs, ok := patch["messages"]; ok {
			return fo.sync(msgs, line, count, errorf)
		}
		count("$set", transcript.OutcomeMerged, "session metadata patch (no conversation content)")
		return nil
	}
	if _, ok := rec["type"]; ok {
		if _, ok := rec["id"]; ok {
			fo.settle(count)
			return fo.upsert(rec, line, count, errorf)
		}
	}
	_, hasSession := rec["sessionId"]
	msgs, hasMessages := rec["messages"]
	if !hasSession && !hasMessages {
		return errorf(`expected a Gemini CLI record: a message {"id","type",…}, {"$set":…}, {"$rewindTo":…} or the session metadata {"sessionId",…}`)
	}
	fo.setMeta(rec)
	if hasMessages {
		return fo.sync(msgs, line, count, errorf)
	}
	count("metadata", transcript.OutcomeMerged, "session header (id, project, times): names the session")
	return nil
}

// sync applies a message list the client wrote whole ({"$set":
// {"messages": […]}}): Gemini CLI writes its in-memory history back after a
// resume and after its own compression. The messages it repeats (same id,
// same order, the same conversation content) are the ones already imported,
// updated in place, so a resume that sends what was sent before adds no
// branch. From the first message that differs, the earlier messages stay
// as a branch and the list's rest continues from the last common one: that
// is what the client sends from now on (a rewritten history, e.g. the
// compressed one).
func (fo *fold) sync(raw json.RawMessage, line int, count func(string, string, string), errorf func(string, ...any) error) error {
	var msgs []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return errorf(`"messages" must be an array of message objects: %s`, input.JSONErrorText(err))
	}
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		id, _, err := messageIDType(m, errorf)
		if err != nil {
			return err
		}
		ids[i] = id
	}
	msgs, ids = dropRepeatedResponses(msgs, ids, count)
	full := append(fo.path, fo.cut...)
	k := 0
	for k < len(full) && k < len(msgs) && fo.msgs[full[k]].id == ids[k] {
		raw, _ := json.Marshal(msgs[k])
		if conversation(fo.msgs[full[k]].raw) != conversation(raw) {
			break
		}
		fo.msgs[full[k]].raw = overlay(fo.msgs[full[k]].raw, msgs[k])
		k++
	}
	if k > 0 {
		count("$set", transcript.OutcomeMerged, "the client's rewritten message list repeats imported messages: their latest form replaces them")
	}
	fo.path, fo.cut = full[:k:k], append([]int(nil), full[k:]...)
	if k < len(msgs) {
		fo.settle(count)
	}
	for i, m := range msgs[k:] {
		fo.add(ids[k+i], m, line)
	}
	return nil
}

// dropRepeatedResponses leaves out of a message list a user message made
// only of functionResponse parts whose calls a later message answers again.
// Gemini CLI 0.61, on a resume, rebuilds a call's result from
// toolCalls[].result as a message "<id>_response" and keeps the recorded
// functionResponse message as well, so it sends the result twice (three
// times after a second resume); a call has one result node, the one the
// client recorded when it ran the tool (docs/INTEROP-gemini-cli.md lists
// this difference).
func dropRepeatedResponses(msgs []map[string]json.RawMessage, ids []string, count func(string, string, string)) ([]map[string]json.RawMessage, []string) {
	answers := func(m map[string]json.RawMessage) []string {
		var typ string
		if json.Unmarshal(m["type"], &typ) != nil || typ != "user" {
			return nil
		}
		var out []string
		for _, p := range parseParts(m["content"], m["parts"]) {
			if p.FunctionResponse == nil {
				return nil
			}
			out = append(out, p.FunctionResponse.ID)
		}
		return out
	}
	later := map[string]bool{}
	keep := make([]bool, len(msgs))
	for i := len(msgs) - 1; i >= 0; i-- {
		calls := answers(msgs[i])
		repeated := len(calls) > 0
		for _, c := range calls {
			repeated = repeated && later[c]
		}
		keep[i] = !repeated
		for _, c := range calls {
			later[c] = true
		}
	}
	var outM []map[string]json.RawMessage
	var outI []string
	for i := range msgs {
		if !keep[i] {
			count("message/user", transcript.OutcomeMerged, "a function result the client sends again after a resume: the call's one tool node holds it")
			continue
		}
		outM, outI = append(outM, msgs[i]), append(outI, ids[i])
	}
	return outM, outI
}

// overlay is the message old with the fields of m put over it: a list the
// CLI writes back holds what it keeps in memory, which may lack the model,
// the token counts or the thoughts its first record had.
func overlay(old json.RawMessage, m map[string]json.RawMessage) json.RawMessage {
	var base map[string]json.RawMessage
	if json.Unmarshal(old, &base) != nil {
		base = map[string]json.RawMessage{}
	}
	for k, v := range m {
		base[k] = v
	}
	raw, _ := json.Marshal(base)
	return raw
}

func messageIDType(m map[string]json.RawMessage, errorf func(string, ...any) error) (string, string, error) {
	var id, typ string
	if err := json.Unmarshal(m["id"], &id); err != nil || id == "" {
		return "", "", errorf(`a message needs a non-empty string "id"`)
	}
	if err := json.Unmarshal(m["type"], &typ); err != nil {
		return "", "", errorf(`message %q: "type" must be a string`, id)
	}
	return id, typ, nil
}

// replace starts the message list over ($set of messages, or a legacy
// record): what was there stays as a branch.
func (fo *fold) replace(count func(string, string, string)) {
	if len(fo.path) > 0 {
		count("$set", transcript.OutcomeMerged, "replaced the message list; the earlier messages stay as a branch")
	}
	for _, i := range fo.path {
		fo.msgs[i].rewound = true
	}
	fo.path = nil
}

func (fo *fold) rewind(id string) {
	pos := -1
	if i, ok := fo.byID[id]; ok {
		for p, j := range fo.path {
			if j == i {
				pos = p
				break
			}
		}
	}
	if pos < 0 {
		pos = 0 // an unknown target clears the history, as Gemini CLI does
	}
	for _, j := range fo.path[pos:] {
		fo.msgs[j].rewound = true
	}
	fo.path = fo.path[:pos]
}

func (fo *fold) upsert(m map[string]json.RawMessage, line int, count func(string, string, string), errorf func(string, ...any) error) error {
	id, typ, err := messageIDType(m, errorf)
	if err != nil {
		return err
	}
	if i, ok := fo.byID[id]; ok && !fo.msgs[i].rewound {
		fo.msgs[i].raw, _ = json.Marshal(m)
		count("message/"+typ, transcript.OutcomeMerged, "a later record with the same id replaces the earlier one")
		return nil
	}
	fo.add(id, m, line)
	return nil
}

// add appends a new message to the current path (a message list may hold
// one id twice: Gemini CLI 0.61 repeats a resumed function response, and
// sends both).
func (fo *fold) add(id string, m map[string]json.RawMessage, line int) {
	raw, _ := json.Marshal(m)
	key := input.ID(id, fmt.Sprintf("g%d", line))
	if n := fo.used[key]; n > 0 {
		fo.used[key] = n + 1
		key = fmt.Sprintf("%s~%d", key, n+1)
	} else {
		fo.used[key] = 1
	}
	pred := -1
	if len(fo.path) > 0 {
		pred = fo.path[len(fo.path)-1]
	}
	fo.msgs = append(fo.msgs, &message{key: key, id: id, raw: raw, line: line, pred: pred})
	fo.byID[id] = len(fo.msgs) - 1
	fo.path = append(fo.path, len(fo.msgs)-1)
}

type record struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Timestamp string          `json:"timestamp"`
	Content   json.RawMessage `json:"content"`
	Parts     json.RawMessage `json:"parts"`
	Thoughts  []struct {
		Subject     string `json:"subject"`
		Description string `json:"description"`
	} `json:"thoughts"`
	Tokens *struct {
		Input    int64 `json:"input"`
		Output   int64 `json:"output"`
		Cached   int64 `json:"cached"`
		Thoughts int64 `json:"thoughts"`
		Tool     int64 `json:"tool"`
		Total    int64 `json:"total"`
	} `json:"tokens"`
	Model     string     `json:"model"`
	ToolCalls []toolCall `json:"toolCalls"`
}

type toolCall struct {
	ID     string          `json:"id"`
	Name   string          `json:"name"`
	Args   json.RawMessage `json:"args"`
	Status string          `json:"status"`
	// AgentID is the session id of the sub-agent an invoke_agent call ran.
	AgentID string `json:"agentId"`
	Result  []struct {
		FunctionResponse *functionResponse `json:"functionResponse"`
	} `json:"result"`
}

type functionResponse struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

// part is one Gemini Part.
type part struct {
	Text       *string `json:"text"`
	Thought    bool    `json:"thought"`
	InlineData *struct {
		MimeType string `json:"mimeType"`
		Data     string `json:"data"`
	} `json:"inlineData"`
	FileData *struct {
		MimeType string `json:"mimeType"`
		FileURI  string `json:"fileUri"`
	} `json:"fileData"`
	FunctionCall *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *functionResponse `json:"functionResponse"`
}

// parseParts reads a message's content (or parts) as Gemini parts; a
// string or anything else is no parts.
func parseParts(raw, parts json.RawMessage) []part {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = parts
	}
	var ps []part
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &ps) != nil {
		return nil
	}
	return ps
}

// emit writes the folded messages in the order they were created, so each
// one's predecessor (the last node of the message before it) exists.
func (fo *fold) emit() error {
	tails := make([]string, len(fo.msgs))
	answered := fo.answeredCalls()
	model := ""
	for i, m := range fo.msgs {
		pred := ""
		if m.pred >= 0 {
			pred = tails[m.pred]
		}
		tails[i] = pred
		var r record
		if err := json.Unmarshal(m.raw, &r); err != nil {
			return input.Errorf(fo.file, m.line, "message %q: %s", m.key, input.JSONErrorText(err))
		}
		kind := "message/" + r.Type
		var nodes []transcript.Node
		switch r.Type {
		case "user":
			nodes = userNodes(m, r)
		case "gemini", "model":
			nodes = fo.assistant(m, r, answered[i])
			if r.Model != "" {
				model = r.Model
			}
		case "info", "error", "warning":
			fo.sink.Count(kind, transcript.OutcomeSkipped, "a notice shown to the user, not sent to the model")
			continue
		default:
			fo.sink.Count(kind, transcript.OutcomeSkipped, "message type not known to this importer")
			continue
		}
		fo.sink.Count(kind, transcript.OutcomeImported, "")
		var err error
		if pred, err = fo.emitNodes(m, r, nodes, pred); err != nil {
			return err
		}
		tails[i] = pred
	}
	if fo.sub {
		return nil
	}
	if len(fo.path) > 0 {
		if head := tails[fo.path[len(fo.path)-1]]; head != "" {
			fo.sink.SetHead(head)
		}
	}
	if model != "" {
		fo.sink.SetModel(model)
	}
	return nil
}

// answeredCalls holds, per message, the call ids a following user message
// answers with a functionResponse: Gemini CLI 0.61 records a result
// twice, in the call's toolCalls[].result and as that user message,
// which is what it sends. The user message becomes the tool node.
func (fo *fold) answeredCalls() []map[string]bool {
	answered := make([]map[string]bool, len(fo.msgs))
	for _, m := range fo.msgs {
		if m.pred < 0 {
			continue
		}
		var r record
		if json.Unmarshal(m.raw, &r) != nil || r.Type != "user" {
			continue
		}
		for _, p := range parseParts(r.Content, r.Parts) {
			if fr := p.FunctionResponse; fr != nil {
				if answered[m.pred] == nil {
					answered[m.pred] = map[string]bool{}
				}
				answered[m.pred][fr.ID] = true
			}
		}
	}
	return answered
}

// emitNodes hands one message's nodes to the sink as a chain after pred
// and returns the chain's new tail.
func (fo *fold) emitNodes(m *message, r record, nodes []transcript.Node, pred string) (string, error) {
	for j := range nodes {
		n := &nodes[j]
		if j > 0 {
			// A result's id is derived from its message's; a message
			// may already hold it (ids are the export's to choose).
			for fo.used[n.ID] > 0 {
				n.ID += "~"
			}
			fo.used[n.ID] = 1
		}
		n.Predecessor = pred
		n.Caller = fo.caller
		n.CreatedAt = r.Timestamp
		if m.rewound {
			n.SetMeta("gemini_rewound", true)
		}
		if err := fo.sink.Node(*n); err != nil {
			return "", err
		}
		pred = n.ID
	}
	return pred, nil
}

// assistant is a gemini message: its text, thoughts and tool calls, then
// one tool node per call result (Gemini records results with the call).
func (fo *fold) assistant(m *message, r record, answered map[string]bool) []transcript.Node {
	a := transcript.Node{ID: m.key, Role: transcript.RoleAssistant}
	c := content(r.Content, r.Parts)
	var blocks []transcript.Block
	for _, t := range r.Thoughts {
		text := t.Description
		if t.Subject != "" {
			text = t.Subject + ": " + text
		}
		blocks = append(blocks, transcript.Block{Type: transcript.BlockThinking, Text: text})
	}
	if len(blocks) > 0 {
		if c.IsBlocks {
			blocks = append(blocks, c.Blocks...)
		} else if c.Text != "" {
			blocks = append(blocks, transcript.Block{Type: transcript.BlockText, Text: c.Text})
		}
		c = transcript.Content{IsBlocks: true, Blocks: blocks}
	}
	a.Content = c
	if t := r.Tokens; t != nil {
		a.Usage = &transcript.Usage{InputTokens: t.Input, OutputTokens: t.Output, CachedInputTokens: t.Cached,
			Extra: map[string]json.RawMessage{"thoughts_tokens": input.Raw(t.Thoughts), "tool_tokens": input.Raw(t.Tool),
				"total_tokens": input.Raw(t.Total), "input_includes_cached": json.RawMessage("true")}}
	}
	nodes := []transcript.Node{a}
	if len(r.ToolCalls) == 0 {
		// A rewritten history (after a resume or a compression) may keep
		// the call only as a functionCall part of the content.
		for _, p := range parseParts(r.Content, r.Parts) {
			if fc := p.FunctionCall; fc != nil {
				r.ToolCalls = append(r.ToolCalls, toolCall{ID: fc.ID, Name: fc.Name, Args: fc.Args})
			}
		}
	}
	var unanswered []string
	for k, tc := range r.ToolCalls {
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("%s-call%d", m.key, k+1)
		}
		args := tc.Args
		if len(bytes.TrimSpace(args)) == 0 {
			args = json.RawMessage("{}")
		}
		nodes[0].ToolCalls = append(nodes[0].ToolCalls, transcript.ToolCall{ID: id, Name: tc.Name, Arguments: args})
		if tc.AgentID != "" {
			fo.agents[tc.AgentID] = nodes[0].ID
		}
		if answered[id] {
			if len(tc.Result) > 0 {
				fo.sink.Count("toolCalls.result", transcript.OutcomeMerged, "the same result is the following user message's functionResponse, imported as the tool node")
			}
			continue
		}
		var texts []string
		for _, res := range tc.Result {
			if res.FunctionResponse != nil {
				texts = append(texts, responseText(res.FunctionResponse.Response))
			}
		}
		if len(tc.Result) == 0 {
			unanswered = append(unanswered, id)
			continue
		}
		t := transcript.Node{ID: fmt.Sprintf("%s.r%d", m.key, k+1), Role: transcript.RoleTool, ToolCallID: id, Name: tc.Name,
			Content: transcript.TextContent(strings.Join(texts, "\n"))}
		if tc.Status != "" && tc.Status != "success" {
			t.SetMeta("is_error", true)
			t.SetMeta("gemini_status", tc.Status)
		}
		nodes = append(nodes, t)
	}
	if len(unanswered) > 0 {
		nodes[0].SetMeta("unanswered_tool_calls", unanswered)
		fo.sink.Warn(fo.file, m.line, fmt.Sprintf("message %q: %d tool call(s) without a result: imported and flagged in metadata.unanswered_tool_calls", m.key, len(unanswered)))
	}
	return nodes
}

// responseText is a functionResponse.response as text: its "output" (or
// "error") string when there is one, else its JSON.
func responseText(raw json.RawMessage) string {
	var obj struct {
		Output *string `json:"output"`
		Error  *string `json:"error"`
	}
	if json.Unmarshal(raw, &obj) == nil {
		if obj.Output != nil {
			return *obj.Output
		}
		if obj.Error != nil {
			return *obj.Error
		}
	}
	return input.Text(raw)
}

// content reads a message's content: a string, or Gemini parts
// ({text}, {inlineData}, {fileData}, …).
func content(raw, parts json.RawMessage) transcript.Content {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return transcript.TextContent(s)
	}
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = parts
	}
	var ps []part
	if json.Unmarshal(raw, &ps) != nil {
		if t := input.Text(raw); t != "" {
			return transcript.TextContent(t)
		}
		return transcript.TextContent("")
	}
	return partsContent(ps)
}

// partsContent is the text and media of parts; function calls and
// responses are not content (they become tool calls and tool nodes).
func partsContent(ps []part) transcript.Content {
	var blocks []transcript.Block
	for _, p := range ps {
		switch {
		case p.Text != nil && p.Thought:
			blocks = append(blocks, transcript.Block{Type: transcript.BlockThinking, Text: *p.Text})
		case p.Text != nil:
			blocks = append(blocks, transcript.Block{Type: transcript.BlockText, Text: *p.Text})
		case p.InlineData != nil:
			blocks = append(blocks, input.Image("", p.InlineData.MimeType, p.InlineData.Data))
		case p.FileData != nil:
			blocks = append(blocks, input.Image(p.FileData.FileURI, p.FileData.MimeType, ""))
		}
	}
	if len(blocks) == 1 && blocks[0].Type == transcript.BlockText {
		return transcript.TextContent(blocks[0].Text)
	}
	return transcript.Content{IsBlocks: true, Blocks: blocks}
}

// userNodes is a user message: one tool node per functionResponse part (in
// Gemini's wire format a function's result is a user turn), then a user node
// for the rest when there is any.
func userNodes(m *message, r record) []transcript.Node {
	ps := parseParts(r.Content, r.Parts)
	var tools []transcript.Node
	var rest []part
	for _, p := range ps {
		fr := p.FunctionResponse
		if fr == nil {
			rest = append(rest, p)
			continue
		}
		id := m.key
		if len(tools) > 0 {
			id = fmt.Sprintf("%s.r%d", m.key, len(tools)+1)
		}
		t := transcript.Node{ID: id, Role: transcript.RoleTool, ToolCallID: fr.ID, Name: fr.Name,
			Content: transcript.TextContent(responseText(fr.Response))}
		if !plainOutput(fr.Response) {
			// Kept whole so the gemini format renders it as it was sent.
			t.SetMeta("gemini_response", json.RawMessage(fr.Response))
		}
		if isErrorResponse(fr.Response) {
			t.SetMeta("is_error", true)
		}
		tools = append(tools, t)
	}
	if len(tools) == 0 {
		return []transcript.Node{{ID: m.key, Role: transcript.RoleUser, Content: content(r.Content, r.Parts)}}
	}
	if len(rest) > 0 {
		tools = append(tools, transcript.Node{ID: m.key + ".text", Role: transcript.RoleUser, Content: partsContent(rest)})
	}
	return tools
}

// plainOutput reports whether a functionResponse.response is exactly
// {"output": "<text>"}, which the tool node's text content says in full.
func plainOutput(raw json.RawMessage) bool {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || len(obj) != 1 {
		return false
	}
	var s string
	return json.Unmarshal(obj["output"], &s) == nil
}

func isErrorResponse(raw json.RawMessage) bool {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return false
	}
	_, ok := obj["error"]
	return ok
}

// conversation is what of a message reaches the model, in a canonical
// form: its type, text and media, function calls (from the content or from
// toolCalls: a rewritten history moves them into the content) and function
// responses. Timestamps, token counts, display fields and toolCalls'
// results (recorded again as the next user message) are left out.
func conversation(raw json.RawMessage) string {
	var r record
	if json.Unmarshal(raw, &r) != nil {
		return string(raw)
	}
	ps := parseParts(r.Content, r.Parts)
	type call struct {
		ID, Name string
		Args     any
	}
	var calls []call
	seen := map[string]bool{}
	addCall := func(id, name string, args json.RawMessage) {
		if seen[id+"\x00"+name] {
			return
		}
		seen[id+"\x00"+name] = true
		var a any
		json.Unmarshal(args, &a)
		calls = append(calls, call{id, name, a})
	}
	var responses []any
	for _, p := range ps {
		if fc := p.FunctionCall; fc != nil {
			addCall(fc.ID, fc.Name, fc.Args)
		}
		if fr := p.FunctionResponse; fr != nil {
			var v any
			json.Unmarshal(fr.Response, &v)
			responses = append(responses, []any{fr.ID, fr.Name, v})
		}
	}
	for _, tc := range r.ToolCalls {
		addCall(tc.ID, tc.Name, tc.Args)
	}
	c := partsContent(ps)
	if ps == nil {
		c = content(r.Content, r.Parts)
	}
	if (!c.IsBlocks && c.Text == "") || (c.IsBlocks && len(c.Blocks) == 0) {
		c = transcript.Content{}
	}
	out, _ := json.Marshal([]any{r.Type, c, calls, responses})
	return string(out)
}

// isCheckpoint reports whether a one-line file is a /chat save checkpoint:
// an array of contents, or an object with "history" and no "sessionId".
func isCheckpoint(line []byte) bool {
	h := bytes.TrimSpace(line)
	if len(h) == 0 {
		return false
	}
	if h[0] == '[' {
		return true
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(h, &obj) != nil {
		return false
	}
	_, hist := obj["history"]
	_, sess := obj["sessionId"]
	return hist && !sess
}

// checkpoint reads a /chat save checkpoint's history: Gemini API contents
// ({role, parts}), written by Gemini CLI as it sent them. Each content is
// one message of the chain (ids "<n>", the file's order), read by the same
// rules as a recording's messages.
func (fo *fold) checkpoint(d *input.Doc, count func(string, string, string)) error {
	answered := map[string]bool{}
	return d.Each("Gemini contents {role, parts}", func(i int) error {
		var c struct {
			Role  string          `json:"role"`
			Parts json.RawMessage `json:"parts"`
		}
		if err := d.Value(&c, "a content {role, parts}"); err != nil {
			return err
		}
		typ := map[string]string{"user": "user", "model": "gemini"}[c.Role]
		if typ == "" {
			return d.Errorf(`content %d: "role" must be "user" or "model", got %q`, i+1, c.Role)
		}
		if len(c.Parts) == 0 {
			c.Parts = json.RawMessage("[]")
		}
		// A checkpoint saved in a resumed session holds each earlier
		// result twice, as the CLI sends it (docs/INTEROP-gemini-cli.md):
		// a call has one tool node.
		var parts []json.RawMessage
		if json.Unmarshal(c.Parts, &parts) == nil {
			kept := parts[:0]
			for _, raw := range parts {
				var p part
				json.Unmarshal(raw, &p)
				if fr := p.FunctionResponse; fr != nil && fr.ID != "" {
					if answered[fr.ID] {
						count("checkpoint functionResponse", transcript.OutcomeMerged, "a function result the client repeats after a resume: the call's one tool node holds it")
						continue
					}
					answered[fr.ID] = true
				}
				kept = append(kept, raw)
			}
			c.Parts, _ = json.Marshal(kept)
		}
		id := fmt.Sprintf("c%d", i+1)
		fo.add(id, map[string]json.RawMessage{"id": input.Raw(id), "type": input.Raw(typ), "content": c.Parts}, d.Line())
		return nil
	})
}

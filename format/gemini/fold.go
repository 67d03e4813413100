package gemini

// This file folds a session file's records into its message list: appends, rewrites of the whole list on a resume or a compression, rewinds, and the legacy one-document format.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// read folds one file; used holds the node ids taken so far (shared by a
// session and its sub-agents, which land in one session). A sub-agent's
// file (subagent) sits in a caller subtree, where no summary node may be,
// so its compressions stay rewrites (a branch).
func read(ctx context.Context, file string, opts Options, used map[string]int, subagent bool) (*fold, map[[3]string]int, error) {
	fo := &fold{file: file, byID: map[string]int{}, used: used, agents: map[string]string{}, inSubtree: subagent}
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
	if _, ok := rec["parentUuid"]; ok {
		// Qwen Code's and Claude Code's records carry a sessionId too, but
		// Gemini CLI's never link by uuid/parentUuid: not its metadata.
		return errorf(`a record with "parentUuid" (Qwen Code's or Claude Code's), not Gemini CLI's`)
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
	if fo.compress(full, k, msgs, ids, line, count) {
		return nil
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
	pred := -1
	if len(fo.path) > 0 {
		pred = fo.path[len(fo.path)-1]
	}
	fo.path = append(fo.path, fo.newMessage(id, m, line, pred))
}

// newMessage records a message after message pred (-1: a root) and
// returns its index; it does not touch the current list.
func (fo *fold) newMessage(id string, m map[string]json.RawMessage, line, pred int) int {
	raw, _ := json.Marshal(m)
	key := input.ID(id, fmt.Sprintf("g%d", line))
	if n := fo.used[key]; n > 0 {
		fo.used[key] = n + 1
		key = fmt.Sprintf("%s~%d", key, n+1)
	} else {
		fo.used[key] = 1
	}
	fo.msgs = append(fo.msgs, &message{key: key, id: id, raw: raw, line: line, pred: pred})
	fo.byID[id] = len(fo.msgs) - 1
	return len(fo.msgs) - 1
}

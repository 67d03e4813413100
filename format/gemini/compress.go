package gemini

// This file imports Gemini CLI's own compression as a summary node, as the Claude Code and Codex importers import their clients' compactions.

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/ctxfold/ctxfold/transcript"
)

// snapshotTag opens the summary Gemini CLI 0.61 writes when it compresses
// its history (its chatCompressionService): the rewritten list is the
// messages it keeps in front (the session context), a user message with
// the <state_snapshot>, the model's acknowledgement, then the turns it
// keeps verbatim under new ids.
const snapshotTag = "<state_snapshot>"

// compress applies a rewritten message list that is the client's
// compression: the messages it replaced (those after the k common ones
// and before the kept turns) are covered by one summary node, whose
// render is the snapshot and the acknowledgement as sent; the kept turns
// are the messages already imported (they take the list's new ids), so
// the spine stays what the client sent before and the view after the
// summary is what it sends from now on. It reports false, changing
// nothing, when the list is not a compression.
func (fo *fold) compress(full []int, k int, msgs []map[string]json.RawMessage, ids []string, line int, count func(string, string, string)) bool {
	if fo.inSubtree || k+1 >= len(msgs) || !isSnapshot(msgs[k]) || !isType(msgs[k+1], "gemini", "model") {
		return false
	}
	old, rest := full[k:], msgs[k+2:]
	j := fo.keptFrom(old, rest)
	covered := old[:j]
	if len(covered) == 0 {
		return false
	}
	kept := old[j:]
	for i, idx := range kept {
		fo.msgs[idx].raw = overlay(fo.msgs[idx].raw, rest[i])
		fo.msgs[idx].id = ids[k+2+i]
		fo.byID[ids[k+2+i]] = idx
	}
	s := fo.newMessage(ids[k], msgs[k], line, fo.msgs[covered[0]].pred)
	fo.msgs[s].covers = covered
	a := fo.newMessage(ids[k+1], msgs[k+1], line, covered[len(covered)-1])
	fo.msgs[a].ack = true
	fo.path = append(append(full[:k:k], s, a), kept...)
	fo.cut = nil
	count("$set", transcript.OutcomeMerged, "the client's compression: a summary node covers the turns it compressed; the turns it kept follow")
	for i, m := range rest[len(kept):] {
		fo.add(ids[k+2+len(kept)+i], m, line)
	}
	return true
}

// keptFrom is the first index j of old whose messages old[j:] are, in
// order and by conversation content, the first messages of rest: the
// turns the compression kept (len(old) when it kept none).
func (fo *fold) keptFrom(old []int, rest []map[string]json.RawMessage) int {
	for j := 0; j < len(old); j++ {
		if len(old)-j > len(rest) {
			continue
		}
		same := true
		for i, idx := range old[j:] {
			raw, _ := json.Marshal(rest[i])
			if conversation(fo.msgs[idx].raw) != conversation(raw) {
				same = false
				break
			}
		}
		if same {
			return j
		}
	}
	return len(old)
}

func isType(m map[string]json.RawMessage, types ...string) bool {
	var typ string
	if json.Unmarshal(m["type"], &typ) != nil {
		return false
	}
	for _, t := range types {
		if typ == t {
			return true
		}
	}
	return false
}

func isSnapshot(m map[string]json.RawMessage) bool {
	if !isType(m, "user") {
		return false
	}
	for _, p := range parseParts(m["content"], m["parts"]) {
		if p.Text != nil && strings.HasPrefix(strings.TrimSpace(*p.Text), snapshotTag) {
			return true
		}
	}
	return false
}

// emitCompression writes the summary of a compression (the ack adds no
// node: the summary carries it) and reports whether m was one of them.
// covered holds each earlier message's node ids.
func (fo *fold) emitCompression(m *message, tails []string, emitted [][]string, i int) (bool, error) {
	if m.ack {
		fo.sink.Count("message/gemini", transcript.OutcomeMerged, "the compression's acknowledgement: sent with the snapshot, carried by the summary node")
		tails[i] = tails[m.pred]
		return true, nil
	}
	if m.covers == nil {
		return false, nil
	}
	pred := ""
	if m.pred >= 0 {
		pred = tails[m.pred]
	}
	tails[i] = pred
	var covers []string
	var expand func(idx int)
	expand = func(idx int) {
		for _, c := range fo.msgs[idx].covers {
			expand(c)
		}
		covers = append(covers, emitted[idx]...)
	}
	for _, c := range m.covers {
		expand(c)
	}
	if len(covers) == 0 {
		fo.sink.Count("compression", transcript.OutcomeSkipped, "nothing imported before it to cover")
		return true, nil
	}
	n, err := fo.summaryNode(m, i)
	if err != nil {
		return true, err
	}
	n.Predecessor = pred
	n.Caller = fo.caller
	n.SetMeta("covers_ids", covers)
	fo.sink.Count("compression", transcript.OutcomeImported, "")
	emitted[i] = nil
	return true, fo.sink.Node(n)
}

// summaryNode is the summary of compression message m (the snapshot):
// its text, and the contents the client sends in place of the covered
// turns (the snapshot, then the acknowledgement, the message after it).
func (fo *fold) summaryNode(m *message, i int) (transcript.Node, error) {
	var snap record
	if err := json.Unmarshal(m.raw, &snap); err != nil {
		return transcript.Node{}, err
	}
	var texts []string
	for _, p := range parseParts(snap.Content, snap.Parts) {
		if p.Text != nil {
			texts = append(texts, *p.Text)
		}
	}
	contents := []map[string]json.RawMessage{{"role": json.RawMessage(`"user"`), "parts": sentParts(snap)}}
	if i+1 < len(fo.msgs) && fo.msgs[i+1].ack {
		var ack record
		if json.Unmarshal(fo.msgs[i+1].raw, &ack) == nil {
			contents = append(contents, map[string]json.RawMessage{"role": json.RawMessage(`"model"`), "parts": sentParts(ack)})
		}
	}
	n := transcript.Node{ID: transcript.SummaryIDPrefix + m.key, Role: transcript.SummaryRole, Name: transcript.SummaryName,
		Content: transcript.TextContent(transcript.SummaryPrefix + strings.Join(texts, "\n")), CreatedAt: snap.Timestamp}
	n.SetMeta("compaction", true)
	n.SetMeta("source", "gemini-cli compression")
	n.SetMeta(transcript.MetaGeminiContents, contents)
	return n, nil
}

// sentParts is a message's content as the Gemini parts the client sends:
// a part list as recorded, a string as one text part.
func sentParts(r record) json.RawMessage {
	raw := bytes.TrimSpace(r.Content)
	if len(raw) == 0 || string(raw) == "null" {
		raw = bytes.TrimSpace(r.Parts)
	}
	if len(raw) > 0 && raw[0] == '[' {
		return raw
	}
	var s string
	_ = json.Unmarshal(raw, &s)
	b, _ := json.Marshal([]map[string]string{{"text": s}})
	return b
}

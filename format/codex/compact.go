package codex

// This file imports a compacted record: the summary node and the replacement history Codex put in the model's context.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// compacted becomes a summary node covering every real turn before it
// except the base instructions (docs/FORMAT.md §4): its predecessor is the
// first covered node's (the base instructions or the chain's root), its
// content is what Codex put in the model's context instead, as text, and
// metadata.responses_input holds those items as sent, so render shows what
// the model saw and render --raw everything.
func (st *state) compacted(rec record) error {
	var c struct {
		Message     string            `json:"message"`
		Replacement []json.RawMessage `json:"replacement_history"`
	}
	if err := input.Unmarshal(rec.Payload, &c); err != nil {
		return st.lines.Errorf("compacted payload: %s", input.JSONErrorText(err))
	}
	st.markCompactionRequest(c.Message, c.Replacement)
	if err := st.flush(); err != nil {
		return err
	}
	covers := st.real
	if st.base != "" && len(covers) > 0 && covers[0] == st.base {
		// Codex rebuilds the history after the base instructions, which
		// it sends before the replacement history too.
		covers = covers[1:]
	}
	if len(covers) == 0 {
		st.sink.Count("compacted", transcript.OutcomeSkipped, "nothing before it to cover")
		return nil
	}
	text := c.Message
	if len(c.Replacement) > 0 {
		text = replacementText(c.Replacement)
	}
	n := transcript.Node{ID: transcript.SummaryIDPrefix + st.id(), Role: transcript.SummaryRole, Name: transcript.SummaryName,
		Content: transcript.TextContent(transcript.SummaryPrefix + text), CreatedAt: rec.Timestamp}
	if covers[0] != st.real[0] {
		n.Predecessor = st.base
	}
	n.SetMeta("compaction", true)
	// st.real is the chain in order: the summary is handed over as its
	// span (docs/FORMAT.md §4), not as every id again at each compaction.
	n.SetMeta(transcript.MetaCoversSpan, transcript.SpanOf(covers))
	n.SetMeta("source", "codex compacted record")
	if len(c.Replacement) > 0 {
		// The items as sent, for render --format responses (docs/FORMAT.md §5).
		n.SetMeta(transcript.MetaResponsesInput, asSent(c.Replacement))
	}
	st.sink.Count("compacted", transcript.OutcomeImported, "")
	return st.sink.Node(n)
}

// markCompactionRequest: a compaction Codex runs itself (for a provider
// without a compaction endpoint) is a request of its own, recorded like a
// turn's — the model's summary as an assistant message with the request's
// usage — right before the compacted record that hands that summary on.
// That request carried the summarization prompt and no tool definitions,
// so its usage is not the conversation's: it moves to
// metadata.codex_compaction_usage, and calibration does not take it for a
// turn (docs/ESTIMATE.md, "The anchor"; recorded in
// testdata/interop/codex/*/compaction-limit). A remote compaction records
// no such message.
func (st *state) markCompactionRequest(message string, replacement []json.RawMessage) {
	g := st.g
	if g == nil || g.assistant == nil || g.assistant.Usage == nil || len(g.assistant.ToolCalls) > 0 || len(g.results) > 0 || len(g.after) > 0 {
		return
	}
	summary := strings.TrimSpace(g.assistant.Content.PlainText())
	if summary == "" {
		return
	}
	handed := strings.HasSuffix(strings.TrimSpace(message), summary)
	if !handed && len(replacement) > 0 {
		handed = strings.Contains(replacementText(replacement), summary)
	}
	if !handed {
		return
	}
	g.assistant.SetMeta("codex_compaction_usage", g.assistant.Usage)
	g.assistant.Usage = nil
}

// asSent drops from replacement items the keys Codex keeps for itself
// and strips before a request (internal_chat_message_metadata_passthrough,
// 0.1xx); everything else is kept byte for byte.
func asSent(items []json.RawMessage) []json.RawMessage {
	out := make([]json.RawMessage, len(items))
	for i, raw := range items {
		out[i] = raw
		var m map[string]json.RawMessage
		if !bytes.Contains(raw, []byte(`"internal_`)) || json.Unmarshal(raw, &m) != nil {
			continue
		}
		for k := range m {
			if strings.HasPrefix(k, "internal_") {
				delete(m, k)
			}
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // keep "<" as Codex wrote it
		if enc.Encode(m) == nil {
			out[i] = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		}
	}
	return out
}

// replacementText renders Codex's replacement history as the text the
// model reads in place of the covered turns; the opaque compaction item
// is named, its bytes kept in metadata.
func replacementText(items []json.RawMessage) string {
	if text, ok := soleUserMessage(items); ok {
		return text
	}
	var out []string
	for _, raw := range items {
		var it item
		if json.Unmarshal(raw, &it) != nil {
			continue
		}
		switch it.Type {
		case "message":
			var texts []string
			for _, b := range textBlocks(it.Content) {
				if b.Type == transcript.BlockText {
					texts = append(texts, b.Text)
				} else {
					texts = append(texts, "[image]")
				}
			}
			out = append(out, it.Role+": "+strings.Join(texts, "\n"))
		case "compaction", "compaction_summary":
			size := 0
			if it.EncryptedContent != nil {
				size = len(*it.EncryptedContent)
			}
			out = append(out, fmt.Sprintf("[encrypted compaction summary: %d bytes, kept in metadata.codex_replacement_history]", size))
		default:
			out = append(out, "["+it.Type+"]")
		}
	}
	return strings.Join(out, "\n\n")
}

// soleUserMessage is the text of a replacement history that is one user
// message of text: the summary alone, as 'ctxfold export --to codex' writes
// it, reads back as that summary.
func soleUserMessage(items []json.RawMessage) (string, bool) {
	if len(items) != 1 {
		return "", false
	}
	var it item
	if json.Unmarshal(items[0], &it) != nil || it.Type != "message" || it.Role != "user" {
		return "", false
	}
	var texts []string
	for _, b := range textBlocks(it.Content) {
		if b.Type != transcript.BlockText {
			return "", false
		}
		texts = append(texts, b.Text)
	}
	return strings.Join(texts, "\n"), true
}

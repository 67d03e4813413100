package pi

// This file folds a session's entries into nodes the way pi's
// buildSessionContext (core/session-manager.js) builds what it sends: the
// id/parentId tree as DAG branches, entries the model never reads
// (settings, labels, extension state) transparent in the chain, and a
// compaction as a summary node covering what it replaced.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/transcript"
)

// Decoder turns a pi session's entries, one JSON object at a time and
// in the order pi appended them, into nodes for one conversation. It is
// exported for the formats that keep pi's entries elsewhere (OpenClaw's
// transcript_events rows).
type Decoder struct {
	file string
	sink transcript.ImportSink
	// byID holds every tree entry read so far.
	byID map[string]*ent
	// byIndex is the entries' ids by position (the header is 0), for a
	// version 1 compaction's firstKeptEntryIndex.
	byIndex []string
	leaf    string
	// prev is the last entry, the parent of an entry without ids (version 1).
	prev  string
	model string
	// provider is model's provider (models.json's key).
	provider string
	header   bool
	// ID and Cwd are the header's session id and working directory.
	ID, Cwd string
	// harness is the program that wrote the session through pi's agent,
	// when its own entries say so: "openclaw" for OpenClaw's custom
	// entries (model-snapshot, openclaw:…), which come before the first
	// message. Root nodes carry it (pi_harness): its system prompt and
	// tools are OpenClaw's, not pi's (estimate's prior).
	harness string
}

// ent is what the fold keeps of an entry: its parent, its node ("" when it
// became none) and the node its children follow.
type ent struct {
	parent string
	node   string
	at     string
	// open are the tool calls still without a result where the entry
	// stands (inherited from its parent).
	open []openCall
}

type openCall struct{ id, name string }

// NewDecoder returns a decoder writing to sink; file names errors.
func NewDecoder(sink transcript.ImportSink, file string) *Decoder {
	return &Decoder{file: file, sink: sink, byID: map[string]*ent{}}
}

// Entry folds one entry, line being where it was read (for errors).
func (d *Decoder) Entry(raw []byte, line int) error {
	var e entry
	if err := input.Unmarshal(raw, &e); err != nil {
		return input.Errorf(d.file, line, "expected a pi session entry (a JSON object with a \"type\"): %s", input.JSONErrorText(err))
	}
	if e.Type == "" {
		return input.Errorf(d.file, line, "expected a pi session entry: missing \"type\"")
	}
	if e.Type == "session" {
		if d.header || len(d.byID) > 0 {
			d.sink.Count("session", transcript.OutcomeSkipped, "a second header: pi reads the first")
			return nil
		}
		d.header, d.Cwd = true, e.Cwd
		if e.ModelID != "" { // a version 1 header names the model
			d.model, d.provider = e.ModelID, e.Provider
		}
		if e.ID != nil {
			d.ID = *e.ID
		}
		d.byIndex = append(d.byIndex, "")
		d.sink.Count("session", transcript.OutcomeMerged, "the header: the session's id and working directory, in the session's metadata")
		return nil
	}
	id, parent, err := d.place(&e, line)
	if err != nil {
		return err
	}
	en := &ent{parent: parent}
	if parent != "" {
		en.at, en.open = d.byID[parent].at, d.byID[parent].open
	}
	if err := d.fold(&e, id, en, line); err != nil {
		return input.Errorf(d.file, line, "entry %q (%s): %v", id, e.Type, err)
	}
	d.byID[id] = en
	d.byIndex = append(d.byIndex, id)
	d.leaf, d.prev = id, id
	return nil
}

// place returns the entry's id and parent: as recorded, or for a version 1
// entry (no ids) its line and the entry before it, as pi's migration does.
func (d *Decoder) place(e *entry, line int) (id, parent string, err error) {
	if e.ID == nil {
		id = fmt.Sprintf("line%d", line)
		if d.byID[id] != nil {
			return "", "", input.Errorf(d.file, line, "an entry without an id after entries with ids")
		}
		return id, d.prev, nil
	}
	if *e.ID == "" {
		return "", "", input.Errorf(d.file, line, "expected a non-empty entry \"id\"")
	}
	id = *e.ID
	if d.byID[id] != nil {
		return "", "", input.Errorf(d.file, line, "entry id %q is used twice", id)
	}
	if e.ParentID != nil && *e.ParentID != "" {
		parent = *e.ParentID
		if d.byID[parent] == nil {
			return "", "", input.Errorf(d.file, line, "entry %q: parentId %q names no earlier entry", id, parent)
		}
	}
	return id, parent, nil
}

// fold turns one tree entry into what the model reads of it.
func (d *Decoder) fold(e *entry, id string, en *ent, line int) error {
	switch e.Type {
	case "message":
		if e.Message == nil {
			return fmt.Errorf("a message entry without a \"message\"")
		}
		return d.message(e, id, en)
	case "custom_message":
		c, err := userContent(e.Content)
		if err != nil {
			return err
		}
		if !c.IsBlocks {
			c = textBlocks(c.Text)
		}
		n := d.node(e, id, en, transcript.RoleUser, c)
		n.SetMeta("pi_custom_type", e.CustomType)
		return d.emit("custom_message", n, en)
	case "branch_summary":
		if e.Summary == nil || *e.Summary == "" {
			d.sink.Count("branch_summary", transcript.OutcomeSkipped, "no summary text: pi sends nothing for it")
			return nil
		}
		n := d.node(e, id, en, transcript.RoleUser, textBlocks(branchSummaryPrefix+*e.Summary+branchSummarySuffix))
		n.SetMeta("pi_branch_summary_from", e.FromID)
		return d.emit("branch_summary", n, en)
	case "compaction":
		return d.compaction(e, id, en, line)
	case "model_change":
		d.model, d.provider = e.ModelID, e.Provider
		d.sink.Count(e.Type, transcript.OutcomeMerged, "the model, in the session's metadata; pi sends nothing for it")
	case "thinking_level_change", "label", "session_info", "custom":
		if e.Type == "custom" && (e.CustomType == "model-snapshot" || strings.HasPrefix(e.CustomType, "openclaw")) {
			d.harness = "openclaw"
		}
		d.sink.Count(e.Type, transcript.OutcomeSkipped, "settings and extension state: pi sends nothing for it")
	default:
		d.sink.Count(e.Type, transcript.OutcomeSkipped, "an entry type this version does not know (kept transparent in the tree)")
	}
	return nil
}

// message imports a message entry as the node pi's convertToLlm sends.
func (d *Decoder) message(e *entry, id string, en *ent) error {
	m := e.Message
	rec := "message/" + m.Role
	n := d.node(e, id, en, transcript.RoleUser, transcript.Content{})
	switch m.Role {
	case "user":
		c, err := userContent(m.Content)
		if err != nil {
			return err
		}
		n.Content = c
	case "assistant":
		if why := skipReply(m); why != "" {
			d.sink.Count(rec, transcript.OutcomeSkipped, why)
			return nil
		}
		if err := assistantNode(&n, m); err != nil {
			return err
		}
		if m.Model != "" {
			d.model, d.provider = m.Model, m.Provider
		}
	case "toolResult":
		if err := toolNode(&n, m); err != nil {
			return err
		}
	case "bashExecution":
		if m.ExcludeFromContext {
			d.sink.Count(rec, transcript.OutcomeSkipped, "a !! command: excluded from the model's context")
			return nil
		}
		n.Content = textBlocks(bashText(m))
	case "custom", "hookMessage":
		c, err := userContent(m.Content)
		if err != nil {
			return err
		}
		if !c.IsBlocks {
			c = textBlocks(c.Text)
		}
		n.Content = c
	case "branchSummary":
		n.Content = textBlocks(branchSummaryPrefix + m.Summary + branchSummarySuffix)
	case "compactionSummary":
		n.Content = textBlocks(compactionPrefix + m.Summary + compactionSuffix)
	default:
		d.sink.Count(rec, transcript.OutcomeSkipped, "a message role this version does not know")
		return nil
	}
	return d.emit(rec, n, en)
}

func (d *Decoder) node(e *entry, id string, en *ent, role transcript.Role, c transcript.Content) transcript.Node {
	n := transcript.Node{ID: input.ID(id, id), Predecessor: en.at, Role: role, Content: c, CreatedAt: stamp(e.Timestamp)}
	if n.ID != id {
		n.SetMeta("pi_id", id)
	}
	return n
}

// emit hands n to the sink; the entry's children follow it.
// A tool result answers a call still open on its path; any other node
// first closes the open calls as pi does when it sends them
// (transformMessages: a synthetic "No result provided" result each).
func (d *Decoder) emit(rec string, n transcript.Node, en *ent) error {
	if n.Role == transcript.RoleTool {
		i := slices.IndexFunc(en.open, func(c openCall) bool { return c.id == n.ToolCallID })
		if i < 0 {
			d.sink.Count(rec, transcript.OutcomeSkipped, "a result whose call is in no reply pi sends (an errored or aborted one, or one a user message already closed)")
			return nil
		}
		en.open = slices.Delete(slices.Clone(en.open), i, i+1)
	} else {
		if err := d.closeOpen(n.ID, en); err != nil {
			return err
		}
		n.Predecessor = en.at
	}
	if n.Predecessor == "" && d.harness != "" {
		n.SetMeta("pi_harness", d.harness)
	}
	if err := d.sink.Node(n); err != nil {
		return err
	}
	en.node, en.at = n.ID, n.ID
	if len(n.ToolCalls) > 0 {
		en.open = make([]openCall, len(n.ToolCalls))
		for i, c := range n.ToolCalls {
			en.open[i] = openCall{c.ID, c.Name}
		}
	}
	d.sink.Count(rec, transcript.OutcomeImported, "")
	return nil
}

// closeOpen adds the result pi synthesises for each call still open
// before the node next.
func (d *Decoder) closeOpen(next string, en *ent) error {
	for k, c := range en.open {
		n := transcript.Node{ID: fmt.Sprintf("%s.noresult%d", next, k), Predecessor: en.at, Role: transcript.RoleTool,
			ToolCallID: c.id, Name: c.name, Content: transcript.TextContent("No result provided")}
		n.SetMeta("is_error", true)
		n.SetMeta("pi_synthetic", true)
		if err := d.sink.Node(n); err != nil {
			return err
		}
		en.at = n.ID
		d.sink.Count("toolCall without a result", transcript.OutcomeImported, "pi sends \"No result provided\" for it (a synthetic tool node)")
	}
	en.open = nil
	return nil
}

// compaction imports a compaction entry as a summary node. pi sends, from
// then on, the summary, the entries from firstKeptEntryId up to the
// compaction, and what follows it: the summary covers every node before
// firstKeptEntryId on the compaction's path (a later compaction's covers
// extend an earlier one's, docs/FORMAT.md §4), and the compaction entry's
// children follow the last kept node. When firstKeptEntryId is not on the
// path pi keeps nothing before the compaction.
func (d *Decoder) compaction(e *entry, id string, en *ent, line int) error {
	if e.Summary == nil {
		return fmt.Errorf("a compaction without a \"summary\"")
	}
	first := e.FirstKeptEntryID
	if first == "" && e.FirstKeptEntryIndex != nil && *e.FirstKeptEntryIndex >= 0 && *e.FirstKeptEntryIndex < len(d.byIndex) {
		first = d.byIndex[*e.FirstKeptEntryIndex]
	}
	var path []string
	for p := en.parent; p != ""; p = d.byID[p].parent {
		path = append(path, p)
	}
	var covers []string
	for i := len(path) - 1; i >= 0 && path[i] != first; i-- {
		if n := d.byID[path[i]].node; n != "" {
			covers = append(covers, n)
		}
	}
	if len(covers) == 0 {
		d.sink.Count("compaction", transcript.OutcomeSkipped, "nothing imported before its first kept entry to cover")
		return nil
	}
	pred := d.predOf(covers[0], path)
	n := transcript.Node{ID: transcript.SummaryIDPrefix + id, Predecessor: pred, Role: transcript.SummaryRole, Name: transcript.SummaryName,
		CreatedAt: stamp(e.Timestamp), Content: transcript.TextContent(transcript.SummaryPrefix + compactionPrefix + *e.Summary + compactionSuffix)}
	n.SetMeta("compaction", true)
	n.SetMeta("covers_ids", covers)
	n.SetMeta("source", "pi compaction")
	meta := map[string]any{"first_kept_entry_id": first, "from_hook": e.FromHook}
	if e.TokensBefore != nil {
		meta["tokens_before"] = *e.TokensBefore
	}
	n.SetMeta("pi", meta)
	if err := d.sink.Node(n); err != nil {
		return err
	}
	d.sink.Count("compaction", transcript.OutcomeImported, "")
	return nil
}

// predOf is the predecessor of the node of the path's entry whose node is
// id: the node its parent entry's children follow.
func (d *Decoder) predOf(id string, path []string) string {
	for _, p := range path {
		if en := d.byID[p]; en.node == id {
			if en.parent == "" {
				return ""
			}
			return d.byID[en.parent].at
		}
	}
	return ""
}

// ProviderModel is the provider and model the session used last (pi's
// models.json keys; openclaw's models.providers).
func (d *Decoder) ProviderModel() (provider, model string) { return d.provider, d.model }

// Close names HEAD (the node the last entry follows: pi's leaf is the
// last entry it appended) and the model.
func (d *Decoder) Close() error {
	if en := d.byID[d.leaf]; en != nil && en.at != "" {
		d.sink.SetHead(en.at)
	}
	if d.model != "" {
		d.sink.SetModel(d.model)
	}
	return nil
}

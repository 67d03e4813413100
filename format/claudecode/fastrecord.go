package claudecode

// This file decodes the usual Claude Code line without reflection: the
// first pass's record and its scanned content read through input.Skim,
// every other line through decodeRecord's general path (docs/BENCHMARKS.md,
// "the cold path", step 5).

import (
	"encoding/json"

	"github.com/ctxfold/ctxfold/format/input"
)

// The names of each decoded struct's fields as input.NearName compares
// them.
var (
	recordNorms = []string{"type", "subtype", "uuid", "parentuuid", "logicalparentuuid", "issidechain",
		"iscompactsummary", "agentid", "requestid", "parenttooluseid", "message", "rendered", "renderedrole",
		"compactmetadata", "hash", "tail", "tooluseresult", "data", "content", "sourcetooluseid", "attachment"}
	messageNorms  = []string{"id", "role", "model", "content", "usage", "stopreason"}
	agentNorms    = []string{"agentid"}
	progressNorms = []string{"type", "agentid"}
	scanNorms     = []string{"type", "text", "id", "name", "input", "tooluseid"}
)

// fastRecord decodes body into r (which must be zero) as decodeRecord
// would, and scans its content as scanContent would. It returns false,
// with r zero again, for a line it does not decode with certainty:
// anything malformed, a field of an unexpected type, a name encoding/json
// would fold onto a field, the rarer fields (rendered, compactMetadata).
// ascii says every string of the line was ASCII.
func fastRecord(body []byte, r *record) (ok, ascii bool) {
	s := input.NewSkim(body)
	s.Object(recordNorms, func(key []byte) uint32 { return r.field(&s, key) })
	if s.End() {
		r.scanContentFast(&s)
	}
	if !s.OK() {
		*r = record{}
		return false, false
	}
	return true, s.ASCII()
}

// field decodes the value of the member named key and returns its bit, or
// 0 (nothing read) for a name that is not record's. It fails s for a
// field fastRecord leaves to decodeRecord.
func (r *record) field(s *input.Skim, key []byte) uint32 {
	switch string(key) {
	case "type":
		r.Type = s.Str()
		return 1 << 0
	case "subtype":
		r.Subtype = s.Str()
		return 1 << 1
	case "uuid":
		r.UUID = s.Str()
		return 1 << 2
	case "parentUuid":
		r.ParentUUID = s.Str()
		return 1 << 3
	case "logicalParentUuid":
		r.LogicalParentUUID = s.Str()
		return 1 << 4
	case "isSidechain":
		r.IsSidechain = s.Bool()
		return 1 << 5
	case "isCompactSummary":
		r.IsCompactSummary = s.Bool()
		return 1 << 6
	case "agentId":
		r.AgentID = s.Str()
		return 1 << 7
	case "requestId":
		r.RequestID = s.Str()
		return 1 << 8
	case "parentToolUseID":
		r.ParentToolUseID = s.Str()
		return 1 << 9
	case "sourceToolUseID":
		r.SourceToolUseID = s.Str()
		return 1 << 20
	case "renderedRole":
		r.RenderedRole = s.Str()
		return 1 << 10
	case "hash":
		r.Hash = s.Str()
		return 1 << 11
	}
	return r.objectField(s, key)
}

// objectField is field for the members whose values are not strings.
func (r *record) objectField(s *input.Skim, key []byte) uint32 {
	switch string(key) {
	case "message":
		if !s.Null() {
			r.Message = fastMessage(s)
		}
		return 1 << 12
	case "tail":
		r.Tail = fastStrings(s)
		return 1 << 13
	case "toolUseResult":
		r.ToolUseResult = fastAgentRef(s)
		return 1 << 14
	case "data":
		if !s.Null() {
			d := &progressData{}
			s.Object(progressNorms, d.field(s))
			r.Data = d
		}
		return 1 << 15
	case "rendered":
		// An array of pieces, each decoded by rendered's own decoder, as
		// the full decoder does; anything else is left to it.
		if raw := s.Raw(); string(raw) != "null" && (len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &r.Rendered) != nil) {
			s.Fail()
		}
		return 1 << 16
	case "compactMetadata":
		if !s.Null() {
			s.Fail()
		}
		return 1 << 17
	case "attachment":
		// An object or null, read as the full decoder reads it
		// (attachmentHint's own decoder, called for null too); anything
		// else is left to it.
		if raw := s.Raw(); len(raw) == 0 || raw[0] != '{' && string(raw) != "null" || r.Attachment.UnmarshalJSON(raw) != nil {
			s.Fail()
		}
		return 1 << 18
	case "content":
		r.Content = json.RawMessage(s.Raw())
		return 1 << 19
	}
	return 0
}

// fastMessage reads a message object; any other value fails (decodeRecord
// notes it in badMessage).
func fastMessage(s *input.Skim) *message {
	m := &message{}
	s.Object(messageNorms, func(key []byte) uint32 {
		switch string(key) {
		case "id":
			m.ID = s.Str()
			return 1 << 0
		case "role":
			m.Role = s.Str()
			return 1 << 1
		case "model":
			m.Model = s.Str()
			return 1 << 2
		case "content":
			m.Content = json.RawMessage(s.Raw())
			return 1 << 3
		case "usage":
			m.Usage = json.RawMessage(s.Raw())
			return 1 << 4
		case "stop_reason":
			m.StopReason = s.Str()
			return 1 << 5
		}
		return 0
	})
	return m
}

// fastStrings reads an array of strings, or null.
func fastStrings(s *input.Skim) []string {
	if s.Null() || !s.Open('[') {
		return nil
	}
	out := []string{}
	for first := true; s.More(']', &first); {
		if s.Peek() != '"' {
			s.Fail()
			return nil
		}
		out = append(out, s.Str())
	}
	return out
}

// fastAgentRef reads a toolUseResult as agentRef.UnmarshalJSONFrom does:
// an object's agentId, an empty agentRef for any other value.
func fastAgentRef(s *input.Skim) *agentRef {
	if s.Null() {
		return nil
	}
	a := &agentRef{}
	if s.Peek() != '{' {
		s.Skip()
		return a
	}
	s.Object(agentNorms, func(key []byte) uint32 {
		if string(key) != "agentId" {
			return 0
		}
		a.AgentID = s.Str()
		return 1
	})
	return a
}

// field reads a progress line's data object.
func (d *progressData) field(s *input.Skim) func([]byte) uint32 {
	return func(key []byte) uint32 {
		switch string(key) {
		case "type":
			d.Type = s.Str()
			return 1 << 0
		case "agentId":
			d.AgentID = s.Str()
			return 1 << 1
		}
		return 0
	}
}

// scanContentFast is scanContent through s's reader: a string content or
// an array of blocks (objects or nulls); anything else fails.
func (r *record) scanContentFast(s *input.Skim) {
	if (r.Type != "user" && r.Type != "assistant") || r.Message == nil {
		return
	}
	c := input.NewSkim(r.Message.Content)
	switch c.Peek() {
	case 0:
		// No content: scanContent's decodeContent reads nothing.
	case 'n':
		c.Null()
	case '"':
		r.scan.text = c.Str()
	case '[':
		r.scan.blocks = scanBlocks(&c)
	default:
		c.Fail()
	}
	if !c.End() {
		s.Fail()
		return
	}
	r.scanned = true
}

func scanBlocks(c *input.Skim) []scanBlock {
	blocks := []scanBlock{}
	c.Open('[')
	for first := true; c.More(']', &first); {
		var b scanBlock
		if !c.Null() {
			c.Object(scanNorms, b.field(c))
		}
		blocks = append(blocks, b)
	}
	return blocks
}

func (b *scanBlock) field(c *input.Skim) func([]byte) uint32 {
	return func(key []byte) uint32 {
		switch string(key) {
		case "type":
			b.Type = c.Str()
			return 1 << 0
		case "text":
			b.Text = c.Str()
			return 1 << 1
		case "id":
			b.ID = c.Str()
			return 1 << 2
		case "name":
			b.Name = c.Str()
			return 1 << 3
		case "input":
			b.Input = json.RawMessage(c.Raw())
			return 1 << 4
		case "tool_use_id":
			b.ToolUseID = c.Str()
			return 1 << 5
		}
		return 0
	}
}

package claudecode

// This file decodes the usual Claude Code line without reflection: the
// first pass's record and its scanned content read through input.Skim,
// every other line through decodeRecord's general path (docs/BENCHMARKS.md,
// "the cold path", step 5).

import (
	"encoding/json"

	"github.com/ctxfold/ctxfold/format/input"
)

// recordNorms are record's JSON names as input.NearName compares them.
var recordNorms = []string{"type", "subtype", "uuid", "parentuuid", "logicalparentuuid", "issidechain",
	"iscompactsummary", "agentid", "requestid", "parenttooluseid", "message", "rendered", "renderedrole",
	"compactmetadata", "hash", "tail", "tooluseresult", "data"}

// fastRecord decodes body into r (which must be zero) as decodeRecord
// would, and scans its content as scanContent would. It returns false,
// with r zero again, for a line it does not decode with certainty:
// anything malformed, a field of an unexpected type, a name encoding/json
// would fold onto a field, the rarer fields (rendered, compactMetadata).
// ascii says every string of the line was ASCII.
func fastRecord(body []byte, r *record) (ok, ascii bool) {
	s := input.NewSkim(body)
	var have uint32
	if s.Open('{') {
		for first := true; s.More('}', &first); {
			if key := s.Key(); !r.field(&s, key, &have) {
				skipOther(&s, key, recordNorms)
			}
		}
	}
	if s.End() {
		r.scanContentFast(&s)
	}
	if !s.OK() {
		*r = record{}
		return false, false
	}
	return true, s.ASCII()
}

// field decodes the value of the member named key, failing s for a name
// decoded twice or one fastRecord leaves to decodeRecord; false (nothing
// read) for a name that is not record's.
func (r *record) field(s *input.Skim, key []byte, have *uint32) bool {
	bit := uint32(0)
	switch string(key) {
	case "type":
		bit, r.Type = 1<<0, s.Str()
	case "subtype":
		bit, r.Subtype = 1<<1, s.Str()
	case "uuid":
		bit, r.UUID = 1<<2, s.Str()
	case "parentUuid":
		bit, r.ParentUUID = 1<<3, s.Str()
	case "logicalParentUuid":
		bit, r.LogicalParentUUID = 1<<4, s.Str()
	case "isSidechain":
		bit, r.IsSidechain = 1<<5, s.Bool()
	case "isCompactSummary":
		bit, r.IsCompactSummary = 1<<6, s.Bool()
	case "agentId":
		bit, r.AgentID = 1<<7, s.Str()
	case "requestId":
		bit, r.RequestID = 1<<8, s.Str()
	case "parentToolUseID":
		bit, r.ParentToolUseID = 1<<9, s.Str()
	case "renderedRole":
		bit, r.RenderedRole = 1<<10, s.Str()
	case "hash":
		bit, r.Hash = 1<<11, s.Str()
	case "message":
		bit = 1 << 12
		if !s.Null() {
			r.Message = fastMessage(s)
		}
	case "tail":
		bit, r.Tail = 1<<13, fastStrings(s)
	case "toolUseResult":
		bit, r.ToolUseResult = 1<<14, fastAgentRef(s)
	case "data":
		bit = 1 << 15
		if !s.Null() {
			r.Data = fastProgress(s)
		}
	case "rendered", "compactMetadata":
		if !s.Null() {
			s.Fail()
		}
		bit = 1 << 16
		if key[0] == 'c' {
			bit = 1 << 17
		}
	default:
		return false
	}
	if *have&bit != 0 {
		s.Fail()
	}
	*have |= bit
	return true
}

// skipOther passes over the value of a member no field names, failing s
// where encoding/json could match the name to a field after all.
func skipOther(s *input.Skim, key []byte, norms []string) {
	if input.NearName(key, norms) {
		s.Fail()
	}
	s.Skip()
}

var messageNorms = []string{"id", "role", "model", "content", "usage", "stopreason"}

// fastMessage reads a message object; any other value fails (decodeRecord
// notes it in badMessage).
func fastMessage(s *input.Skim) *message {
	m := &message{}
	var have uint32
	if !s.Open('{') {
		return nil
	}
	for first := true; s.More('}', &first); {
		key := s.Key()
		bit := uint32(0)
		switch string(key) {
		case "id":
			bit, m.ID = 1<<0, s.Str()
		case "role":
			bit, m.Role = 1<<1, s.Str()
		case "model":
			bit, m.Model = 1<<2, s.Str()
		case "content":
			bit, m.Content = 1<<3, json.RawMessage(s.Raw())
		case "usage":
			bit, m.Usage = 1<<4, json.RawMessage(s.Raw())
		case "stop_reason":
			bit, m.StopReason = 1<<5, s.Str()
		default:
			skipOther(s, key, messageNorms)
			continue
		}
		if have&bit != 0 {
			s.Fail()
		}
		have |= bit
	}
	return m
}

// fastStrings reads an array of strings, or null.
func fastStrings(s *input.Skim) []string {
	if s.Null() {
		return nil
	}
	out := []string{}
	if !s.Open('[') {
		return nil
	}
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
	s.Open('{')
	seen := false
	for first := true; s.More('}', &first); {
		key := s.Key()
		switch {
		case string(key) == "agentId" && !seen:
			seen = true
			a.AgentID = s.Str()
		case string(key) == "agentId" || input.NearName(key, agentNorms):
			s.Fail()
		default:
			s.Skip()
		}
	}
	return a
}

// fastProgress reads a progress line's data object.
func fastProgress(s *input.Skim) *progressData {
	d := &progressData{}
	var have uint32
	if !s.Open('{') {
		return nil
	}
	for first := true; s.More('}', &first); {
		key := s.Key()
		bit := uint32(0)
		switch string(key) {
		case "type":
			bit, d.Type = 1, s.Str()
		case "agentId":
			bit, d.AgentID = 2, s.Str()
		default:
			skipOther(s, key, progressNorms)
			continue
		}
		if have&bit != 0 {
			s.Fail()
		}
		have |= bit
	}
	return d
}

var (
	agentNorms    = []string{"agentid"}
	progressNorms = []string{"type", "agentid"}
)

var scanNorms = []string{"type", "text", "id", "name", "input", "tooluseid"}

// scanContentFast is scanContent through s's reader: a string content or
// an array of blocks (objects or nulls); anything else fails.
func (r *record) scanContentFast(s *input.Skim) {
	if (r.Type != "user" && r.Type != "assistant") || r.Message == nil {
		return
	}
	raw := r.Message.Content
	c := input.NewSkim(raw)
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
		if c.Null() {
			blocks = append(blocks, b)
			continue
		}
		var have uint32
		c.Open('{')
		for first := true; c.More('}', &first); {
			key := c.Key()
			bit := uint32(0)
			switch string(key) {
			case "type":
				bit, b.Type = 1<<0, c.Str()
			case "text":
				bit, b.Text = 1<<1, c.Str()
			case "id":
				bit, b.ID = 1<<2, c.Str()
			case "name":
				bit, b.Name = 1<<3, c.Str()
			case "input":
				bit, b.Input = 1<<4, json.RawMessage(c.Raw())
			case "tool_use_id":
				bit, b.ToolUseID = 1<<5, c.Str()
			default:
				skipOther(c, key, scanNorms)
				continue
			}
			if have&bit != 0 {
				c.Fail()
			}
			have |= bit
		}
		blocks = append(blocks, b)
	}
	return blocks
}

package codex

// This file decodes a rollout line's envelope without reflection, through
// input.Skim; any line it is not certain of goes through input.Unmarshal
// (docs/BENCHMARKS.md, "the cold path", step 5).

import (
	"encoding/json"

	"github.com/ctxfold/ctxfold/format/input"
)

// recordNorms are record's JSON names as input.NearName compares them.
var recordNorms = []string{"timestamp", "type", "payload", "ordinal", "recordtype", "id"}

// fastRecord decodes line into rec (which must be zero) as input.Unmarshal
// would; false, with rec zero again, for a line it leaves to it: anything
// malformed, a field of an unexpected type, a name encoding/json would fold
// onto a field, a name given twice.
func fastRecord(line []byte, rec *record) bool {
	s := input.NewSkim(line)
	s.Object(recordNorms, func(key []byte) uint32 {
		switch string(key) {
		case "timestamp":
			rec.Timestamp = s.Str()
			return 1 << 0
		case "type":
			rec.Type = s.Str()
			return 1 << 1
		case "payload":
			rec.Payload = json.RawMessage(s.Raw())
			return 1 << 2
		case "ordinal":
			if !s.Null() {
				n := s.Int64()
				rec.Ordinal = &n
			}
			return 1 << 3
		case "record_type":
			rec.RecordType = s.Str()
			return 1 << 4
		case "id":
			rec.ID = s.Str()
			return 1 << 5
		}
		return 0
	})
	if !s.End() {
		*rec = record{}
		return false
	}
	return true
}

var (
	itemNorms = []string{"type", "role", "content", "summary", "encryptedcontent", "name", "arguments", "input",
		"action", "callid", "id", "output", "phase", "namespace"}
	partNorms  = []string{"type", "text", "imageurl"}
	eventNorms = []string{"type", "info"}
	infoNorms  = []string{"totaltokenusage", "lasttokenusage", "modelcontextwindow"}
	usageNorms = []string{"inputtokens", "cachedinputtokens", "outputtokens", "reasoningoutputtokens", "totaltokens"}
)

// fastItem decodes a response_item payload into it (which must be zero)
// as input.Unmarshal would; false, with it zero again, where it cannot be
// certain.
func fastItem(payload []byte, it *item) bool {
	s := input.NewSkim(payload)
	s.Object(itemNorms, it.field(&s))
	if !s.End() {
		*it = item{}
		return false
	}
	return true
}

func (it *item) field(s *input.Skim) func([]byte) uint32 {
	return func(key []byte) uint32 {
		switch string(key) {
		case "type":
			it.Type = s.Str()
			return 1 << 0
		case "role":
			it.Role = s.Str()
			return 1 << 1
		case "name":
			it.Name = s.Str()
			return 1 << 2
		case "call_id":
			it.CallID = s.Str()
			return 1 << 3
		case "id":
			it.ID = s.Str()
			return 1 << 4
		case "phase":
			it.Phase = s.Str()
			return 1 << 5
		case "namespace":
			it.Namespace = s.Str()
			return 1 << 6
		}
		return it.rawField(s, key)
	}
}

// rawField is field for the members whose values are not plain strings.
func (it *item) rawField(s *input.Skim, key []byte) uint32 {
	switch string(key) {
	case "content":
		it.Content = json.RawMessage(s.Raw())
		return 1 << 7
	case "arguments":
		it.Arguments = json.RawMessage(s.Raw())
		return 1 << 8
	case "input":
		it.Input = json.RawMessage(s.Raw())
		return 1 << 9
	case "action":
		it.Action = json.RawMessage(s.Raw())
		return 1 << 10
	case "output":
		it.Output = json.RawMessage(s.Raw())
		return 1 << 11
	case "encrypted_content":
		if !s.Null() {
			if s.Peek() != '"' {
				s.Fail()
			}
			text := s.Str()
			it.EncryptedContent = &text
		}
		return 1 << 12
	case "summary":
		it.Summary = fastParts(s)
		return 1 << 13
	}
	return 0
}

// fastParts reads an array of parts (objects or nulls), or null.
func fastParts(s *input.Skim) []part {
	if s.Null() || !s.Open('[') {
		return nil
	}
	parts := []part{}
	for first := true; s.More(']', &first); {
		var p part
		if !s.Null() {
			s.Object(partNorms, func(key []byte) uint32 {
				switch string(key) {
				case "type":
					p.Type = s.Str()
					return 1 << 0
				case "text":
					p.Text = s.Str()
					return 1 << 1
				case "image_url":
					p.ImageURL = json.RawMessage(s.Raw())
					return 1 << 2
				}
				return 0
			})
		}
		parts = append(parts, p)
	}
	return parts
}

// fastEvent decodes an event_msg payload into ev (which must be zero) as
// input.Unmarshal would; false, with ev zero again, where it cannot be
// certain.
func fastEvent(payload []byte, ev *event) bool {
	s := input.NewSkim(payload)
	s.Object(eventNorms, func(key []byte) uint32 {
		switch string(key) {
		case "type":
			ev.Type = s.Str()
			return 1 << 0
		case "info":
			if !s.Null() {
				ev.Info = fastInfo(&s)
			}
			return 1 << 1
		}
		return 0
	})
	if !s.End() {
		*ev = event{}
		return false
	}
	return true
}

func fastInfo(s *input.Skim) *eventInfo {
	info := &eventInfo{}
	s.Object(infoNorms, func(key []byte) uint32 {
		switch string(key) {
		case "total_token_usage":
			info.Total = json.RawMessage(s.Raw())
			return 1 << 0
		case "last_token_usage":
			if !s.Null() {
				info.Last = &tokenUsage{}
				s.Object(usageNorms, info.Last.field(s))
			}
			return 1 << 1
		case "model_context_window":
			if !s.Null() {
				info.Window = s.Int64()
			}
			return 1 << 2
		}
		return 0
	})
	return info
}

func (u *tokenUsage) field(s *input.Skim) func([]byte) uint32 {
	return func(key []byte) uint32 {
		var n *int64
		var bit uint32
		switch string(key) {
		case "input_tokens":
			n, bit = &u.Input, 1<<0
		case "cached_input_tokens":
			n, bit = &u.Cached, 1<<1
		case "output_tokens":
			n, bit = &u.Output, 1<<2
		case "reasoning_output_tokens":
			n, bit = &u.Reasoning, 1<<3
		case "total_tokens":
			n, bit = &u.Total, 1<<4
		default:
			return 0
		}
		if !s.Null() {
			*n = s.Int64()
		}
		return bit
	}
}

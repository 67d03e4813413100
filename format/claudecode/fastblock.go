package claudecode

// This file is fastrecord.go's counterpart for the second pass: the line
// a node is built from (fullRecord) and its content blocks.

import (
	"encoding/json"

	"github.com/ctxfold/ctxfold/format/input"
)

// fullNorms are fullRecord's JSON names as input.NearName compares them.
var fullNorms = append([]string{"timestamp", "ismeta", "isapierrormessage", "content"}, recordNorms...)

// fastFullRecord is fastRecord for the second pass: r must be zero, and is
// zero again when it returns false.
func fastFullRecord(body []byte, r *fullRecord) bool {
	s := input.NewSkim(body)
	var have, own uint32
	if s.Open('{') {
		for first := true; s.More('}', &first); {
			key := s.Key()
			if !r.ownField(&s, key, &own) && !r.field(&s, key, &have) {
				skipOther(&s, key, fullNorms)
			}
		}
	}
	if !s.End() {
		*r = fullRecord{}
		return false
	}
	return true
}

// ownField decodes the fields fullRecord adds to record. compactMetadata
// is one: fullRecord's own field hides record's.
func (r *fullRecord) ownField(s *input.Skim, key []byte, have *uint32) bool {
	bit := uint32(0)
	switch string(key) {
	case "timestamp":
		bit, r.Timestamp = 1<<0, s.Str()
	case "isMeta":
		bit, r.IsMeta = 1<<1, s.Bool()
	case "isApiErrorMessage":
		bit, r.IsAPIErrorMessage = 1<<2, s.Bool()
	case "content":
		bit, r.Content = 1<<3, json.RawMessage(s.Raw())
	case "compactMetadata":
		bit, r.CompactMetadata = 1<<4, json.RawMessage(s.Raw())
	default:
		return false
	}
	if *have&bit != 0 {
		s.Fail()
	}
	*have |= bit
	return true
}

var (
	blockNorms  = []string{"type", "text", "thinking", "signature", "data", "id", "name", "input", "tooluseid", "content", "iserror", "source"}
	sourceNorms = []string{"type", "mediatype", "data", "url", "fileid"}
)

// fastBlocks decodes a content array as decodeContent[block] does; false
// for anything it does not decode with certainty.
func fastBlocks(raw []byte) ([]block, bool) {
	s := input.NewSkim(raw)
	blocks := []block{}
	s.Open('[')
	for first := true; s.More(']', &first); {
		var b block
		if !s.Null() {
			b.decode(&s)
		}
		blocks = append(blocks, b)
	}
	if !s.End() {
		return nil, false
	}
	return blocks, true
}

func (b *block) decode(s *input.Skim) {
	var have uint32
	s.Open('{')
	for first := true; s.More('}', &first); {
		key := s.Key()
		bit := uint32(0)
		switch string(key) {
		case "type":
			bit, b.Type = 1<<0, s.Str()
		case "text":
			bit, b.Text = 1<<1, s.Str()
		case "thinking":
			bit, b.Thinking = 1<<2, s.Str()
		case "signature":
			bit, b.Signature = 1<<3, s.Str()
		case "data":
			bit, b.Data = 1<<4, json.RawMessage(s.Raw())
		case "id":
			bit, b.ID = 1<<5, s.Str()
		case "name":
			bit, b.Name = 1<<6, s.Str()
		case "input":
			bit, b.Input = 1<<7, json.RawMessage(s.Raw())
		case "tool_use_id":
			bit, b.ToolUseID = 1<<8, s.Str()
		case "content":
			bit, b.Content = 1<<9, s.Any()
		case "is_error":
			bit, b.IsError = 1<<10, s.Bool()
		case "source":
			bit = 1 << 11
			if !s.Null() {
				b.Source = fastSource(s)
			}
		default:
			skipOther(s, key, blockNorms)
			continue
		}
		if have&bit != 0 {
			s.Fail()
		}
		have |= bit
	}
}

func fastSource(s *input.Skim) *source {
	src := &source{}
	var have uint32
	s.Open('{')
	for first := true; s.More('}', &first); {
		key := s.Key()
		bit := uint32(0)
		switch string(key) {
		case "type":
			bit, src.Type = 1<<0, s.Str()
		case "media_type":
			bit, src.MediaType = 1<<1, s.Str()
		case "data":
			bit, src.Data = 1<<2, s.Str()
		case "url":
			bit, src.URL = 1<<3, s.Str()
		case "file_id":
			bit, src.FileID = 1<<4, s.Str()
		default:
			skipOther(s, key, sourceNorms)
			continue
		}
		if have&bit != 0 {
			s.Fail()
		}
		have |= bit
	}
	return src
}

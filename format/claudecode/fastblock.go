package claudecode

// This file is fastrecord.go's counterpart for the second pass: the line
// a node is built from (fullRecord) and its content blocks.

import (
	"encoding/json"

	"github.com/ctxfold/ctxfold/format/input"
)

var (
	fullNorms   = append([]string{"timestamp", "ismeta", "isapierrormessage", "content", "version", "entrypoint", "origin"}, recordNorms...)
	blockNorms  = []string{"type", "text", "thinking", "signature", "data", "id", "name", "input", "tooluseid", "content", "iserror", "source"}
	sourceNorms = []string{"type", "mediatype", "data", "url", "fileid"}
)

// fastFullRecord is fastRecord for the second pass: r must be zero, and is
// zero again when it returns false.
func fastFullRecord(body []byte, r *fullRecord) bool {
	s := input.NewSkim(body)
	s.Object(fullNorms, func(key []byte) uint32 {
		if bit := r.ownField(&s, key); bit != 0 {
			return bit
		}
		return r.field(&s, key)
	})
	if !s.End() {
		*r = fullRecord{}
		return false
	}
	return true
}

// ownField decodes the fields fullRecord adds to record (bits above
// record's). compactMetadata is one: fullRecord's own field hides
// record's.
func (r *fullRecord) ownField(s *input.Skim, key []byte) uint32 {
	switch string(key) {
	case "timestamp":
		r.Timestamp = s.Str()
		return 1 << 24
	case "isMeta":
		r.IsMeta = s.Bool()
		return 1 << 25
	case "isApiErrorMessage":
		r.IsAPIErrorMessage = s.Bool()
		return 1 << 26
	case "content":
		r.Content = json.RawMessage(s.Raw())
		return 1 << 27
	case "compactMetadata":
		r.CompactMetadata = json.RawMessage(s.Raw())
		return 1 << 28
	case "version":
		r.Version = json.RawMessage(s.Raw())
		return 1 << 29
	case "entrypoint":
		r.Entrypoint = json.RawMessage(s.Raw())
		return 1 << 30
	case "origin":
		r.Origin = json.RawMessage(s.Raw())
		return 1 << 31
	}
	return 0
}

// fastBlocks decodes a content array as decodeContent[block] does; false
// for anything it does not decode with certainty.
func fastBlocks(raw []byte) ([]block, bool) {
	s := input.NewSkim(raw)
	blocks := []block{}
	s.Open('[')
	for first := true; s.More(']', &first); {
		var b block
		if !s.Null() {
			s.Object(blockNorms, b.field(&s))
		}
		blocks = append(blocks, b)
	}
	if !s.End() {
		return nil, false
	}
	return blocks, true
}

func (b *block) field(s *input.Skim) func([]byte) uint32 {
	return func(key []byte) uint32 {
		switch string(key) {
		case "type":
			b.Type = s.Str()
			return 1 << 0
		case "text":
			b.Text = s.Str()
			return 1 << 1
		case "thinking":
			b.Thinking = s.Str()
			return 1 << 2
		case "signature":
			b.Signature = s.Str()
			return 1 << 3
		case "id":
			b.ID = s.Str()
			return 1 << 4
		case "name":
			b.Name = s.Str()
			return 1 << 5
		case "tool_use_id":
			b.ToolUseID = s.Str()
			return 1 << 6
		}
		return b.rawField(s, key)
	}
}

// rawField is field for the members whose values are not strings.
func (b *block) rawField(s *input.Skim, key []byte) uint32 {
	switch string(key) {
	case "data":
		b.Data = json.RawMessage(s.Raw())
		return 1 << 7
	case "input":
		b.Input = json.RawMessage(s.Raw())
		return 1 << 8
	case "content":
		b.Content = s.Any()
		return 1 << 9
	case "is_error":
		b.IsError = s.Bool()
		return 1 << 10
	case "source":
		if !s.Null() {
			src := &source{}
			s.Object(sourceNorms, src.field(s))
			b.Source = src
		}
		return 1 << 11
	}
	return 0
}

func (src *source) field(s *input.Skim) func([]byte) uint32 {
	return func(key []byte) uint32 {
		switch string(key) {
		case "type":
			src.Type = s.Str()
			return 1 << 0
		case "media_type":
			src.MediaType = s.Str()
			return 1 << 1
		case "data":
			src.Data = s.Str()
			return 1 << 2
		case "url":
			src.URL = s.Str()
			return 1 << 3
		case "file_id":
			src.FileID = s.Str()
			return 1 << 4
		}
		return 0
	}
}

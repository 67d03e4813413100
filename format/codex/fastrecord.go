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
	var have uint32
	if s.Open('{') {
		for first := true; s.More('}', &first); {
			key := s.Key()
			bit := uint32(0)
			switch string(key) {
			case "timestamp":
				bit, rec.Timestamp = 1<<0, s.Str()
			case "type":
				bit, rec.Type = 1<<1, s.Str()
			case "payload":
				bit, rec.Payload = 1<<2, json.RawMessage(s.Raw())
			case "ordinal":
				bit = 1 << 3
				if !s.Null() {
					n := s.Int64()
					rec.Ordinal = &n
				}
			case "record_type":
				bit, rec.RecordType = 1<<4, s.Str()
			case "id":
				bit, rec.ID = 1<<5, s.Str()
			default:
				if input.NearName(key, recordNorms) {
					s.Fail()
				}
				s.Skip()
				continue
			}
			if have&bit != 0 {
				s.Fail()
			}
			have |= bit
		}
	}
	if !s.End() {
		*rec = record{}
		return false
	}
	return true
}

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

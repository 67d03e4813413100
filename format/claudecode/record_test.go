package claudecode

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// decodeRecordStdlib is decodeRecord with encoding/json alone (what it was
// before the fast decoder): the reference the fast paths must equal.
func decodeRecordStdlib(body []byte, v any, bad *string) error {
	return recordErr(json.Unmarshal(body, v), bad)
}

// TestDecodeRecordToolUseResultShapes: whatever shape toolUseResult has,
// and whatever other type error the line holds before or after it, the
// record (and fullRecord) decoded, badMessage and the error are
// encoding/json's.
func TestDecodeRecordToolUseResultShapes(t *testing.T) {
	shapes := []string{`null`, `"Error: failed"`, `12`, `true`, `[1,{"agentId":"x"}]`, `{"agentId":"a1","x":[1]}`,
		`{"AGENTID":"a2"}`, `{"agentId":7}`, `{}`, `{"agentId":"a","agentId":"b"}`, "\"\xff\""}
	msgs := []string{`{"role":"user","content":"hi"}`, `{"role":3,"content":"hi"}`, `"not an object"`}
	for _, shape := range shapes {
		for _, msg := range msgs {
			for _, order := range []string{
				`{"type":"user","uuid":"u1","toolUseResult":%s,"message":%s}`,
				`{"type":"user","uuid":"u1","message":%[2]s,"toolUseResult":%[1]s}`,
				`{"type":"user","uuid":"u1","toolUseResult":%s,"message":%s,"isSidechain":"no"}`,
			} {
				line := []byte(fmt.Sprintf(order, shape, msg))
				var got, want record
				gotErr := decodeRecord(line, &got, &got.badMessage)
				wantErr := decodeRecordStdlib(line, &want, &want.badMessage)
				if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
					t.Errorf("%s:\n got %+v, %v (tool use result %+v)\nwant %+v, %v (tool use result %+v)", line, got, gotErr, got.ToolUseResult, want, wantErr, want.ToolUseResult)
				}
				var gotF, wantF fullRecord
				gotErr = decodeRecord(line, &gotF, &gotF.badMessage)
				wantErr = decodeRecordStdlib(line, &wantF, &wantF.badMessage)
				if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(gotF, wantF) {
					t.Errorf("%s (fullRecord):\n got %+v, %v\nwant %+v, %v", line, gotF, gotErr, wantF, wantErr)
				}
			}
		}
	}
}

package claudecode

import (
	"strings"
	"testing"

	"github.com/ctxfold/ctxfold/format/input"
	"github.com/ctxfold/ctxfold/internal/sessiontest"
	"github.com/ctxfold/ctxfold/transcript"
)

// compareFast reports whether fastRecord decoded line, failing t where
// its record differs from what decodeRecord's general path and
// scanContent make of it, or where it calls a line with invalid UTF-8
// ASCII.
func compareFast(t testing.TB, line []byte) bool {
	t.Helper()
	return sessiontest.FastAgrees(t, line, func(b []byte, r *record) bool {
		ok, ascii := fastRecord(b, r)
		if ok && ascii && transcript.FirstInvalidUTF8(b) != 0 {
			t.Errorf("fastRecord calls a line with invalid UTF-8 ASCII: %q", b)
		}
		return ok
	}, func(b []byte, r *record) error {
		err := recordErr(input.Unmarshal(b, r), &r.badMessage)
		if err == nil {
			r.scanContent()
		}
		return err
	})
}

// compareFull is compareFast for the second pass: fastFullRecord, and
// fastBlocks on the line's content array, against the general path.
func compareFull(t testing.TB, line []byte) bool {
	t.Helper()
	ok := sessiontest.FastAgrees(t, line, fastFullRecord, func(b []byte, r *fullRecord) error {
		return recordErr(input.Unmarshal(b, r), &r.badMessage)
	})
	var r fullRecord
	if ok && fastFullRecord(line, &r) && r.Message != nil {
		compareBlocks(t, r.Message.Content)
	}
	return ok
}

// compareBlocks compares fastBlocks with the general decode of raw.
func compareBlocks(t testing.TB, raw []byte) bool {
	t.Helper()
	return sessiontest.FastAgrees(t, raw, func(b []byte, bl *[]block) bool {
		v, ok := fastBlocks(b)
		*bl = v
		return ok
	}, func(b []byte, bl *[]block) error { return input.Unmarshal(b, bl) })
}

// fastSeeds are lines at the edges of what fastRecord decodes itself.
var fastSeeds = []string{
	`{"type":"user","uuid":"u1","parentUuid":null,"message":{"role":"user","content":"hi"}}`,
	`{"type":"assistant","uuid":"a1","message":{"id":"m","model":"claude","content":[{"type":"text","text":"x"},{"type":"tool_use","id":"t1","name":"Task","input":{"prompt":"p"}}],"usage":{"input_tokens":1},"stop_reason":null}}`,
	`{"type":"user","uuid":"u2","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"out"}],"is_error":false}]},"toolUseResult":{"agentId":"ag","stdout":"…"}}`,
	`{"type":"user","message":{"content":[null,{"type":"text","text":"a\u00e9\n\"q\"\\"}]}}`,
	`{"type":"user","message":{"content":null}}`, `{"type":"user","message":{}}`, `{"type":"user","message":null}`,
	`{"type":"user","message":"not an object"}`, `{"type":"user","message":{"content":{"a":1}}}`,
	`{"type":"user","message":{"content":[1]}}`, `{"type":"user","message":{"content":["s"]}}`,
	`{"type":"user","toolUseResult":"Error: failed"}`, `{"type":"user","toolUseResult":[1,2]}`, `{"toolUseResult":null}`,
	`{"toolUseResult":{"agentId":5}}`, `{"toolUseResult":{"AgentId":"x"}}`, `{"toolUseResult":{"agentId":"a","agentId":"b"}}`,
	`{"type":"progress","data":{"type":"agent_progress","agentId":"a1","message":{"x":[true,false,null,-1.5e+3]}}}`,
	`{"data":"str"}`, `{"data":null}`, `{"tail":["a","b"]}`, `{"tail":[]}`, `{"tail":null}`, `{"tail":[null]}`, `{"tail":"x"}`,
	`{"type":"a","type":"b"}`, `{"Type":"user"}`, `{"TYPE":"upper","type":"exact"}`, `{"parent_uuid":"x"}`, `{"parent-uuid":"x"}`,
	`{"uuıd":"dotless"}`, `{"\u0074ype":"escaped name"}`, `{"type":"user",}`, `{"type":"user"} x`, `{"type":"user"}  `,
	`[1]`, `"s"`, `null`, ``, `{`, `{"type":"a\u00"}`, "{\"type\":\"a\tb\"}", "{\"type\":\"\xff\xfe\"}",
	"{\"cwd\":\"\xff\xfe\",\"type\":\"user\"}", `{"type":"\ud83d\ude00"}`, `{"type":"\ud83d"}`, `{"n":01}`, `{"n":-}`,
	`{"n":1.}`, `{"n":1e}`, `{"n":0.5E-7}`, `{"n":tru}`, `{"isSidechain":"yes"}`, `{"isSidechain":null,"isCompactSummary":true}`,
	`{"rendered":[{"content":"x"}]}`, `{"rendered":null}`, `{"compactMetadata":{"preservedMessages":{"uuids":["a"]}}}`,
	`{"type":"system","subtype":"compact_boundary","compactMetadata":null,"logicalParentUuid":"l"}`,
	`{"type":"assistant","message":{"content":[{"type":"tool_use","input":null,"id":"i","ID":"j"}]}}`,
	`{"type":"assistant","message":{"content":[{"type":"tool_use","input":null},{"type":"text","text":"a","text":"b"}]}}`,
	`{"type":"assistant","message":{"Content":"x","content":"y"}}`, `{"type":"assistant","message":{"usage":null,"content":" "}}`,
	` {"type" : "user" , "message" : { "content" : [ { "type" : "text" , "text" : "sp" } ] } } `,
	`{"a":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
	`{"type":"user","message":{"content":"\"\\\/\b\f\n\r\t\u0000\u001f"}}`, `{"x":"\q"}`, `{"x":"\u12G4"}`,
	`{"agentId":"a","requestId":"r","parentToolUseID":"p","renderedRole":"system","hash":"h","subtype":"s"}`,
	`{"type":"assistant","timestamp":"2026-01-01T00:00:00Z","isMeta":true,"isApiErrorMessage":false,"message":{"content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"redacted_thinking","data":"abc"}]}}`,
	`{"type":"system","subtype":"compact_boundary","content":"Conversation compacted","compactMetadata":{"trigger":"auto","preTokens":1,"preservedMessages":{"uuids":["a"]}}}`,
	`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA=="}}],"is_error":true}]}}`,
	`{"type":"user","message":{"content":[{"type":"image","source":{"type":"url","url":"http://x","file_id":"f"}},{"type":"document","source":null}]}}`,
	`{"type":"user","message":{"content":[{"type":"tool_result","content":{"n":1e400}}]}}`, `{"type":"user","message":{"content":[{"content":{"n":-0.0,"m":[1,2.5e3,{}],"a":"x","a":"y"}}]}}`,
	`{"type":"user","message":{"content":[{"content":{"\u00e9":1}}]}}`, `{"type":"user","message":{"content":[{"source":"s"}]}}`,
	`{"type":"user","message":{"content":[{"is_error":"no"}]}}`, `{"type":"user","message":{"content":[{"Is_Error":true}]}}`,
	"{\"cwd\":\"abcdefgh\x1fijklmnop\",\"type\":\"user\"}", "{\"type\":\"abcdefghijklmnopq\x7f\x00\"}",
	"{\"type\":\"abcdefghijklmno\u00e9\\\"\\\\xyz0123456789\"}", "{\"x\":\"abcdefg\\u00e\"}",
	`{"isMeta":1}`, `{"timestamp":5}`, `{"content":"a","Content":"b"}`, `{"isMeta":true,"ismeta":false}`,
	`{"type":"attachment","uuid":"u","attachment":{"type":"skill_listing","content":"- pdf: Read PDFs"}}`,
	`{"type":"attachment","attachment":{"type":"queued_command","prompt":"p"},"rendered":[{"content":"<system-reminder>
x
</system-reminder>"}],"renderedRole":"system"}`,
	`{"attachment":null,"rendered":null}`, `{"attachment":"s"}`, `{"attachment":{"type":1}}`, `{"rendered":[null]}`,
	`{"rendered":{}}`, `{"rendered":[{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}`,
	`{"attachment":{"type":"file","content":{"type":"text","file":{"filePath":"/a","content":"x
"}}},"Attachment":{}}`,
}

func TestFastRecordSeeds(t *testing.T) {
	fast := 0
	for _, s := range fastSeeds {
		if compareFast(t, []byte(s)) {
			fast++
		}
		compareFull(t, []byte(s))
	}
	if fast < 20 {
		t.Errorf("fastRecord decoded only %d of %d seeds", fast, len(fastSeeds))
	}
}

// TestFastRecordMatchesOnRealLines compares the two paths on every line of
// the shared real transcripts and of the repository's recordings, and
// requires the fast one to decode nearly every Claude Code line: the
// speed of the cold import rests on it.
func TestFastRecordMatchesOnRealLines(t *testing.T) {
	ccLines, ccFast := 0, 0
	sessiontest.EachRealLine(t, "../..", func(path string, line []byte) {
		fast := compareFast(t, line)
		full := compareFull(t, line)
		if strings.Contains(path, "claude") {
			ccLines++
			if fast && full {
				ccFast++
			}
		}
	})
	t.Logf("%d of %d Claude Code lines decoded by the fast path", ccFast, ccLines)
	if ccLines < 1000 || ccFast*100 < ccLines*90 {
		t.Errorf("the fast path decoded %d of %d Claude Code lines; want 90%%", ccFast, ccLines)
	}
}

func FuzzFastRecord(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		compareFast(t, line)
		compareFull(t, line)
		compareBlocks(t, line)
	})
}

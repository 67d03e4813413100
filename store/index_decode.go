package store

import (
	"bytes"
	"strconv"
	"unicode/utf8"

	"github.com/ctxfold/ctxfold/transcript"
)

// Indexing reads every line of a session but keeps only its structure: the
// full decode (Node.UnmarshalJSON) builds every text and block of the node
// only for the index to drop them, which made it most of the allocation
// and time of opening a big session. indexRef walks the line instead,
// taking the few strings the index keeps and checking the rest in place.
//
// It is conservative: it answers only for lines it fully understands and
// that the full decode accepts, with the NodeRef refOf would make of them;
// anything else (an error, an escaped key, a repeated key, a number the
// fast path does not parse) returns ok=false and the line goes through the
// full decode, which gives the exact error. FuzzIndexRef holds it to that.

// indexRef returns the NodeRef of a valid UTF-8 line, or ok=false.
func indexRef(line []byte) (ref NodeRef, ok bool) {
	if !transcript.ValidJSON(line) {
		return NodeRef{}, false
	}
	i := transcript.SkipJSONSpace(line, 0)
	if line[i] != '{' {
		return NodeRef{}, false
	}
	var f refFields
	transcript.EachJSONMember(line, i, func(key, val []byte) bool { return f.member(key, val, &ref) })
	if f.bad || f.seen&kID == 0 || (f.hasPred && ref.Predecessor == "") {
		return NodeRef{}, false
	}
	ref.Role = transcript.Role(f.role)
	if !ref.Role.Valid() {
		return NodeRef{}, false
	}
	ref.Role = internRole(ref.Role)
	if f.haveUsage && !validUsage(f.usage) {
		return NodeRef{}, false
	}
	// tool_calls first, then tool_call blocks: AllToolCalls' order.
	if len(f.calls) > 0 && string(f.calls) != "null" && !indexToolCalls(f.calls, &ref) {
		return NodeRef{}, false
	}
	if ref.Role == transcript.RoleTool && f.toolCallID != "" {
		ref.ResultIDs = append(ref.ResultIDs, f.toolCallID)
	}
	if f.haveContent && !indexContent(f.content, &ref) {
		return NodeRef{}, false
	}
	if len(f.meta) > 0 && string(f.meta) != "null" && !indexMetadata(f.meta, &ref) {
		return NodeRef{}, false
	}
	return ref, true
}

// The bits of refFields.seen, one per known member of a node line.
const (
	kID = 1 << iota
	kPred
	kRole
	kContent
	kCalls
	kToolCallID
	kName
	kCaller
	kCreated
	kUsage
	kMeta
)

// refFields is what indexRef's walk over a line's members collects before
// the checks that need the whole line. bad means the line must go to the
// full decode: a repeated known key, an escaped key, or a value the index
// does not take as is.
type refFields struct {
	seen                   uint16
	role, toolCallID       string
	content, calls, meta   []byte
	haveContent, haveUsage bool
	usage                  []byte
	bad                    bool
	hasPred                bool
}

// take marks a known key (a repeat is left to the full decode) and takes
// its string into dst.
func (f *refFields) take(bit uint16, val []byte, dst *string) {
	if f.seen&bit != 0 {
		f.bad = true
		return
	}
	f.seen |= bit
	if dst != nil && !plainStringOrNull(val, dst) {
		f.bad = true
	}
}

// check marks a known key whose string is not kept.
func (f *refFields) check(bit uint16, val []byte) {
	f.take(bit, val, nil)
	f.bad = f.bad || !isStringOrNull(val)
}

// member takes one member of the line, into ref or f, and reports whether
// the walk goes on.
func (f *refFields) member(key, val []byte, ref *NodeRef) bool {
	switch string(key) {
	case "id":
		f.take(kID, val, &ref.ID)
		f.bad = f.bad || ref.ID == ""
	case "predecessor":
		f.take(kPred, val, &ref.Predecessor)
		f.hasPred = string(val) != "null"
	case "role":
		f.take(kRole, val, &f.role)
	case "content":
		f.take(kContent, val, nil)
		f.content, f.haveContent = val, true
	case "tool_calls":
		f.take(kCalls, val, nil)
		f.calls = val
	case "tool_call_id":
		f.take(kToolCallID, val, &f.toolCallID)
	case "name":
		f.take(kName, val, &ref.Name)
	case "caller":
		f.take(kCaller, val, &ref.Caller)
	case "created_at":
		f.check(kCreated, val)
	case "usage":
		f.take(kUsage, val, nil)
		f.usage, f.haveUsage = val, true
	case "metadata":
		f.take(kMeta, val, nil)
		f.meta = val
	default:
		f.bad = f.bad || bytes.IndexByte(key, '\\') >= 0
	}
	return !f.bad
}

// indexToolCalls appends the ids of a tool_calls array to ref.ToolCallIDs
// and reports false if the array is not one the full decode would accept
// unchanged.
func indexToolCalls(calls []byte, ref *NodeRef) bool {
	if calls[0] != '[' {
		return false
	}
	return transcript.EachJSONElement(calls, func(el []byte) bool {
		if el[0] != '{' {
			return false
		}
		var id string
		var seenCall uint8
		good := true
		transcript.EachJSONMember(el, 0, func(key, val []byte) bool {
			switch string(key) {
			case "id":
				good = seenCall&1 == 0 && plainStringOrNull(val, &id)
				seenCall |= 1
			case "name":
				good = seenCall&2 == 0 && isStringOrNull(val)
				seenCall |= 2
			case "arguments":
			default:
				good = bytes.IndexByte(key, '\\') < 0
			}
			return good
		})
		ref.ToolCallIDs = append(ref.ToolCallIDs, id)
		return good
	})
}

// indexContent checks content (a string, null or an array of blocks) and
// takes from it what refOf does: HasText, tool_call ids, tool_result ids.
func indexContent(c []byte, ref *NodeRef) bool {
	switch c[0] {
	case 'n':
		return true
	case '"':
		ref.HasText = len(c) > 2 && ref.Role != transcript.RoleTool
		return true
	case '[':
	default:
		return false
	}
	return transcript.EachJSONElement(c, func(el []byte) bool { return indexBlock(el, ref) })
}

// indexBlock notes what the index needs of one content block (text, a tool
// call's id, a result's id) and reports false if the block is not one the
// full decode would accept unchanged.
func indexBlock(el []byte, ref *NodeRef) bool {
	if el[0] != '{' {
		return false
	}
	const (
		bType = 1 << iota
		bText
		bSignature
		bSource
		bMediaType
		bID
		bName
		bToolCallID
		bArguments
		bIsError
	)
	var seen uint16
	var typ, id, toolCallID string
	good := true
	// str takes a string the index keeps into dst; with a nil dst it
	// only checks that val is a string or null.
	str := func(bit uint16, val []byte, dst *string) {
		if dst == nil {
			good = seen&bit == 0 && isStringOrNull(val)
		} else {
			good = seen&bit == 0 && plainStringOrNull(val, dst)
		}
		seen |= bit
	}
	transcript.EachJSONMember(el, 0, func(key, val []byte) bool {
		switch string(key) {
		case "type":
			str(bType, val, &typ)
		case "text":
			str(bText, val, nil)
		case "signature":
			str(bSignature, val, nil)
		case "source":
			str(bSource, val, nil)
		case "media_type":
			str(bMediaType, val, nil)
		case "id":
			str(bID, val, &id)
		case "name":
			str(bName, val, nil)
		case "tool_call_id":
			str(bToolCallID, val, &toolCallID)
		case "arguments":
			good = seen&bArguments == 0
			seen |= bArguments
		case "is_error":
			good = seen&bIsError == 0 && (string(val) == "true" || string(val) == "false" || string(val) == "null")
			seen |= bIsError
		default:
			good = bytes.IndexByte(key, '\\') < 0
		}
		return good
	})
	if !good || typ == "" {
		return false
	}
	switch typ {
	case transcript.BlockText, transcript.BlockImage:
		ref.HasText = true
	case transcript.BlockToolCall:
		ref.ToolCallIDs = append(ref.ToolCallIDs, id)
	case transcript.BlockToolResult:
		ref.ResultIDs = append(ref.ResultIDs, toolCallID)
	}
	return true
}

// indexMetadata takes compaction, covers_ids and covers_span from a
// metadata object.
func indexMetadata(meta []byte, ref *NodeRef) bool {
	if meta[0] != '{' {
		return false
	}
	var covers, span []byte
	var seen uint8
	good := true
	transcript.EachJSONMember(meta, 0, func(key, val []byte) bool {
		switch {
		case bytes.IndexByte(key, '\\') >= 0:
			good = false
		case string(key) == "compaction":
			good = seen&1 == 0
			seen |= 1
			ref.Summary = string(val) == "true"
		case string(key) == "covers_ids":
			good = seen&2 == 0
			seen |= 2
			covers = val
		case string(key) == transcript.MetaCoversSpan:
			good = seen&4 == 0
			seen |= 4
			span = val
		}
		return good
	})
	if !good {
		return false
	}
	if ref.Summary && span != nil {
		// refOf keeps a span only when it decodes; ParseCoverSpan is the
		// one reader of both paths.
		ref.CoversSpan, _ = transcript.ParseCoverSpan(span)
	}
	if ref.Summary && covers != nil {
		// refOf keeps covers_ids only when they decode as a list of strings.
		if covers[0] != '[' {
			return true // not a list: refOf keeps nil
		}
		var ids []string
		okIDs := transcript.EachJSONElement(covers, func(el []byte) bool {
			var id string
			if string(el) == "null" || !plainStringOrNull(el, &id) {
				return false
			}
			ids = append(ids, id)
			return true
		})
		if !okIDs {
			return false
		}
		if ids == nil {
			ids = []string{}
		}
		ref.CoversIDs = ids
	}
	return true
}

// validUsage reports whether a usage value decodes: null, or an object
// whose token counts are null or plain integers.
func validUsage(u []byte) bool {
	if string(u) == "null" {
		return true
	}
	if u[0] != '{' {
		return false
	}
	var seen uint8
	good := true
	transcript.EachJSONMember(u, 0, func(key, val []byte) bool {
		bit := uint8(0)
		switch string(key) {
		case "input_tokens":
			bit = 1
		case "output_tokens":
			bit = 2
		case "cached_input_tokens":
			bit = 4
		default:
			good = bytes.IndexByte(key, '\\') < 0
			return good
		}
		if seen&bit != 0 {
			good = false
			return false
		}
		seen |= bit
		if string(val) != "null" {
			_, err := strconv.ParseInt(string(val), 10, 64)
			good = err == nil
		}
		return good
	})
	return good
}

// isStringOrNull reports whether val, a valid JSON value, is a string or
// null (what takeString accepts).
func isStringOrNull(val []byte) bool { return val[0] == '"' || string(val) == "null" }

// plainStringOrNull reports whether val is null or a JSON string without
// escapes, storing the string in dst (when dst is not nil).
func plainStringOrNull(val []byte, dst *string) bool {
	if string(val) == "null" {
		return true
	}
	n := len(val)
	if n < 2 || val[0] != '"' || bytes.IndexByte(val[1:n-1], '\\') >= 0 || !utf8.Valid(val[1:n-1]) {
		return false
	}
	if dst != nil {
		*dst = string(val[1 : n-1])
	}
	return true
}

package claudecode

// This file holds the shape of a Claude Code line as the first pass and emit decode it.

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/ctxfold/ctxfold/format/input"
)

// record is the part of a Claude Code line the first pass reads.
type record struct {
	Type              string `json:"type"`
	Subtype           string `json:"subtype"`
	UUID              string `json:"uuid"`
	ParentUUID        string `json:"parentUuid"`
	LogicalParentUUID string `json:"logicalParentUuid"`
	IsSidechain       bool   `json:"isSidechain"`
	IsCompactSummary  bool   `json:"isCompactSummary"`
	AgentID           string `json:"agentId"`
	RequestID         string `json:"requestId"`
	ParentToolUseID   string `json:"parentToolUseID"`
	// SourceToolUseID names the call a message came with (a skill's text
	// after its Skill result): it continues that call's results chain.
	SourceToolUseID string `json:"sourceToolUseID"`
	// Typed rather than raw, so a large message or progress payload is
	// decoded in the same pass that validates the line, never copied.
	Message *message `json:"message"`
	// Rendered is what an attachment record sent to the model;
	// RenderedRole says how (Claude Code 2.1.3xx).
	Rendered     []rendered `json:"rendered"`
	RenderedRole string     `json:"renderedRole"`
	// Attachment says whether an attachment record written without
	// rendered content sent a message (attachments.go).
	Attachment      attachmentHint   `json:"attachment"`
	CompactMetadata *compactMetadata `json:"compactMetadata"`
	// Hash and Tail link api-request-blob and api-request records: a
	// request's messages end with the blobs its tail names.
	Hash          string        `json:"hash"`
	Tail          []string      `json:"tail"`
	ToolUseResult *agentRef     `json:"toolUseResult"`
	Data          *progressData `json:"data"`
	// Content is a system record's own text: a local command's output
	// (2.1.3xx writes "/model"'s so: modelswitch.go). fullRecord's field
	// of the same name hides it on the second pass.
	Content json.RawMessage `json:"content"`
	// badMessage says why message could not be read (an error only for a
	// user or assistant line).
	badMessage string
	// scan is the message content as planMessage reads it, decoded on the
	// first pass's workers (lineItem.decode) when scanned is true.
	scan    scannedContent
	scanned bool
}

// scannedContent is decodeContent[scanBlock]'s result.
type scannedContent struct {
	text   string
	blocks []scanBlock
	err    error
}

// scanContent decodes a user or assistant line's message content as
// planMessage reads it, once, where the line is decoded.
func (r *record) scanContent() {
	if r.scanned || (r.Type != "user" && r.Type != "assistant") || r.Message == nil || r.badMessage != "" {
		return
	}
	r.scan.text, r.scan.blocks, _, r.scan.err = decodeContent[scanBlock](r.Message.Content)
	r.scanned = true
}

// rendered is one piece of an attachment's rendered content: a string,
// or text blocks (their texts joined by a newline).
type rendered struct {
	Content string
}

func (r *rendered) UnmarshalJSON(b []byte) error {
	var v struct {
		Content json.RawMessage `json:"content"`
	}
	if err := input.Unmarshal(b, &v); err != nil {
		return err
	}
	text, blocks, _, err := decodeContent[scanBlock](v.Content)
	if err != nil {
		return err
	}
	parts := []string{}
	if text != "" {
		parts = append(parts, text)
	}
	for _, b := range blocks {
		if b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	r.Content = strings.Join(parts, "\n")
	return nil
}

// compactMetadata is the part of a compact_boundary's metadata the plan
// reads: the messages Claude Code kept verbatim after the summary.
type compactMetadata struct {
	PreservedMessages *struct {
		UUIDs []string `json:"uuids"`
	} `json:"preservedMessages"`
}

// agentRef is the part of a Task result's toolUseResult naming its agent.
type agentRef struct {
	AgentID string `json:"agentId"`
}

// UnmarshalJSONFrom is what the fast decoder of input.Unmarshal calls
// (encoding/json does not know the method): a toolUseResult that is not an
// object — a failed tool's error string, a list — leaves an empty agentRef,
// as encoding/json's type error does, instead of failing the fast decode
// and decoding the whole line a second time with encoding/json
// (docs/BENCHMARKS.md, "the cold path"). decodeRecord reads past that
// type error, so the record is the same; a line with any other error
// still fails here and takes encoding/json's path, whose earliest error
// decides as before.
func (a *agentRef) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*a = agentRef{}
	if dec.PeekKind() != '{' {
		return dec.SkipValue()
	}
	return jsonv2.UnmarshalDecode(dec, (*plainAgentRef)(a), jsonv1.DefaultOptionsV1())
}

// plainAgentRef is agentRef without its decode method.
type plainAgentRef agentRef

// progressData is the part of a progress line's data the import reads.
type progressData struct {
	Type    string `json:"type"`
	AgentID string `json:"agentId"`
}

// decodeRecord decodes a line into v (a *record or *fullRecord). A data or
// toolUseResult of an unexpected shape is ignored (only a few of their
// fields are read, as hints); a message of the wrong shape is an error
// only where a message is needed, so it is noted in bad.
func decodeRecord(body []byte, v any, bad *string) error {
	if r, ok := v.(*fullRecord); ok && fastFullRecord(body, r) {
		return nil
	}
	return recordErr(input.Unmarshal(body, v), bad)
}

// decodeFirst is decodeRecord for the first pass, whose record fastRecord
// also scans; ascii says the line is all ASCII (so valid UTF-8).
func decodeFirst(body []byte, r *record) (ascii bool, err error) {
	if ok, ascii := fastRecord(body, r); ok {
		return ascii, nil
	}
	return false, decodeRecord(body, r, &r.badMessage)
}

// recordErr is decodeRecord's judgement of the decoder's error err: a
// type error in a hint is dropped, one in the message noted in bad.
func recordErr(err error, bad *string) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		// Through fullRecord the path starts with the embedded "record.".
		top, _, _ := strings.Cut(strings.TrimPrefix(te.Field, "record."), ".")
		switch top {
		case "data", "toolUseResult", "rendered", "renderedRole", "attachment", "compactMetadata", "hash", "tail":
			// Read only as hints of other record types; an attachment
			// whose rendered content cannot be read renders nothing and is
			// counted as skipped.
			return nil
		case "message":
			*bad = jsonErrorText(err)
			return nil
		}
	}
	return err
}

// message is the API message a user or assistant line carries.
type message struct {
	ID         string          `json:"id"`
	Role       string          `json:"role"`
	Model      string          `json:"model"`
	Content    json.RawMessage `json:"content"`
	Usage      json.RawMessage `json:"usage"`
	StopReason string          `json:"stop_reason"`
}

// block is one content block of a message.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      json.RawMessage `json:"data"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	// Content of a tool_result: decoded as any, so a large string is read
	// in the block's own pass instead of being validated again.
	Content any     `json:"content"`
	IsError bool    `json:"is_error"`
	Source  *source `json:"source"`
}

type source struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
	URL       string `json:"url"`
	FileID    string `json:"file_id"`
}

// scanBlock is what the first pass reads of a content block: a tool
// result's content, thinking and image data are skipped, not copied.
type scanBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
}

// decodeContent decodes a message's content: a string, or an array of
// blocks of type B.
func decodeContent[B any](raw json.RawMessage) (text string, blocks []B, isBlocks bool, err error) {
	raw = trimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return "", nil, false, nil
	case raw[0] == '"':
		s := input.NewSkim(raw)
		if text = s.Str(); s.End() {
			return text, nil, false, nil
		}
		err = input.Unmarshal(raw, &text)
		return text, nil, false, err
	case raw[0] == '[':
		if bp, ok := any(&blocks).(*[]block); ok {
			if bl, ok := fastBlocks(raw); ok {
				*bp = bl
				return "", blocks, true, nil
			}
		}
		err = input.Unmarshal(raw, &blocks)
		return "", blocks, true, err
	}
	return "", nil, false, fmt.Errorf("message.content: expected a string or an array of blocks")
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// promptKey is a short key for matching a sidechain's first prompt with
// the Task call that sent it.
func promptKey(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(s))
	return string(sum[:16])
}

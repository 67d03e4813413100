package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// The decoder before it went through members instead of maps (kept here
// as the reference FuzzNodeDecode holds the current one to): same
// accepted lines, same errors, same nodes.

type refBlock struct {
	Type, Text, Signature, Source, MediaType, ID, Name string
	Arguments                                          json.RawMessage
	ToolCallID                                         string
	IsError                                            bool
	Extra                                              map[string]json.RawMessage
}

type refContent struct {
	Text     string
	Blocks   []refBlock
	IsBlocks bool
}

type refToolCall struct {
	ID, Name  string
	Arguments json.RawMessage
	Extra     map[string]json.RawMessage
}

type refUsage struct {
	InputTokens, OutputTokens, CachedInputTokens int64
	Extra                                        map[string]json.RawMessage
}

type refNode struct {
	ID, Predecessor string
	Role            Role
	Content         refContent
	ToolCalls       []refToolCall
	ToolCallID      string
	Name            string
	Caller          string
	CreatedAt       string
	Usage           *refUsage
	Metadata        map[string]json.RawMessage
	Extra           map[string]json.RawMessage
}

func (b *refBlock) UnmarshalJSON(data []byte) error {
	m, err := decodeObject(data)
	if err != nil {
		return fmt.Errorf("content block: expected an object: %w", err)
	}
	*b = refBlock{}
	fields := []struct {
		key string
		dst *string
	}{{"type", &b.Type}, {"text", &b.Text}, {"signature", &b.Signature}, {"source", &b.Source},
		{"media_type", &b.MediaType}, {"id", &b.ID}, {"name", &b.Name}, {"tool_call_id", &b.ToolCallID}}
	for _, f := range fields {
		if err := refTakeString(m, f.key, f.dst); err != nil {
			return fmt.Errorf("content block: %w", err)
		}
	}
	if raw, ok := m["arguments"]; ok {
		b.Arguments = append(json.RawMessage(nil), raw...)
	}
	if raw, ok := m["is_error"]; ok {
		if err := json.Unmarshal(raw, &b.IsError); err != nil {
			return fmt.Errorf("content block: is_error: expected a boolean")
		}
	}
	if b.Type == "" {
		return fmt.Errorf("content block: missing \"type\"")
	}
	b.Extra = refLeftovers(m, blockKnown)
	return nil
}
func (c *refContent) UnmarshalJSON(data []byte) error {
	*c = refContent{}
	data = bytes.TrimSpace(data)
	switch {
	case len(data) == 0 || bytes.Equal(data, []byte("null")):
		return nil
	case data[0] == '"':
		return unmarshalString(data, &c.Text)
	case data[0] == '[':
		c.IsBlocks = true
		return json.Unmarshal(data, &c.Blocks)
	}
	return fmt.Errorf("content: expected a string or an array of blocks")
}
func (tc *refToolCall) UnmarshalJSON(data []byte) error {
	m, err := decodeObject(data)
	if err != nil {
		return fmt.Errorf("tool call: expected an object")
	}
	*tc = refToolCall{}
	if err := refTakeString(m, "id", &tc.ID); err != nil {
		return fmt.Errorf("tool call: %w", err)
	}
	if err := refTakeString(m, "name", &tc.Name); err != nil {
		return fmt.Errorf("tool call: %w", err)
	}
	if raw, ok := m["arguments"]; ok && string(raw) != "null" {
		tc.Arguments = append(json.RawMessage(nil), raw...)
	}
	tc.Extra = refLeftovers(m, []string{"id", "name", "arguments"})
	return nil
}
func (u *refUsage) UnmarshalJSON(data []byte) error {
	m, err := decodeObject(data)
	if err != nil {
		return fmt.Errorf("usage: expected an object")
	}
	*u = refUsage{}
	for _, f := range [...]struct {
		key string
		dst *int64
	}{{"input_tokens", &u.InputTokens}, {"output_tokens", &u.OutputTokens}, {"cached_input_tokens", &u.CachedInputTokens}} {
		raw, ok := m[f.key]
		if !ok || string(raw) == "null" {
			continue
		}
		// Plain digits (the common case) without a second JSON parse.
		if v, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			*f.dst = v
			continue
		}
		if err := json.Unmarshal(raw, f.dst); err != nil {
			return fmt.Errorf("usage: %s: expected an integer", f.key)
		}
	}
	u.Extra = refLeftovers(m, []string{"input_tokens", "output_tokens", "cached_input_tokens"})
	return nil
}
func (n *refNode) UnmarshalJSON(data []byte) error {
	if string(bytes.TrimSpace(data)) == "null" {
		// As Node: a null line is no node (issue 18's message).
		return errors.New("expected a JSON object, got null")
	}
	m, err := decodeObject(data)
	if err != nil {
		return fmt.Errorf("%s", jsonErrorText(err))
	}
	*n = refNode{}
	// A missing id is allowed here (a batch to append may leave ids to be
	// generated); the session index requires one.
	if rawID, ok := m["id"]; ok {
		if err := unmarshalString(rawID, &n.ID); err != nil || n.ID == "" {
			return fmt.Errorf("\"id\" must be a non-empty string")
		}
	}
	if raw, ok := m["predecessor"]; ok && string(raw) != "null" {
		if err := unmarshalString(raw, &n.Predecessor); err != nil || n.Predecessor == "" {
			return fmt.Errorf("node %q: \"predecessor\" must be a non-empty string or null", n.ID)
		}
	}
	var role string
	if err := refTakeString(m, "role", &role); err != nil {
		return fmt.Errorf("node %q: %w", n.ID, err)
	}
	n.Role = Role(role)
	if !n.Role.Valid() {
		return fmt.Errorf("node %q: \"role\" must be system, user, assistant or tool, got %q", n.ID, role)
	}
	if raw, ok := m["content"]; ok {
		if err := n.Content.UnmarshalJSON(raw); err != nil {
			return fmt.Errorf("node %q: %w", n.ID, err)
		}
	}
	if raw, ok := m["tool_calls"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &n.ToolCalls); err != nil {
			return fmt.Errorf("node %q: \"tool_calls\" must be an array of {id, name, arguments}", n.ID)
		}
	}
	for _, f := range [...]struct {
		key string
		dst *string
	}{{"tool_call_id", &n.ToolCallID}, {"name", &n.Name}, {"caller", &n.Caller}, {"created_at", &n.CreatedAt}} {
		if err := refTakeString(m, f.key, f.dst); err != nil {
			return fmt.Errorf("node %q: %w", n.ID, err)
		}
	}
	if raw, ok := m["usage"]; ok && string(raw) != "null" {
		n.Usage = new(refUsage)
		if err := n.Usage.UnmarshalJSON(raw); err != nil {
			return fmt.Errorf("node %q: %w", n.ID, err)
		}
	}
	if raw, ok := m["metadata"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &n.Metadata); err != nil {
			return fmt.Errorf("node %q: \"metadata\" must be an object", n.ID)
		}
	}
	n.Extra = refLeftovers(m, nodeKnown)
	return nil
}
func refTakeString(m map[string]json.RawMessage, key string, dst *string) error {
	raw, ok := m[key]
	if !ok || string(raw) == "null" {
		return nil
	}
	if err := unmarshalString(raw, dst); err != nil {
		return fmt.Errorf("%q must be a string", key)
	}
	return nil
}
func refLeftovers(m map[string]json.RawMessage, known []string) map[string]json.RawMessage {
	for _, k := range known {
		delete(m, k)
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

func FuzzNodeDecode(f *testing.F) {
	for _, s := range nodeSeedLines() {
		f.Add([]byte(s))
	}
	for _, s := range []string{
		`{"id":"a","role":"user","content":[null]}`, `{"id":"a","role":"user","tool_calls":[null,{"id":"x"}]}`,
		`{"id":"a","role":"user","content":[{"type":"text","type":"image","k":1,"k":2}]}`,
		`{"id":"a","role":"user","tool_calls":{}}`, `{"id":"a","role":"user","content":[ ]}`,
		`{"id":"a","\u0069d":"b","role":"user"}`, `{"id":"a","role":"user","usage":{"input_tokens":1e2}}`,
		`{"id":"a","role":"user","metadata":[1]}`, `{"id":"a","role":"user","metadata":{"k":1,"k":[ 2 ],"\u006b2":"\u00e9","e":{}}}`,
		`{"id":"a","role":"user","metadata":{}}`, `{"id":"a","role":"user","metadata":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var got Node
		var want refNode
		gotErr, wantErr := got.UnmarshalJSON(line), want.UnmarshalJSON(line)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("%q: error %v, reference %v", line, gotErr, wantErr)
		}
		if gotErr != nil {
			return
		}
		// Compare through JSON of both (same field names and order).
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(toNode(want))
		if !bytes.Equal(a, b) || !reflect.DeepEqual(got, toNode(want)) {
			t.Fatalf("%q:\n got %s\nwant %s\n%#v\n%#v", line, a, b, got, toNode(want))
		}
	})
}

func toNode(r refNode) Node {
	n := Node{ID: r.ID, Predecessor: r.Predecessor, Role: r.Role, ToolCallID: r.ToolCallID, Name: r.Name,
		Caller: r.Caller, CreatedAt: r.CreatedAt, Metadata: r.Metadata, Extra: r.Extra}
	n.Content = Content{Text: r.Content.Text, IsBlocks: r.Content.IsBlocks}
	if r.Content.Blocks != nil {
		n.Content.Blocks = []Block{}
	}
	for _, b := range r.Content.Blocks {
		n.Content.Blocks = append(n.Content.Blocks, Block(b))
	}
	if r.ToolCalls != nil {
		n.ToolCalls = []ToolCall{}
	}
	for _, c := range r.ToolCalls {
		n.ToolCalls = append(n.ToolCalls, ToolCall(c))
	}
	if r.Usage != nil {
		n.Usage = &Usage{InputTokens: r.Usage.InputTokens, OutputTokens: r.Usage.OutputTokens,
			CachedInputTokens: r.Usage.CachedInputTokens, Extra: r.Usage.Extra}
	}
	return n
}

// nodeSeedLines are the fixtures' node lines, the fuzz seeds (the same
// seeds as the index's FuzzIndexRef, which lives with the store).
func nodeSeedLines() []string {
	var out []string
	files, _ := filepath.Glob("../fixtures/*/nodes.jsonl")
	for _, f := range files {
		data, _ := os.ReadFile(f)
		for _, l := range strings.Split(string(data), "\n") {
			if l != "" && len(out) < 200 {
				out = append(out, l)
			}
		}
	}
	return out
}

// Command normalize copies one recorded Qwen Code scenario (the chat
// recordings under ROOT/home/.qwen/projects/*/chats and the fake
// provider's request files under ROOT/req) into the fixture directory OUT,
// replacing what changes from run to run — the temporary root, UUIDs,
// timestamps, dates, durations — by stable values, and shrinking what the
// transcript never holds: the system prompt, the tool definitions and the
// <system-reminder> parts the client adds to user messages are kept as
// their size. The rules are listed in docs/INTEROP-qwen.md;
// each is applied to the transcript and the requests alike.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

func main() {
	root := flag.String("root", "", "the scenario's temporary root")
	out := flag.String("out", "", "the fixture directory to write")
	flag.Parse()
	if err := run(*root, *out); err != nil {
		fmt.Fprintln(os.Stderr, "normalize:", err)
		os.Exit(1)
	}
}

var (
	uuidRE  = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	stampRE = regexp.MustCompile(`20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
	dateRE  = regexp.MustCompile(`(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), [A-Z][a-z]+ \d{1,2}, 20\d\d`)
	msRE    = regexp.MustCompile(`"(duration_ms|ttft_ms)":\d+`)
	portRE  = regexp.MustCompile(`http://127\.0\.0\.1:\d+`)
)

// normalizer maps every UUID and timestamp to a stable value, in order of
// first appearance across the transcripts and then the requests.
type normalizer struct {
	root   string
	uuids  map[string]string
	stamps map[string]string
}

func (n *normalizer) apply(b []byte) []byte {
	b = bytes.ReplaceAll(b, []byte(n.root), []byte("/qwen-fixture"))
	b = uuidRE.ReplaceAllFunc(b, func(u []byte) []byte {
		s, ok := n.uuids[string(u)]
		if !ok {
			s = fmt.Sprintf("00000000-0000-4000-8000-%012d", len(n.uuids)+1)
			n.uuids[string(u)] = s
		}
		return []byte(s)
	})
	b = stampRE.ReplaceAllFunc(b, func(t []byte) []byte {
		// The same instant stays the same (a fork copies its records'
		// timestamps).
		s, ok := n.stamps[string(t)]
		if !ok {
			k := len(n.stamps) + 1
			s = fmt.Sprintf("2026-01-01T%02d:%02d:%02d.000Z", k/3600%24, k/60%60, k%60)
			n.stamps[string(t)] = s
		}
		return []byte(s)
	})
	b = dateRE.ReplaceAll(b, []byte("Thursday, January 1, 2026"))
	b = portRE.ReplaceAll(b, []byte("http://127.0.0.1:0"))
	return msRE.ReplaceAll(b, []byte(`"$1":1`))
}

func run(root, out string) error {
	if root == "" || out == "" {
		return fmt.Errorf("-root and -out are required")
	}
	n := &normalizer{root: root, uuids: map[string]string{}, stamps: map[string]string{}}
	chats, _ := filepath.Glob(filepath.Join(root, "home", ".qwen", "projects", "*", "chats", "*.jsonl"))
	if len(chats) == 0 {
		return fmt.Errorf("%s: no chat recording", root)
	}
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(out, "chats"), 0o755); err != nil {
		return err
	}
	sort.Strings(chats)
	for _, c := range chats {
		data, err := os.ReadFile(c)
		if err != nil {
			return err
		}
		name := n.apply([]byte(filepath.Base(c)))
		if err := os.WriteFile(filepath.Join(out, "chats", string(name)), n.apply(data), 0o644); err != nil {
			return err
		}
	}
	// Sub-agent transcripts and their metadata, under subagents/<session id>/.
	subs, _ := filepath.Glob(filepath.Join(root, "home", ".qwen", "projects", "*", "subagents", "*", "agent-*"))
	sort.Strings(subs)
	for _, p := range subs {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel := n.apply([]byte(filepath.Join("subagents", filepath.Base(filepath.Dir(p)), filepath.Base(p))))
		if err := os.MkdirAll(filepath.Join(out, filepath.Dir(string(rel))), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, string(rel)), n.apply(data), 0o644); err != nil {
			return err
		}
	}
	reqs, _ := filepath.Glob(filepath.Join(root, "req", "request-*.json"))
	sort.Strings(reqs)
	var buf bytes.Buffer
	for i, p := range reqs {
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var whole map[string]any
		if err := json.Unmarshal(data, &whole); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		body, err := shrink(data)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		line, _ := json.Marshal(map[string]any{"seq": i + 1, "kind": kind(whole), "body": body})
		buf.Write(n.apply(line))
		buf.WriteByte('\n')
	}
	return os.WriteFile(filepath.Join(out, "requests.jsonl"), buf.Bytes(), 0o644)
}

// compressionCue ends Qwen Code's summarizer request
// (internal/fake/openai.QwenCompressionCue).
const compressionCue = "produce the <state_snapshot> XML"

// kind names a request: the client's compression summarizer, a
// sub-agent's turn (its system prompt is not the session's "You are Qwen
// Code…"), or a turn of the conversation.
func kind(body map[string]any) string {
	var raw bytes.Buffer
	enc := json.NewEncoder(&raw)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(body["messages"])
	if bytes.Contains(raw.Bytes(), []byte(compressionCue)) {
		return "compression"
	}
	if msgs, _ := body["messages"].([]any); len(msgs) > 0 {
		if m, _ := msgs[0].(map[string]any); m["role"] == "system" {
			if s, _ := m["content"].(string); !strings.HasPrefix(s, "You are Qwen Code") {
				return "subagent"
			}
		}
	}
	return "turn"
}

// shrink is a request body with the system prompt, the tool definitions
// and every <system-reminder> text part replaced by their size.
func shrink(data []byte) (map[string]any, error) {
	var body map[string]any
	if err := json.Unmarshal(data, &body); err != nil {
		return nil, err
	}
	if tools, ok := body["tools"].([]any); ok {
		raw, _ := json.Marshal(tools)
		var names []string
		for _, t := range tools {
			if f, ok := t.(map[string]any)["function"].(map[string]any); ok {
				names = append(names, fmt.Sprint(f["name"]))
			}
		}
		body["tools"] = map[string]any{"names": names, "bytes": len(raw)}
	}
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		msg, _ := m.(map[string]any)
		if msg["role"] == "system" {
			if s, ok := msg["content"].(string); ok {
				msg["content"] = elided("system prompt", s)
			}
			continue
		}
		parts, _ := msg["content"].([]any)
		for _, p := range parts {
			part, _ := p.(map[string]any)
			if s, ok := part["text"].(string); ok && strings.HasPrefix(s, "<system-reminder>") {
				part["text"] = "<system-reminder>" + elided("", s)
			}
		}
	}
	return body, nil
}

// elided stands for a text the transcript never holds; its size varies
// with the temporary paths and the date, so it is approximate.
func elided(what, s string) string {
	return fmt.Sprintf("%s[elided: about %d bytes]", what, len(s))
}

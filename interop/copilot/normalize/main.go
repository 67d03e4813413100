// Command normalize copies one recorded GitHub Copilot CLI scenario (the
// session's ROOT/home/.copilot/session-state/<id>/events.jsonl and the fake
// provider's ROOT/requests) into the fixture directory OUT, replacing what
// changes from run to run — the temporary root, UUIDs, timestamps — by
// stable values, the same way in the events and the requests, so the
// oracle test compares like with like (docs/INTEROP-copilot.md). The
// requests become one requests.jsonl; their tool definitions and system
// prompts, tens of KB repeated in every request, are stored once each
// under BLOBS (named by their SHA-256) and referenced as {"$blob": name}.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
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
	blobs := flag.String("blobs", "", "the directory of shared blobs")
	flag.Parse()
	if err := run(*root, *out, *blobs); err != nil {
		fmt.Fprintln(os.Stderr, "normalize:", err)
		os.Exit(1)
	}
}

var (
	uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	timeRE = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
	// pidRE is a log file named after the client's process.
	pidRE = regexp.MustCompile(`process-\d+-\d+\.log`)
)

type normalizer struct {
	root  string
	ids   map[string]string
	times map[string]string
}

// apply rewrites one file's text: the root, each UUID by a stable one in
// order of first appearance (and its 8-digit short form after it), each
// timestamp by a stable one, in order, keeping its form.
func (n *normalizer) apply(s string) string {
	s = strings.ReplaceAll(s, n.root, "/tmp/copilot-interop")
	s = uuidRE.ReplaceAllStringFunc(s, func(u string) string {
		if v, ok := n.ids[u]; ok {
			return v
		}
		v := fmt.Sprintf("00000000-0000-4000-8000-%012d", len(n.ids)+1)
		n.ids[u] = v
		return v
	})
	for u, v := range n.ids {
		s = strings.ReplaceAll(s, "session-"+u[:8], "session-"+v[:8])
	}
	s = timeRE.ReplaceAllStringFunc(s, func(t string) string {
		key := t[:19]
		v, ok := n.times[key]
		if !ok {
			k := len(n.times)
			v = fmt.Sprintf("2026-01-01T%02d:%02d:%02d", k/3600%24, k/60%60, k%60)
			n.times[key] = v
		}
		return v + t[19:]
	})
	return pidRE.ReplaceAllString(s, "process-1-1.log")
}

func run(root, out, blobs string) error {
	events, err := filepath.Glob(filepath.Join(root, "home", ".copilot", "session-state", "*", "events.jsonl"))
	if err != nil || len(events) != 1 {
		return fmt.Errorf("want one session under %s, found %d", root, len(events))
	}
	n := &normalizer{root: root, ids: map[string]string{}, times: map[string]string{}}
	data, err := os.ReadFile(events[0])
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(blobs, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "events.jsonl"), []byte(n.apply(string(data))), 0o644); err != nil {
		return err
	}
	// The fake OpenAI provider names them request-NNN.json, the fake
	// Anthropic one NNNN-messages.json.
	reqs, _ := filepath.Glob(filepath.Join(root, "requests", "request-*.json"))
	path := "/chat/completions"
	if len(reqs) == 0 {
		reqs, _ = filepath.Glob(filepath.Join(root, "requests", "*-messages.json"))
		path = "/v1/messages"
	}
	sort.Strings(reqs)
	var buf bytes.Buffer
	for i, p := range reqs {
		body, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		line, err := request(i+1, path, []byte(n.apply(string(body))), blobs)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return os.WriteFile(filepath.Join(out, "requests.jsonl"), buf.Bytes(), 0o644)
}

// request is one requests.jsonl line: {seq, path, body}, the body's tools
// and system prompt (an Anthropic body's system, a Chat Completions
// system message's content) moved to blobs.
func request(seq int, path string, body []byte, blobs string) ([]byte, error) {
	var b map[string]json.RawMessage
	if err := json.Unmarshal(body, &b); err != nil {
		return nil, err
	}
	for _, key := range []string{"tools", "system"} {
		if v, ok := b[key]; ok {
			ref, err := blob(blobs, v)
			if err != nil {
				return nil, err
			}
			b[key] = ref
		}
	}
	if v, ok := b["instructions"]; ok { // the Responses API's system prompt
		ref, err := blob(blobs, v)
		if err != nil {
			return nil, err
		}
		b["instructions"] = ref
	}
	if _, ok := b["messages"]; !ok {
		raw, _ := json.Marshal(b)
		return json.Marshal(map[string]any{"seq": seq, "path": "/responses", "body": json.RawMessage(raw)})
	}
	var msgs []map[string]json.RawMessage
	if err := json.Unmarshal(b["messages"], &msgs); err != nil {
		return nil, err
	}
	for _, m := range msgs {
		if string(m["role"]) == `"system"` {
			ref, err := blob(blobs, m["content"])
			if err != nil {
				return nil, err
			}
			m["content"] = ref
		}
	}
	b["messages"], _ = json.Marshal(msgs)
	raw, _ := json.Marshal(b)
	return json.Marshal(map[string]any{"seq": seq, "path": path, "body": json.RawMessage(raw)})
}

func blob(dir string, v json.RawMessage) (json.RawMessage, error) {
	var c bytes.Buffer
	if err := json.Compact(&c, v); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(c.Bytes())
	name := hex.EncodeToString(sum[:8]) + ".json"
	if err := os.WriteFile(filepath.Join(dir, name), append(c.Bytes(), '\n'), 0o644); err != nil {
		return nil, err
	}
	return json.Marshal(map[string]string{"$blob": name})
}

package claudecode

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/ctxfold/ctxfold/format/input"
)

// A sub-agent's kind: what its first request carries beside its
// transcript — the agent type's system prompt and tools, with the user's
// own additions — depends on the agent type its call named and the model
// that answers it, not on which session ran it (docs/ACCURACY.md, "The
// project's own sessions"). Claude Code 2.1.2xx and later write the call's
// choice beside the file (agent-<id>.meta.json: "agentType", "model" when
// the call chose one, "isFork"); older versions record it only in the
// parent session's call (the Task or Agent tool's "subagent_type" and
// "model"), whose "prompt" is the sub-agent's first message.

const (
	// maxMetaBytes bounds a .meta.json read (a few hundred bytes).
	maxMetaBytes = 64 << 10
	// maxPromptHead bounds the head of a sub-agent file read for its
	// first message.
	maxPromptHead = 4 << 20
	// forkType is the agent type of a fork, whose first request reads
	// its parent's whole context: no other file's predicts it.
	forkType = "fork"
)

// SubagentKinds tells Claude Code sub-agent files' kinds, reading each
// parent session's calls once. The zero value is ready to use; it is not
// safe for concurrent use.
type SubagentKinds struct {
	calls map[string]map[string]string // parent file → first message → kind
}

// Of is file's kind, "<agent type>/<model the call chose>" (the model
// empty when the client chose), and whether it could be told: false for a
// file that is no sub-agent's (agent-*.jsonl under a session's subagents/
// folder), for a fork and a compaction summariser (their first request
// reads the parent's context), and when neither a .meta.json nor the
// parent's call says.
func (k *SubagentKinds) Of(file string) (string, bool) {
	base := filepath.Base(file)
	if !strings.HasPrefix(base, "agent-") || !strings.HasSuffix(base, ".jsonl") || strings.HasPrefix(base, "agent-acompact") {
		return "", false
	}
	parent, ok := SubagentParent(file)
	if !ok {
		return "", false
	}
	if kind, found, ok := metaKind(file); found {
		return kind, ok
	}
	prompt, ok := firstPrompt(file)
	if !ok {
		return "", false
	}
	if k.calls == nil {
		k.calls = map[string]map[string]string{}
	}
	calls, seen := k.calls[parent]
	if !seen {
		calls = agentCalls(parent)
		k.calls[parent] = calls
	}
	kind, ok := calls[prompt]
	return kind, ok
}

// SubagentParent is the session file a sub-agent file belongs to: the
// folder above its subagents/ folder, with ".jsonl" (workflow agents sit
// deeper, under subagents/workflows/<run>/); false when file is under no
// subagents/ folder.
func SubagentParent(file string) (string, bool) {
	for dir := filepath.Dir(file); ; {
		up := filepath.Dir(dir)
		if filepath.Base(dir) == "subagents" {
			return up + ".jsonl", true
		}
		if up == dir {
			return "", false
		}
		dir = up
	}
}

// subagentMeta is the part of a sub-agent's .meta.json that names its kind.
type subagentMeta struct {
	AgentType string `json:"agentType"`
	Model     string `json:"model"`
	IsFork    bool   `json:"isFork"`
}

// readMeta reads the .meta.json beside a sub-agent file; false when it is
// missing or unreadable.
func readMeta(file string) (subagentMeta, bool) {
	var m subagentMeta
	b, err := input.ReadHead(strings.TrimSuffix(file, ".jsonl")+".meta.json", maxMetaBytes)
	return m, err == nil && json.Unmarshal(b, &m) == nil
}

// isFork says m is a fork's.
func (m subagentMeta) isFork() bool { return m.IsFork || m.AgentType == forkType }

// metaKind reads file's kind from its .meta.json: found says the file was
// there and readable, ok that it names a kind (not a fork).
func metaKind(file string) (kind string, found, ok bool) {
	m, found := readMeta(file)
	if !found || m.isFork() || m.AgentType == "" {
		return "", found, false
	}
	return m.AgentType + "/" + m.Model, true, true
}

// firstPrompt is the text of the first user record in file's head.
func firstPrompt(file string) (string, bool) {
	head, err := input.ReadHead(file, maxPromptHead)
	if err != nil {
		return "", false
	}
	for line := range bytes.Lines(head) {
		var r struct {
			Type    string `json:"type"`
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if input.Unmarshal(line, &r) != nil || r.Type != "user" {
			continue
		}
		text := strings.TrimSpace(promptText(r.Message.Content))
		return text, text != ""
	}
	return "", false
}

// promptText is a first message's text: the string, or its first text
// block.
func promptText(content json.RawMessage) string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(content, &blocks)
	for _, b := range blocks {
		if b.Type == "text" {
			return b.Text
		}
	}
	return ""
}

// agentCalls are the kinds of the sub-agents parent's calls started, by
// their first message: every tool call with a "subagent_type" input.
// Only lines that name one are decoded; an unreadable parent has none.
func agentCalls(parent string) map[string]string {
	calls := map[string]string{}
	input.EachLineWith(parent, []string{`"subagent_type"`}, func(line []byte) {
		var r struct {
			Message struct {
				Content []struct {
					Type  string `json:"type"`
					Input struct {
						Prompt       string `json:"prompt"`
						SubagentType string `json:"subagent_type"`
						Model        string `json:"model"`
					} `json:"input"`
				} `json:"content"`
			} `json:"message"`
		}
		if input.Unmarshal(line, &r) != nil {
			return
		}
		for _, c := range r.Message.Content {
			if c.Type == "tool_use" && c.Input.SubagentType != "" && c.Input.SubagentType != forkType {
				calls[strings.TrimSpace(c.Input.Prompt)] = c.Input.SubagentType + "/" + c.Input.Model
			}
		}
	})
	return calls
}
